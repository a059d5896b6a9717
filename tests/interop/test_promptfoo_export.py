"""`caseforge export promptfoo` and `export promptfoo-results`: a suite as a promptfoo config
(an export → import → export round trip keeps every expressible check; what promptfoo cannot
say is listed), and runs as promptfoo's results file, read back as promptfoo's CI reads it."""

from __future__ import annotations

import json
import shutil
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from caseforge.api import run_suite
from caseforge.case.load import load_suite
from caseforge.interop.promptfoo import PromptfooImport, import_promptfoo
from caseforge.interop.promptfoo_export import export_promptfoo
from caseforge.interop.promptfoo_results import results_file
from tests.interop.conftest import StoredRun
from tests.interop.helpers import DATA, cli

yaml = YAML(typ="safe")

CONFIG = """\
name: desk
description: Vandoria travel desk
agent: {callable: "desk_agent:run"}
trials: 2
configs:
  mini: {provider: "openai:gpt-4.1-mini", model: gpt-4.1-mini, prompt: "Q: {{question}}"}
  local: {version: v1}
"""
# Every check promptfoo can say, on the reply; then the ones it cannot.
EXPRESSIBLE = """\
id: capital
input: {question: "Capital?", prompt: "Q: Capital?"}
expect:
  equals: {mode: exact, field: reply, value: Lumenport}
  not_sorry: {mode: exact, field: reply, value: Sorry, negate: true}
  either: {mode: exact, field: reply, value: Lumenport, any_of: [Lumenport City]}
  any_case: {mode: exact, field: reply, value: lumenport, case_sensitive: false}
  shape: {mode: exact, field: reply, value: {city: Lumenport}}
  contains: {mode: must_include, field: reply, values: [Lumen]}
  both: {mode: must_include, field: reply, values: [Lumen, port]}
  a_port: {mode: must_include, field: reply, values: [Saltreach, Lumenport], match: any}
  icontains: {mode: must_include, field: reply, values: [LUMEN], case_sensitive: false}
  not_contains: {mode: must_not_include, field: reply, values: [Ostmere]}
  neither: {mode: must_not_include, field: reply, values: [Ostmere, Saltreach],
            case_sensitive: false}
  starts: {mode: regex, field: reply, value: "\\\\ALumen"}
  pattern: {mode: regex, field: reply, value: "^[A-Z][a-z]+\\\\Z"}
  no_digits: {mode: regex, field: reply, value: "[0-9]", negate: true}
  any_case_pattern: {mode: regex, field: reply, value: "lumen", case_sensitive: false}
  json: {mode: json, field: reply, find: true, schema: schemas/city.json}
  count: {mode: number, field: reply, value: 7, tolerance: 0.5}
  cost: {mode: cost, max_usd: 0.01}
  latency: {mode: latency, max_ms: 2000}
  short: {mode: javascript, field: reply, code: "output.length < 40"}
  scored: {mode: javascript, field: reply, file: asserts/len.js, function: score, threshold: 0.5}
  python: {mode: python, field: reply, code: "'port' in output"}
  by_file: {mode: python, field: reply, file: asserts/check.py}
  rubric: {mode: judge, field: reply, rubric: Names the capital}
  facts: {mode: judge, field: reply, values: [Lumenport is the capital, It is by the sea]}
  not_graded: {mode: ignore, reason: wording varies}
note: The capital
"""
NOT_EXPRESSIBLE = """\
id: refund
input: {question: "Refund?", prompt: "Q: Refund? (written by hand)"}
expect:
  category: {mode: exact, value: refund}
  flags: {mode: exact_set, field: reply, values: [a]}
  words: {mode: must_include, field: reply, values: [full], word: true}
  reply: {mode: must_include, values: [refund]}
"""
CONVERSATION = """\
id: chat
input: {}
conversation:
  max_turns: 2
  script: [{say: Hi}, {say: "Refund?"}]
expect:
  reply: {must_include: [refund]}
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    for folder in ("cases", "schemas", "asserts"):
        (root / folder).mkdir(parents=True)
    (root / "caseforge.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "cases" / "capital.yaml").write_text(EXPRESSIBLE, encoding="utf-8")
    (root / "cases" / "refund.yaml").write_text(NOT_EXPRESSIBLE, encoding="utf-8")
    (root / "cases" / "chat.yaml").write_text(CONVERSATION, encoding="utf-8")
    (root / "schemas" / "city.json").write_text('{"type": "object"}\n', encoding="utf-8")
    (root / "asserts" / "len.js").write_text(
        "module.exports.score = (output) => Math.min(1, output.length / 10);\n", encoding="utf-8"
    )
    (root / "asserts" / "check.py").write_text(
        "def get_assert(output, context):\n    return 'port' in output\n", encoding="utf-8"
    )
    return root


def body(path: Path) -> str:
    """The exported config without its header comments (they name the suite)."""
    return "".join(line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                   if not line.startswith("#"))  # fmt: skip


def checks(suite: Path, case_id: str) -> dict[str, dict[str, Any]]:
    data = yaml.load((suite / "cases" / f"{case_id}.yaml").read_text(encoding="utf-8"))
    return {k: {f: v for f, v in c.items()} for k, c in data["expect"].items()}


def test_export_import_export_keeps_every_expressible_check(suite: Path, tmp_path: Path) -> None:
    first = suite / "promptfoo" / "promptfooconfig.yaml"
    result = export_promptfoo(suite, first)
    assert result.tests == 2  # the conversation case is not a promptfoo test
    config = yaml.load(first.read_text(encoding="utf-8"))
    assert config["prompts"] == ["Q: {{question}}"]
    assert config["providers"] == ["openai:gpt-4.1-mini"]
    assert config["evaluateOptions"] == {"repeat": 2}
    capital = next(t for t in config["tests"] if t["description"] == "The capital")
    assert capital["vars"] == {"question": "Capital?"}  # the template renders the prompt
    kinds = {a.get("metric", a["type"].replace("-", "_")): a["type"] for a in capital["assert"]}
    assert kinds == {
        "equals": "equals", "not_sorry": "not-equals", "either": "javascript",
        "any_case": "javascript", "shape": "python", "contains": "contains",
        "both": "contains-all", "a_port": "contains-any", "icontains": "icontains",
        "not_contains": "not-contains", "neither": "not-icontains-any", "starts": "starts-with",
        "pattern": "regex", "no_digits": "not-regex", "any_case_pattern": "javascript",
        "json": "contains-json", "count": "javascript", "cost": "cost", "latency": "latency",
        "short": "javascript", "scored": "javascript", "python": "python", "by_file": "python",
        "rubric": "llm-rubric", "facts": "llm-rubric",
    }  # fmt: skip
    by_metric = {a.get("metric", a["type"].replace("-", "_")): a for a in capital["assert"]}
    assert by_metric["scored"]["value"] == "file://../asserts/len.js:score"
    assert by_metric["json"]["value"] == "file://../schemas/city.json"
    assert by_metric["pattern"]["value"] == "^[A-Z][a-z]+$"
    # Import it into a new suite, and export that: the same config.
    again = tmp_path / "again"
    report = import_promptfoo(PromptfooImport(first, again))
    assert all(o.mapped for o in report.assertions)
    assert report.validation.startswith("caseforge validate: valid")
    second = again / "promptfoo" / "promptfooconfig.yaml"
    export_promptfoo(again, second)
    assert body(second) == body(first)
    # And the imported suite holds the first suite's checks (ignore aside).
    before, after = checks(suite, "capital"), checks(again, "the-capital")
    for key in ("equals", "not_sorry", "contains", "both", "a_port", "icontains", "not_contains",
                "neither", "starts", "no_digits", "cost", "latency", "short", "python",
                "rubric"):  # fmt: skip
        assert after[key] == before[key], key
    assert after["scored"] == {**before["scored"], "file": "asserts/len.js"}
    assert (again / "asserts" / "len.js").read_text() == (suite / "asserts" / "len.js").read_text()
    assert after["json"]["schema"] == "schemas/city.json"
    assert "not_graded" not in after


def test_what_promptfoo_cannot_say_is_listed(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "promptfooconfig.yaml"
    done = cli("export", "promptfoo", suite, "--out", out)
    assert done.exit_code == 0, done.output
    assert "wrote" in done.output and "2 tests" in done.output
    lost = [line.strip() for line in done.output.splitlines() if line.startswith("  ")]
    assert lost == [
        "configuration local: names no promptfoo provider (`provider:`); add the provider to call",
        "cases/chat.yaml: a conversation case (a scripted or simulated user): promptfoo's tests "
        "are single-turn; not exported",
        "cases/refund.yaml: check category (exact): reads the output field 'category'; promptfoo "
        "grades the provider's output text (the reply)",
        "cases/refund.yaml: check flags (exact_set): promptfoo has no assertion for a exact_set "
        "check",
        "cases/refund.yaml: check words (must_include): normalize and word have no promptfoo "
        "equivalent",
        "cases/refund.yaml: input.prompt 'Q: Refund? (written by hand)' is not what the prompt "
        "template renders from the case's vars; promptfoo sends the template's rendering",
    ]
    header = out.read_text(encoding="utf-8").split("\ndescription:")[0]
    assert "cases/refund.yaml: check flags (exact_set)" in header
    assert "\\d" not in header  # no regex of this suite reads Unicode classes


def test_a_promptfoo_config_survives_import_export_import(tmp_path: Path) -> None:
    travel = tmp_path / "travel"
    shutil.copytree(DATA / "promptfoo" / "travel", travel)
    import_promptfoo(PromptfooImport(travel, tmp_path / "one"))
    first = tmp_path / "one" / "out" / "promptfooconfig.yaml"
    export_promptfoo(tmp_path / "one", first)
    config = yaml.load(first.read_text(encoding="utf-8"))
    capital = next(t for t in config["tests"] if t["description"] == "Capital city")
    types = [a["type"] for a in capital["assert"]]
    assert types == ["cost", "icontains", "similar", "javascript", "python"]  # similar restored
    port = next(t for t in config["tests"] if t["description"] == "name-one-port")
    assert port["threshold"] == 0.6
    import_promptfoo(PromptfooImport(first, tmp_path / "two"))
    second = tmp_path / "two" / "out" / "promptfooconfig.yaml"
    export_promptfoo(tmp_path / "two", second)
    assert body(second) == body(first)


def test_results_read_back_as_promptfoos_ci_reads_them(
    stored_run: StoredRun, tmp_path: Path
) -> None:
    out = tmp_path / "results.json"
    done = cli("export", "promptfoo-results", stored_run.run_id, "--store", stored_run.store,
               "--out", out)  # fmt: skip
    assert done.exit_code == 0, done.output
    data = json.loads(out.read_text(encoding="utf-8"))
    summary = stored_run.report.summary
    stats = data["results"]["stats"]
    # What promptfoo's GitHub Action reads: results.stats and shareableUrl.
    assert data["results"]["version"] == 3
    assert data["shareableUrl"] is None
    assert stats["successes"] == summary.passed
    assert stats["failures"] + stats["errors"] == summary.case_trials - summary.passed
    assert stats["errors"] == summary.errors
    assert f"{stats['successes']} successes" in done.output
    # One result per case × repeat; the Action groups repeats by testCase, promptIdx and
    # provider.id (its thresholds.ts): each group is one case, with its trials.
    results = data["results"]["results"]
    assert len(results) == summary.case_trials
    groups: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for result in results:
        assert isinstance(result["success"], bool) and isinstance(result["promptIdx"], int)
        key = json.dumps([result["testCase"], result["promptIdx"], result["provider"]["id"]],
                         sort_keys=True)  # fmt: skip
        groups[key] += 1
        passed[key] += result["success"]
    assert sorted(groups.values()) == [2] * len(stored_run.report.cases)
    by_case = {json.loads(k)[0]["description"]: passed[k] for k in groups}
    assert by_case == {c.id: c.passed for c in stored_run.report.cases}
    crash = next(r for r in results if r["testCase"]["description"] == "crash")
    assert crash["failureReason"] == 2 and "timetable service is down" in crash["error"]
    assert "\n" not in crash["error"] and "Traceback" not in crash["error"]  # a message
    first = next(r for r in results if r["testCase"]["description"] == "route-r12")
    assert first["provider"] == {"id": "caseforge:v1", "label": "v1"}
    assert first["response"]["output"] == "Route R-12 leaves Lumenport at 08:15."
    assert first["gradingResult"]["pass"] is True
    components = first["gradingResult"]["componentResults"]
    assert {c["assertion"]["metric"] for c in components} >= {"intent", "tool_calls"}
    assert first["latencyMs"] >= 0 and first["cost"] == pytest.approx(0.002)
    assert data["results"]["prompts"][0]["metrics"]["testPassCount"] == stats["successes"]


AGENT = """
def run(input, ctx):
    model = ctx.config["model"]
    reply = "Lumenport" if model == "gpt-4.1-mini" else "I am not sure"
    return {"reply": reply, "usage": {"input_tokens": 5, "output_tokens": 2, "cost_usd": 0.001}}
"""


def test_runs_of_an_imported_suite_are_columns_by_provider(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(textwrap.dedent("""\
        prompts: ["Capital of {{country}}?"]
        providers: [openai:gpt-4.1-mini, {id: "openai:gpt-4o", label: big}]
        tests:
          - description: Vandoria's capital
            vars: {country: Vandoria}
            assert: [{type: icontains, value: lumenport}]
          - vars: {country: Ostland}
            assert: [{type: contains, value: Lumenport}, {type: cost, threshold: 0.01}]
    """), encoding="utf-8")  # fmt: skip
    suite = tmp_path / "suite"
    import_promptfoo(PromptfooImport(config, suite))
    (suite / "fake_agent.py").write_text(AGENT, encoding="utf-8")
    store = f"sqlite:///{tmp_path / 'store.db'}"
    reports = run_suite(suite, store=store, agent="fake_agent:run", trials=2, judge=False,
                        configs=["openai-gpt-4-1-mini", "big"], max_error_rate=1.0)  # fmt: skip
    data = results_file(reports)
    results = data["results"]["results"]  # type: ignore[index]
    assert {(r["promptIdx"], r["provider"]["id"]) for r in results} == {
        (0, "openai:gpt-4.1-mini"), (1, "openai:gpt-4o")
    }  # fmt: skip
    prompts = data["results"]["prompts"]  # type: ignore[index]
    assert [p["raw"] for p in prompts] == ["Capital of {{country}}?"] * 2
    # Each result's prompt is the one sent, rendered, as promptfoo records it.
    sent = {r["prompt"]["raw"] for r in results}
    assert sent == {"Capital of Vandoria?", "Capital of Ostland?"}
    assert {r["promptId"] for r in results if r["promptIdx"] == 0} == {
        r["promptId"] for r in results if r["promptIdx"] == 0 and "Ostland" in r["prompt"]["raw"]
    }  # one id per prompt template, as the prompts table has
    assert [p["provider"] for p in prompts] == ["openai:gpt-4.1-mini", "openai:gpt-4o"]
    assert [p["metrics"]["testPassCount"] for p in prompts] == [4, 0]
    assert data["results"]["stats"]["successes"] == 4  # type: ignore[index]
    assert data["results"]["stats"]["failures"] == 4  # type: ignore[index]
    assert data["config"]["providers"] == ["openai:gpt-4.1-mini", "openai:gpt-4o"]  # type: ignore[index]
    loaded = load_suite(suite)
    assert {c.case.id for c in loaded.cases} == {r["testCase"]["description"] for r in results}
    # From the store, each result's testCase is the exported config's test: its description
    # and vars (no rendered prompt), so the two files join.
    out = tmp_path / "results.json"
    runs = [r.run_id for r in reports]
    assert cli("export", "promptfoo-results", *runs, "--store", store, "--out", out).exit_code == 0
    exported = tmp_path / "back.yaml"
    assert cli("export", "promptfoo", suite, "--out", exported).exit_code == 0
    tests = YAML(typ="safe").load(exported.read_text(encoding="utf-8"))["tests"]
    wanted = {json.dumps([t["description"], t["vars"]]) for t in tests}
    written = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    assert {
        json.dumps([r["testCase"]["description"], r["testCase"]["vars"]]) for r in written
    } == wanted
    assert "Vandoria's capital" in {t["description"] for t in tests}


def test_trace_assertions_go_out_as_they_came_in(tmp_path: Path) -> None:
    source = tmp_path / "traced"
    source.mkdir()
    asserts = [
        {"type": "trace-span-count", "value": {"pattern": "retrieve_*", "min": 3, "max": 3}},
        {"type": "trace-span-duration", "value": {"pattern": "*", "max": 2000, "percentile": 95}},
        {"type": "trace-error-spans", "value": {"max_count": 0, "pattern": "*"}},
    ]
    config = {
        "providers": ["python:provider.py"],
        "prompts": ["Explain {{topic}}"],
        "tests": [{"description": "rag", "vars": {"topic": "tides"}, "assert": asserts}],
    }
    (source / "promptfooconfig.yaml").write_text(json.dumps(config), encoding="utf-8")
    report = import_promptfoo(PromptfooImport(source, tmp_path / "suite"))
    assert all(o.mapped for o in report.assertions)
    assert any("trace assertions became `spans` checks" in note for note in report.notes)
    out = tmp_path / "back.yaml"
    export_promptfoo(tmp_path / "suite", out)
    [test] = yaml.load(out.read_text(encoding="utf-8"))["tests"]
    assert [{k: v for k, v in a.items() if k != "metric"} for a in test["assert"]] == asserts


def test_a_suite_without_prompts_is_exported_with_its_one_field_or_says_what_is_missing(
    tmp_path: Path,
) -> None:
    table = tmp_path / "faq.csv"
    table.write_text("q,lang,a\nOpen late?,en,8pm\nGift cards?,en,yes\n", encoding="utf-8")
    one = tmp_path / "one"
    assert cli("import", "table", table, "--out", one, "--map", "input.q=q",
               "--expect", "reply=must_include:a").exit_code == 0  # fmt: skip
    done = export_promptfoo(one, tmp_path / "one.yaml")
    config = YAML(typ="safe").load((tmp_path / "one.yaml").read_text(encoding="utf-8"))
    assert config["prompts"] == ["{{q}}"]
    assert not any("input.prompt" in line for line in done.lost)
    assert any("the one input field of every case" in n for n in done.notes)
    assert {t["vars"]["q"] for t in config["tests"]} == {"Open late?", "Gift cards?"}
    two = tmp_path / "two"
    argv = ["--map", "input.q=q", "--map", "input.lang=lang", "--expect", "reply=must_include:a"]
    assert cli("import", "table", table, "--out", two, *argv).exit_code == 0
    done = export_promptfoo(two, tmp_path / "two.yaml")
    (line,) = [line for line in done.lost if "input.prompt" in line]
    assert line.startswith("2 case(s) (") and "promptfoo would send them an empty prompt" in line


def test_an_assertions_weight_is_kept_and_written_back(tmp_path: Path) -> None:
    """promptfoo scores a test with a threshold by its assertions' weights: an import keeps
    them in provenance, an export writes them back beside the threshold."""
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(textwrap.dedent("""\
        prompts: ["Q {{q}}"]
        providers: [openai:gpt-4o-mini]
        tests:
          - description: Opening hours
            vars: {q: hours}
            threshold: 0.7
            assert:
              - {type: contains, value: "9", weight: 2}
              - {type: icontains, value: open}
              - {type: contains, value: am, weight: 0.5}
    """), encoding="utf-8")  # fmt: skip
    suite = tmp_path / "suite"
    import_promptfoo(PromptfooImport(config, suite))
    export_promptfoo(suite, tmp_path / "back.yaml")
    (test,) = YAML(typ="safe").load((tmp_path / "back.yaml").read_text(encoding="utf-8"))["tests"]
    assert test["threshold"] == 0.7
    assert [(a["value"], a.get("weight")) for a in test["assert"]] == [
        ("9", 2), ("open", None), ("am", 0.5)
    ]  # fmt: skip
