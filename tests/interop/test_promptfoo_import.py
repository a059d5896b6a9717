"""`caseforge import promptfoo`: a fictional promptfoo config (tests/interop/data/promptfoo/
travel/: inline tests, a YAML glob, CSV with promptfoo's `__` columns, JSONL, sources it
cannot read) as a suite, the report that drops nothing, re-imports, and the one-line errors."""

from __future__ import annotations

import asyncio
import shutil
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ruamel.yaml import YAML

from caseforge.errors import DatasetError, UsageError
from caseforge.interop import promptfoo_agent
from caseforge.interop.promptfoo import PromptfooImport, PromptfooReport, import_promptfoo
from caseforge.interop.promptfoo_export import export_promptfoo
from caseforge.interop.report import ItemStatus
from tests.interop.helpers import DATA, cli, files_of

TRAVEL = DATA / "promptfoo" / "travel"
yaml = YAML(typ="safe")


def read(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"))


def case(suite: Path, case_id: str) -> dict[str, Any]:
    data = read(suite / "cases" / f"{case_id}.yaml")
    assert isinstance(data, dict)
    return data


@pytest.fixture
def travel(tmp_path: Path) -> Path:
    """A copy of the travel config (a test may change it)."""
    shutil.copytree(TRAVEL, tmp_path / "travel")
    return tmp_path / "travel"


def block_of(lines: list[str], where: str) -> str:
    """An item's lines in the printed report: its own, and those indented under it."""
    start = next(n for n, line in enumerate(lines) if line.startswith(f"  {where} "))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("    "):
            break
        block.append(line)
    return "\n".join(block)


def imported(config: Path, suite: Path, dry_run: bool = False) -> PromptfooReport:
    return import_promptfoo(PromptfooImport(config, suite), dry_run)


def test_providers_become_configurations_with_an_agent_stub(travel: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    report = imported(travel, suite)
    config = read(suite / "caseforge.yaml")
    assert config["agent"] == {"callable": "promptfoo_agent:run"}
    assert config["description"] == "Vandoria travel desk"
    assert config["trials"] == 2  # evaluateOptions.repeat
    template = "You are the Vandoria travel desk. Tone: {{tone}}. Question: {{question}}"
    assert config["configs"] == {
        "openai-gpt-4-1-mini": {"provider": "openai:gpt-4.1-mini", "model": "gpt-4.1-mini",
                                "prompt": template},
        "haiku": {"provider": "anthropic:messages:claude-3-5-haiku-latest", "label": "haiku",
                  "model": "claude-3-5-haiku-latest",
                  "options": {"temperature": 0.2, "max_tokens": 300,
                              "headers": {"X-Trace": "on"}},
                  "prompt": template},
        "python-provider-py": {"provider": "python:provider.py", "prompt": template},
    }  # fmt: skip
    written = (suite / "caseforge.yaml").read_text(encoding="utf-8")
    assert "fictional-key-123" not in written and "fictional-456" not in written
    assert (suite / "promptfoo_agent.py").read_text(encoding="utf-8") == Path(
        promptfoo_agent.__file__
    ).read_text(encoding="utf-8")
    lines = "\n".join(report.lines())
    assert "provider config keys left out (secrets): apiKey, headers.Authorization" in lines
    assert "providers of your own (python:provider.py)" in lines
    assert report.validation.startswith("caseforge validate: valid")
    assert cli("validate", suite).exit_code == 0


def test_tests_from_every_source_with_default_test_merged(travel: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    imported(travel, suite)
    capital = case(suite, "capital-city")
    assert capital["input"] == {
        "tone": "friendly",  # defaultTest's var, under the test's own
        "question": "What is the capital of Vandoria?",
        "prompt": "You are the Vandoria travel desk. Tone: friendly. Question: What is the "
        "capital of Vandoria?",
    }
    assert list(capital["expect"]) == ["cost", "icontains", "similar", "javascript", "python"]
    assert capital["expect"]["cost"] == {"mode": "cost", "max_usd": 0.01}  # defaultTest's, first
    assert capital["expect"]["javascript"] == {
        "mode": "javascript", "field": "reply", "file": "asserts/short.js"
    }  # fmt: skip
    assert capital["expect"]["python"] == {
        "mode": "python", "field": "reply", "file": "asserts/grade.py", "function": "mentions_city"
    }  # fmt: skip
    assert (suite / "asserts" / "grade.py").read_text(encoding="utf-8") == (
        TRAVEL / "asserts" / "grade.py"
    ).read_text(encoding="utf-8")
    assert capital["provenance"]["description"] == "Capital city"
    assert capital["provenance"]["imported_from"]["id"] == "Capital city"
    # Reported, kept: an ignore check says why, the assertion stays for an export.
    assert capital["expect"]["similar"]["mode"] == "ignore"
    assert "embeddings" in capital["expect"]["similar"]["reason"]
    assert capital["provenance"]["promptfoo"]["unmapped"] == {
        "similar": {"type": "similar", "value": "Lumenport is the capital", "threshold": 0.8}
    }
    # A list var makes a case per value, as promptfoo expands it.
    assert case(suite, "seasons-when-is-it-warm")["input"]["question"] == "When is it warm?"
    assert case(suite, "seasons-when-does-it-snow")["input"]["question"] == "When does it snow?"
    # The test's options.transform runs before the regex, in one javascript check.
    route = case(suite, "route-lookup")["expect"]
    assert route["regex"]["mode"] == "javascript" and "output.trim()" in route["regex"]["code"]
    # YAML files by glob; ids deduplicated, the description kept.
    assert case(suite, "currency")["expect"]["contains"]["values"] == ["crown"]
    second = case(suite, "currency-2")
    assert second["provenance"]["description"] == "Currency"
    assert second["expect"]["not_icontains"] == {
        "mode": "must_not_include", "field": "reply", "values": ["cash only"],
        "case_sensitive": False,
    }  # fmt: skip
    # No description: the id comes from the test's own vars.
    assert case(suite, "is-tap-water-safe")["input"]["question"] == "Is tap water safe?"
    # CSV: __expected columns, __description, __metadata (a list with []), thresholds.
    provinces = case(suite, "provinces")
    assert provinces["expect"]["equals"] == {"mode": "exact", "field": "reply", "value": "7"}
    assert provinces["expect"]["contains_any"]["values"] == ["seven", "7"]
    assert provinces["provenance"]["metadata"] == {
        "topic": "geography", "tags": ["facts", "numbers"], "threshold": 1.0
    }  # fmt: skip
    month = case(suite, "best-month-for-the-coast")
    assert month["expect"]["python"]["threshold"] == 0.9  # __config:__expected2:threshold
    assert month["provenance"]["promptfoo"]["threshold"] == 0.5  # __threshold
    # JSONL.
    visa = case(suite, "visa")["expect"]
    assert visa["starts_with"] == {"mode": "regex", "field": "reply", "value": "\\AYes"}
    assert visa["not_starts_with"]["negate"] is True


def test_the_report_names_everything_that_was_not_mapped(travel: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    report = imported(travel, suite)
    lines = report.lines()
    unmapped = [o for o in report.assertions if not o.mapped]
    assert {(o.where, o.type, o.kind) for o in unmapped} == {
        ("test 1", "similar", "needs an embedding model"),
        ("test 2", "javascript", "needs Node"),
        ("test 4", "trajectory:tool-used", "trajectory assertion"),
    }
    for outcome in unmapped:  # each under its item, with its type and why
        assert f": {outcome.type}: " in block_of(lines, outcome.where)
    skipped = {i.where: i.reason for i in report.items if i.status is ItemStatus.SKIPPED}
    assert set(skipped) == {
        "huggingface://datasets/vandoria/faq", "file://make_tests.py:generate", "file://gone.csv"
    }  # fmt: skip
    assert "Hugging Face" in skipped["huggingface://datasets/vandoria/faq"]
    assert "generator" in skipped["file://make_tests.py:generate"]
    assert "no such file" in skipped["file://gone.csv"]
    # The weighted threshold, per test.
    port = block_of(lines, "test 2")
    assert "a threshold of 0.6, weights" in port and "every check passes" in port
    assert report.reasons["weighted threshold"] == 2
    assert (suite / "IMPORT.md").read_text(encoding="utf-8") == report.markdown()
    markdown = report.markdown()
    for outcome in unmapped:
        assert f"{outcome.type}:" in markdown


def test_a_test_without_assertions_is_an_ignore_check(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: Hi}\n",
                      encoding="utf-8")  # fmt: skip
    imported(config, tmp_path / "suite")
    data = case(tmp_path / "suite", "hi")
    reason = "the promptfoo test has no assertions: promptfoo records its output without grading it"
    assert data["expect"] == {"reply": {"mode": "ignore", "reason": reason}}


def test_several_prompts_make_a_configuration_per_provider_and_prompt(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        textwrap.dedent("""\
            prompts:
              - {raw: "Answer briefly: {{q}}", label: brief}
              - {raw: "Answer in detail: {{q}}", label: detailed}
            providers: [openai:gpt-4.1-mini]
            tests:
              - vars: {q: Where is Lumenport?}
                assert: [{type: contains, value: Vandoria}]
        """),
        encoding="utf-8",
    )
    report = imported(config, tmp_path / "suite")
    configs = read(tmp_path / "suite" / "caseforge.yaml")["configs"]
    assert configs == {
        "openai-gpt-4-1-mini-brief": {"provider": "openai:gpt-4.1-mini", "model": "gpt-4.1-mini",
                                      "prompt": "Answer briefly: {{q}}", "prompt_label": "brief"},
        "openai-gpt-4-1-mini-detailed": {"provider": "openai:gpt-4.1-mini",
                                         "model": "gpt-4.1-mini",
                                         "prompt": "Answer in detail: {{q}}",
                                         "prompt_label": "detailed"},
    }  # fmt: skip
    assert case(tmp_path / "suite", "where-is-lumenport")["input"] == {"q": "Where is Lumenport?"}
    assert any("provider × prompt" in note for note in report.notes)


def test_the_agent_stub_sends_the_rendered_prompt_to_the_configured_model() -> None:
    calls: list[dict[str, Any]] = []

    class Client:
        async def chat(self, messages: list[dict[str, Any]], **options: Any) -> Any:
            calls.append({"messages": messages, **options})
            return SimpleNamespace(text="Lumenport")

    def llm(model: str) -> Client:
        calls.append({"model": model})
        return Client()

    ctx = SimpleNamespace(config={"model": "gpt-4.1-mini", "options": {"temperature": 0.3},
                                  "prompt": "Q: {{ q }}"}, llm=llm)  # fmt: skip
    answer = asyncio.run(promptfoo_agent.run({"q": "Capital?"}, ctx))
    assert answer == {"reply": "Lumenport"}
    assert calls == [
        {"model": "gpt-4.1-mini"},
        {"messages": [{"role": "user", "content": "Q: Capital?"}], "temperature": 0.3,
         "max_tokens": None},
    ]  # fmt: skip
    chat = '[{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Hi"}]'
    assert promptfoo_agent.messages_of(chat)[0] == {"role": "system", "content": "Be brief"}
    with pytest.raises(NotImplementedError, match="names no model"):
        asyncio.run(promptfoo_agent.run({}, SimpleNamespace(config={"provider": "exec:x"})))


def test_similar_becomes_a_judge_check_in_a_suite_with_a_judge(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: desk\njudge: {model: gpt-4.1-mini}\n",
                                          encoding="utf-8")  # fmt: skip
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: ['{{q}}']\ntests:\n  - vars: {q: Capital?}\n    assert:\n"
                      "      - {type: similar, value: Lumenport}\n", encoding="utf-8")  # fmt: skip
    report = imported(config, suite)
    assert case(suite, "capital")["expect"]["similar"]["mode"] == "judge"
    assert all(o.mapped for o in report.assertions)
    assert read(suite / "caseforge.yaml") == {"name": "desk", "judge": {"model": "gpt-4.1-mini"}}
    assert any("an existing suite: its caseforge.yaml is not changed" in n for n in report.notes)


def test_dry_run_writes_nothing(travel: Path, tmp_path: Path) -> None:
    done = cli("import", "promptfoo", travel, "--out", tmp_path / "suite", "--dry-run")
    assert done.exit_code == 0, done.output
    assert "(would import): 14 items: 11 new, 3 skipped" in done.output
    assert not (tmp_path / "suite").exists()


def test_a_reimport_updates_its_own_cases_and_nothing_else(travel: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    imported(travel, suite)
    stub = suite / "promptfoo_agent.py"
    stub.write_text("# my agent\n", encoding="utf-8")
    mine = suite / "cases" / "mine.yaml"
    mine.write_text("id: mine\ninput: {q: x}\nexpect:\n  reply: {must_include: [x]}\n",
                    encoding="utf-8")  # fmt: skip
    before = files_of(suite)
    config = travel / "promptfooconfig.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("value: Lumenport\n", "value: Lumenport City\n")
                      .replace("  - file://more.jsonl\n", ""), encoding="utf-8")  # fmt: skip
    report = imported(travel, suite)
    after = files_of(suite)
    changed = {p for p in after if after[p] != before.get(p) and not p.startswith(".caseforge/")}
    assert changed == {"cases/capital-city.yaml", "IMPORT.md"}
    assert stub.read_text(encoding="utf-8") == "# my agent\n"  # the stub is the user's
    assert case(suite, "capital-city")["expect"]["icontains"]["values"] == ["Lumenport City"]
    assert report.orphans == ["cases/visa.yaml"]  # left as it is, and said
    assert (suite / "cases" / "visa.yaml").is_file()
    statuses = {i.case_id: i.status for i in report.items if i.case_id}
    assert statuses["capital-city"] is ItemStatus.UPDATED
    assert statuses["provinces"] is ItemStatus.UNCHANGED


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            "prompts: ['{{q}}']\ntests:\n  - vars: {q: x}\n    assert: [contains]\n",
            "promptfooconfig.yaml:4:14: tests.0.assert.0: an assertion is a mapping with a `type`",
        ),
        (
            "prompts: ['{{q}}']\ntests:\n  - vars: {q: x}\n    assert: {type: contains}\n",
            "promptfooconfig.yaml:4:5: tests.0.assert: a list of assertions",
        ),
        ("tests:\n  - 42\n", "promptfooconfig.yaml:2:5: tests.0: a test is a mapping"),
        ("tests: 5\n", "promptfooconfig.yaml:1:1: tests: tests is a list of tests"),
        ("prompts: [a\n", "promptfooconfig.yaml:2:1: not YAML"),
        ("- just\n- a list\n", "promptfooconfig.yaml: a promptfoo config is a mapping"),
        (
            "tests: [file://bad.csv]\n",
            "bad.csv:2: __config:__expected:cost: the only __config key is threshold",
        ),
    ],
)
def test_what_promptfoo_would_not_read_is_one_line_naming_file_line_and_field(
    tmp_path: Path, config: str, message: str
) -> None:
    (tmp_path / "bad.csv").write_text("q,__expected,__config:__expected:cost\nx,contains: x,1\n",
                                      encoding="utf-8")  # fmt: skip
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(config, encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        imported(path, tmp_path / "suite")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    done = cli("import", "promptfoo", path, "--out", tmp_path / "suite")
    assert done.exit_code == 1 and message in done.output and "Traceback" not in done.output
    assert not (tmp_path / "suite").exists()


def test_usage_errors_and_nothing_to_import(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not found"):
        imported(tmp_path / "nope.yaml", tmp_path / "suite")
    (tmp_path / "promptfooconfig.js").write_text("module.exports = {};\n", encoding="utf-8")
    done = cli("import", "promptfoo", tmp_path / "promptfooconfig.js", "--out", tmp_path / "s")
    assert done.exit_code == 2 and "written as code" in done.output
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("tests: [huggingface://datasets/x/y]\n", encoding="utf-8")
    done = cli("import", "promptfoo", config, "--out", tmp_path / "suite")
    assert done.exit_code == 1, done.output
    assert "skipped: a Hugging Face dataset" in done.output
    assert "no test became a case (see the report above); nothing written" in done.output
    assert not (tmp_path / "suite").exists()


def test_only_a_list_of_strings_expands_as_promptfoo_expands_it(tmp_path: Path) -> None:
    """promptfoo makes a test per item of a var whose value is a list of strings; a list of
    numbers or of objects (a chat history) is one value."""
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['{{question}} {{n}} {{history}}']\nproviders: [openai:gpt-4.1-mini]\n"
        "tests:\n"
        "  - description: counts\n"
        "    vars:\n"
        "      question: [How many?, How much?]\n"
        "      n: [1, 2]\n"
        "      history: [{role: user, content: hi}, {role: assistant, content: hello}]\n"
        "    assert: [{type: contains, value: two}]\n",
        encoding="utf-8",
    )
    suite = tmp_path / "suite"
    report = imported(config, suite)
    made = sorted(p.stem for p in (suite / "cases").iterdir())
    assert made == ["counts-how-many", "counts-how-much"], made
    one = case(suite, "counts-how-many")["input"]
    assert one["n"] == [1, 2] and one["history"][1] == {"role": "assistant", "content": "hello"}
    assert any("question=How many?" in line for line in report.lines())


def test_the_tests_transform_runs_before_an_assertions_own_and_bad_javascript_is_reported(
    tmp_path: Path,
) -> None:
    """promptfoo applies a test's options.transform, then the assertion's transform; an
    assertion whose JavaScript does not compile is reported, not a check that fails the
    agent at run time."""
    from caseforge.agent.protocol import AgentResult
    from caseforge.case.load import load_case
    from caseforge.grade import grade_trial

    config = tmp_path / "pf" / "promptfooconfig.yaml"
    config.parent.mkdir()
    config.write_text(
        textwrap.dedent(
            """\
            prompts: ["Answer {{q}}"]
            providers: [openai:gpt-4o-mini]
            tests:
              - description: Both transforms
                vars: {q: one}
                options: {transform: JSON.parse(output).a}
                assert:
                  - {type: equals, value: "x!", transform: output + "!"}
                  - {type: javascript, value: "output.length >"}
            """
        ),
        encoding="utf-8",
    )
    suite = tmp_path / "suite"
    report = imported(config, suite)
    text = "\n".join(report.lines())
    assert "not valid JavaScript: SyntaxError" in text
    loaded = load_case(suite / "cases" / "both-transforms.yaml")
    assert loaded.expect["javascript"].mode == "ignore"  # type: ignore[union-attr]

    def verdict(reply: str) -> str:
        _, checks = grade_trial(loaded, AgentResult.model_validate({"reply": reply}))
        return next(c.status.value for c in checks if c.name == "equals")

    assert verdict('{"a": "x"}') == "pass"
    assert verdict('{"a": "y"}') == "fail"


def test_a_chat_prompt_in_json_stays_json_whatever_its_vars_hold(tmp_path: Path) -> None:
    """promptfoo renders a JSON prompt's vars inside its strings; the import and the agent
    stub do too, so a quote or a line break in a var cannot break the messages."""
    base = tmp_path / "pf"
    base.mkdir()
    chat = (
        '[{"role": "system", "content": "You sell {{shop}}."}, '
        '{"role": "user", "content": "{{q}}"}]'
    )
    (base / "chat.json").write_text(chat, encoding="utf-8")
    (base / "promptfooconfig.yaml").write_text(
        textwrap.dedent(
            """\
            prompts: [file://chat.json]
            providers: [openai:gpt-4o-mini]
            tests:
              - description: Quoted
                vars: {shop: books, q: "Is \\"Tome & Quill\\" in\\nstock?"}
                assert: [{type: contains, value: "yes"}]
            """
        ),
        encoding="utf-8",
    )
    suite = tmp_path / "suite"
    imported(base / "promptfooconfig.yaml", suite)
    prompt = case(suite, "quoted")["input"]["prompt"]
    assert promptfoo_agent.messages_of(prompt) == [
        {"role": "system", "content": "You sell books."},
        {"role": "user", "content": 'Is "Tome & Quill" in\nstock?'},
    ]
    # The stub renders a configuration's template the same way, dotted names included.
    stub = promptfoo_agent.prompt_of({"shop": "maps", "q": 'a "b"\nc'}, {"prompt": chat})
    assert promptfoo_agent.messages_of(stub)[1] == {"role": "user", "content": 'a "b"\nc'}
    dotted = promptfoo_agent.prompt_of(
        {"customer": {"name": "Ana"}, "items": ["x", "y"]},
        {"prompt": "For {{customer.name}}: {{ items[1] }}{{ customer.age }}"},
    )
    assert dotted == "For Ana: y"


WEIGHTS = """\
prompts: ['{{q}}']
providers: [echo]
tests:
  - description: Weighted, no threshold
    vars: {q: Hi}
    assert:
      - {type: contains, value: Hello, weight: 3}
      - {type: icontains, value: welcome, weight: 0, metric: tone}
  - description: Weighted, with a threshold
    vars: {q: Bye}
    threshold: 0.5
    assert:
      - {type: contains, value: Goodbye, weight: 2}
      - {type: contains, value: see you, weight: 0.0}
"""


def test_an_assertion_of_weight_0_is_an_ignore_check_that_says_so(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(WEIGHTS, encoding="utf-8")
    report = imported(config, tmp_path / "suite")
    first = case(tmp_path / "suite", "weighted-no-threshold")
    assert first["expect"]["contains"]["mode"] == "must_include"
    tone = first["expect"]["tone"]
    assert tone["mode"] == "ignore"
    assert (
        "weight 0" in tone["reason"] and "counts for nothing in promptfoo's score" in tone["reason"]
    )
    # kept in provenance, for an export to give back
    own = first["provenance"]["promptfoo"]
    assert own["unmapped"]["tone"] == {
        "type": "icontains", "value": "welcome", "weight": 0, "metric": "tone"
    }  # fmt: skip
    second = case(tmp_path / "suite", "weighted-with-a-threshold")
    assert second["expect"]["contains"]["mode"] == "must_include"
    assert second["expect"]["contains_2"]["mode"] == "ignore"
    assert report.reasons["weight 0"] == 2
    assert "assert 2: icontains: has weight 0" in block_of(report.lines(), "test 1")
    # an export gives the assertion back as it was
    export_promptfoo(tmp_path / "suite", tmp_path / "out" / "promptfooconfig.yaml")
    tests = read(tmp_path / "out" / "promptfooconfig.yaml")["tests"]
    assert {"type": "icontains", "value": "welcome", "weight": 0, "metric": "tone"} in tests[0][
        "assert"
    ]


def test_the_weighted_threshold_note_is_only_for_a_test_with_a_threshold(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(WEIGHTS, encoding="utf-8")
    report = imported(config, tmp_path / "suite")
    lines = report.lines()
    assert "weighted mean" not in block_of(lines, "test 1")
    with_one = block_of(lines, "test 2")
    assert '(a threshold of 0.5, weights {"contains": 2, "contains_2": 0.0})' in with_one
    assert report.reasons["weighted threshold"] == 1


def test_a_tracing_section_says_how_caseforge_receives_spans(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    base = "prompts: ['{{q}}']\nproviders: [echo]\ntests: [{vars: {q: Hi}}]\n"
    config.write_text(
        base + "tracing:\n  enabled: true\n  otlp: {http: {enabled: true, port: 4318}}\n",
        encoding="utf-8",
    )
    report = imported(config, tmp_path / "suite", dry_run=True)
    said = [n for n in report.notes if n.startswith("tracing:")]
    assert said == [
        "tracing: promptfoo's tracing settings are not imported; caseforge receives the "
        "agent's spans with `caseforge run --otlp-listen HOST:PORT` (127.0.0.1:4318 as this "
        "config's receiver had it), where the agent exports OTLP/HTTP (see the tracing guide)"
    ]
    assert report.reasons["tracing"] == 1
    assert not any(n.startswith("config keys not imported") for n in report.notes)
    config.write_text(base + "tracing: {enabled: true}\n", encoding="utf-8")
    report = imported(config, tmp_path / "suite", dry_run=True)
    assert [n for n in report.notes if "--otlp-listen" in n] == [
        "tracing: promptfoo's tracing settings are not imported; caseforge receives the "
        "agent's spans with `caseforge run --otlp-listen HOST:PORT`, where the agent exports "
        "OTLP/HTTP (see the tracing guide)"
    ]
