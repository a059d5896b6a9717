"""The check modes and options promptfoo's assertions map to (issue 25): ``must_include``'s
``match: any``, ``negate`` on ``exact`` and ``regex``, ``json``, ``cost``, ``latency``,
``javascript`` and ``python``; each graded, refused when written wrong, and reading the
files of its suite."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from caseforge.agent.protocol import AgentResult
from caseforge.case.load import load_case, load_suite
from caseforge.case.model import Case
from caseforge.case.validate import validate_suite
from caseforge.errors import CaseforgeError, EnvError
from caseforge.grade import grade_trial
from caseforge.results import CheckResult, CheckStatus, TrialStatus
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite, report_json
from tests.helpers import write_toy_suite


def case(expect: dict[str, Any], **extra: Any) -> Case:
    data = {"id": "c", "input": {"question": "2+2?", "prompt": "Answer: {{question}}"}}
    return Case.model_validate({**data, "expect": expect, **extra})


def graded(
    expect: dict[str, Any],
    reply: str = "",
    output: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
    latency_s: float | None = None,
    **extra: Any,
) -> list[CheckResult]:
    result = AgentResult.model_validate(
        {"output": output or {}, "reply": reply, "usage": usage or {}}
    )
    _, checks = grade_trial(case(expect, **extra), result, latency_s=latency_s)
    return checks


def one(check: dict[str, Any], reply: str = "", **kwargs: Any) -> tuple[str, str]:
    checks = graded({"r": {"field": "reply", **check}}, reply, **kwargs)
    assert len(checks) == 1
    return checks[0].status.value, checks[0].reason


# --- must_include match: any; negate ---------------------------------------------------------


def test_must_include_any_passes_on_one_and_names_what_it_found_or_missed() -> None:
    check = {"mode": "must_include", "values": ["refund", "credit"], "match": "any"}
    assert one(check, "we will credit you") == ("pass", 'includes ["credit"]')
    assert one(check, "no luck") == ("fail", 'includes none of ["refund", "credit"]')
    # The text options apply to each alternative.
    loose = {**check, "case_sensitive": False}
    assert one(loose, "A REFUND is due") == ("pass", 'includes ["refund"] (any case)')
    # `all` (the default) still needs every value.
    assert one({**check, "match": "all"}, "we will credit you")[0] == "fail"


def test_negated_exact_and_regex_say_they_were_negated() -> None:
    exact = {"mode": "exact", "value": "I cannot help", "negate": True}
    assert one(exact, "Here is your refund") == ("pass", "")
    assert one(exact, "I cannot help") == ("fail", 'equals "I cannot help" but must not')
    either = {**exact, "any_of": ["Sorry"], "case_sensitive": False}
    assert one(either, "sorry") == (
        "fail",
        'equals "Sorry" (one of any_of) but must not (any case)',
    )
    regex = {"mode": "regex", "value": "^Sorry", "negate": True}
    assert one(regex, "Done.") == ("pass", "")
    status, reason = one(regex, "Sorry, no.")
    assert status == "fail" and reason.endswith('matches /^Sorry/ ("Sorry") but must not')
    assert case({"r": regex}).expect["r"].render() == 'regex not "^Sorry"'


# --- json ---------------------------------------------------------------------------------------

SCHEMA = {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}}


@pytest.mark.parametrize(
    ("check", "reply", "status", "reason"),
    [
        ({}, '{"a": 1}', "pass", ""),
        ({}, "  [1, 2]\n", "pass", ""),
        ({}, 'Here: {"a": 1}', "fail", "not valid JSON"),
        ({}, "NaN", "fail", "NaN is not JSON"),
        ({"find": True}, 'Sure! ```json\n{"a": 1}\n``` done', "pass", ""),
        ({"find": True}, "no braces here", "fail", "no JSON object or array in"),
        ({"schema": SCHEMA}, '{"amount": 3}', "pass", ""),
        ({"schema": SCHEMA}, '{"amount": "3"}', "fail", "at $.amount: '3' is not of type 'number'"),
        ({"find": True, "schema": SCHEMA}, 'x {"b": 1} y {"amount": 2}', "pass", ""),
        (
            {"find": True, "schema": SCHEMA},
            'x {"b": 1} y [3]',
            "fail",
            "none of the 2 JSON values found matches the schema",
        ),
    ],
)
def test_json(check: dict[str, Any], reply: str, status: str, reason: str) -> None:
    got_status, got_reason = one({"mode": "json", **check}, reply)
    assert got_status == status and reason in got_reason


def test_json_reads_a_value_already_parsed_and_fails_an_empty_field() -> None:
    expect = {"data": {"mode": "json", "schema": SCHEMA}, "none": {"mode": "json"}}
    checks = graded(expect, output={"data": {"amount": 1.5}, "none": None})
    assert [(c.status.value, c.reason) for c in checks] == [
        ("pass", ""),
        ("fail", "the field is empty"),
    ]


def test_an_invalid_inline_schema_is_refused_with_where() -> None:
    with pytest.raises(ValueError, match=r"not a valid JSON Schema at .*type"):
        case({"r": {"mode": "json", "schema": {"type": "objekt"}}})


def suite_with(root: Path, expect: dict[str, Any], files: dict[str, str]) -> Path:
    write_toy_suite(root, [{"id": "a", "input": {"q": 1}, "expect": expect}], {"name": "s"})
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_schema_file_is_read_with_the_suite_and_its_problems_are_the_cases(
    tmp_path: Path,
) -> None:
    expect = {"r": {"mode": "json", "field": "reply", "schema": "schemas/answer.yaml"}}
    root = suite_with(tmp_path / "ok", expect, {"schemas/answer.yaml": "type: array\n"})
    loaded = load_suite(root).cases[0].case
    result = AgentResult.model_validate({"reply": '{"a": 1}'})
    _, (check,) = grade_trial(loaded, result)
    assert (check.status, check.reason) == (CheckStatus.FAIL, "does not match the schema: "
                                            "{'a': 1} is not of type 'array'")  # fmt: skip
    assert load_case(root / "cases" / "a.yaml") == loaded  # read with its suite too

    missing = suite_with(tmp_path / "missing", expect, {})
    report = validate_suite(missing)
    (problem,) = report.errors
    assert problem.field == "expect.r.schema" and problem.line == 1
    assert "schemas/answer.yaml: file not found in the suite folder" in problem.message
    with pytest.raises(CaseforgeError, match=r"expect\.r\.schema: schemas/answer\.yaml: file not"):
        load_suite(missing)

    bad = suite_with(tmp_path / "bad", expect, {"schemas/answer.yaml": "type: 12\n"})
    (problem,) = validate_suite(bad).errors
    assert "schemas/answer.yaml: not a valid JSON Schema at $.type" in problem.message
    outside = {"r": {"mode": "json", "schema": "../elsewhere.json"}}
    (problem,) = validate_suite(suite_with(tmp_path / "out", outside, {})).errors
    assert "must be inside the suite folder" in problem.message


def test_an_unbound_schema_file_is_an_error_not_a_guess() -> None:
    status, reason = one({"mode": "json", "schema": "answer.json"}, "{}")
    assert status == "error" and "was not read: load the case with its suite" in reason


# --- cost and latency -------------------------------------------------------------------------


def test_cost_and_latency_read_what_the_run_measured() -> None:
    expect = {
        "spend": {"mode": "cost", "max_usd": 0.01},
        "speed": {"mode": "latency", "max_ms": 500},
    }
    usage = {"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.002}
    cheap = graded(expect, usage=usage, latency_s=0.2)
    assert [(c.status.value, c.actual) for c in cheap] == [("pass", 0.002), ("pass", 200.0)]
    dear = graded(expect, usage={**usage, "cost_usd": 0.05}, latency_s=0.75)
    assert [c.reason for c in dear] == [
        "cost $0.05, over the limit of $0.01",
        "took 750 ms, over the limit of 500 ms",
    ]
    # A priced call can be free: tokens were reported, so the cost is known (0).
    assert graded(expect, usage={"input_tokens": 5}, latency_s=0.1)[0].status is CheckStatus.PASS


def test_an_unknown_cost_is_not_judged_and_the_case_trial_not_passed() -> None:
    result = AgentResult.model_validate({"output": {}, "reply": "hi"})
    status, (check,) = grade_trial(case({"spend": {"mode": "cost", "max_usd": 1}}), result)
    assert check.status is CheckStatus.NOT_JUDGED and "reported no usage" in check.reason
    assert status is TrialStatus.INCOMPLETE
    _, (latency,) = grade_trial(case({"speed": {"mode": "latency", "max_ms": 1}}), result)
    assert latency.status is CheckStatus.NOT_JUDGED  # no latency handed to the grader


def test_cost_and_latency_take_no_field_or_turn() -> None:
    with pytest.raises(ValueError, match="reads the whole case-trial"):
        case({"spend": {"mode": "cost", "max_usd": 1, "field": "reply"}})
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        case({"speed": {"mode": "latency", "max_ms": -1}})


def test_a_run_hands_cost_and_latency_to_the_checks(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    expect = {
        "category": {"mode": "exact", "value": "refund"},
        "spend": {"mode": "cost", "max_usd": 0.01},
        "speed": {"mode": "latency", "max_ms": 60_000},
    }
    root = toy_suite(
        [
            {"id": "cheap", "input": {"cost": 0.001}, "expect": expect},
            {"id": "dear", "input": {"cost": 0.5}, "expect": expect},
        ]
    )
    outcome = asyncio.run(Runner(RunOptions(suite_dir=root), store).run())
    report = report_json(store, outcome.runs[0].run_id)
    trials = {c["id"]: c["trials"][0] for c in report["cases"]}
    assert trials["cheap"]["status"] == "pass"
    assert trials["dear"]["status"] == "fail"
    checks = {c["name"]: c for c in trials["dear"]["checks"]}
    assert checks["spend"]["reason"] == "cost $0.5, over the limit of $0.01"
    assert checks["speed"]["status"] == "pass" and checks["speed"]["actual"] > 0


# --- javascript -----------------------------------------------------------------------------

needs_v8 = pytest.mark.skipif(
    importlib.util.find_spec("py_mini_racer") is None,
    reason="mini-racer (the javascript extra, in the dev extra) is not installed",
)


@needs_v8
@pytest.mark.parametrize(
    ("check", "reply", "status", "reason"),
    [
        ({"code": "output.length < 10"}, "short", "pass", ""),
        ({"code": "output.length < 3"}, "long one", "fail", "the JavaScript code returned false"),
        ({"code": "const n = output.split(' ').length; n * 0.25"}, "a b", "pass", ""),
        ({"code": "output.split(' ').length * 0.25", "threshold": 0.75}, "a b", "fail",
         "score 0.5 is below the threshold 0.75"),
        ({"code": "0"}, "x", "fail", "the JavaScript code returned 0"),
        ({"code": "if (output.includes('!')) {\n  return {pass: false, score: 0, reason: "
                  "'shouts'};\n}\nreturn true;"}, "hi!", "fail", "shouts"),
        ({"code": "output.includes('a') &&\n  output.includes('b')"}, "ab", "pass", ""),
        ({"code": "JSON.parse(output).ok"}, "not json", "fail",
         "the JavaScript code threw: SyntaxError: Unexpected token"),
        ({"code": "'yes'"}, "x", "fail", 'returned "yes": return a boolean, a number'),
        ({"code": "undefined"}, "x", "fail", "returned nothing (undefined)"),
        ({"code": "context.vars.question === '2+2?' && context.prompt.startsWith('Answer')"},
         "x", "pass", ""),
    ],
)  # fmt: skip
def test_javascript(check: dict[str, Any], reply: str, status: str, reason: str) -> None:
    got_status, got_reason = one({"mode": "javascript", **check}, reply)
    assert got_status == status and reason in got_reason


@needs_v8
def test_javascript_reads_the_output_as_json_and_the_description() -> None:
    expect = {
        "items": {"mode": "javascript", "code": "output.length === 2 && output[1].n === 2"},
        "about": {"mode": "javascript", "field": "reply",
                  "code": "return context.test.description === 'from promptfoo'"},
    }  # fmt: skip
    checks = graded(
        expect,
        "x",
        output={"items": [{"n": 1}, {"n": 2}]},
        provenance={"description": "from promptfoo"},
    )
    assert [c.status.value for c in checks] == ["pass", "pass"]


@needs_v8
def test_javascript_limits_fail_the_check_and_never_hang() -> None:
    loop = {"mode": "javascript", "code": "while (true) {}"}
    status, reason = one(loop, "x")
    assert status == "fail" and reason == "the JavaScript code was stopped: ran longer than 1 s"
    hog = {
        "mode": "javascript",
        "code": "const a = [];\nwhile (true) a.push(new Array(1e5).fill(1));",
    }
    status, reason = one(hog, "x")
    assert status == "fail" and reason.endswith("used more than 64 MB of heap")
    assert one({"mode": "javascript", "code": "1 + 1 === 2"}, "x") == ("pass", "")  # still up


@needs_v8
def test_one_check_cannot_change_what_the_next_one_sees() -> None:
    polluting = {"mode": "javascript", "code": "Array.prototype.evil = 1; leaked = 2; true"}
    assert one(polluting, "x") == ("pass", "")
    clean = (
        "[].evil === undefined && typeof leaked === 'undefined' && typeof require === 'undefined'"
    )
    assert one({"mode": "javascript", "code": clean}, "x") == ("pass", "")


@needs_v8
def test_a_javascript_file_exports_its_function(tmp_path: Path) -> None:
    files = {
        "asserts/length.js": "module.exports = (output, context) =>\n"
        "  output.length <= context.vars.q",
        "asserts/named.js": "function tone(output) {\n"
        "  return {pass: true, score: 1, reason: 'ok'}\n}\nmodule.exports = { tone };",
        "asserts/esm.js": "export default function (output) { return output === 'x'; }",
    }
    expect = {
        "length": {"mode": "javascript", "field": "reply", "file": "asserts/length.js"},
        "tone": {"mode": "javascript", "field": "reply", "file": "asserts/named.js",
                 "function": "tone"},
        "esm": {"mode": "javascript", "field": "reply", "file": "asserts/esm.js"},
    }  # fmt: skip
    root = suite_with(tmp_path / "s", expect, files)
    loaded = load_suite(root).cases[0].case
    _, checks = grade_trial(loaded, AgentResult.model_validate({"reply": "x"}))
    assert [(c.status.value, c.reason) for c in checks] == [
        ("pass", ""),
        ("pass", "ok"),
        ("pass", ""),
    ]


def test_code_that_needs_node_is_refused_when_the_suite_loads(tmp_path: Path) -> None:
    inline = {"r": {"mode": "javascript", "code": "require('fs').existsSync('/x')"}}
    (problem,) = validate_suite(suite_with(tmp_path / "a", inline, {})).errors
    assert problem.format().endswith("expect.r.code: needs Node: `require(` (no Node in the "
                                     "embedded engine)")  # fmt: skip
    assert problem.line == 1 and problem.case_id == "a"
    # In a string or a comment it is only text.
    fine = {"r": {"mode": "javascript", "code": "output.includes('require(') // process.env"}}
    assert validate_suite(suite_with(tmp_path / "b", fine, {})).errors == []
    script = {"r": {"mode": "javascript", "file": "check.js"}}
    files = {"check.js": "module.exports = (o) => process.env.X === o"}
    (problem,) = validate_suite(suite_with(tmp_path / "c", script, files)).errors
    assert problem.field == "expect.r.file"
    assert (
        problem.message == "needs Node: check.js uses `process.` (no Node in the embedded engine)"
    )


def test_javascript_needs_code_or_file_and_the_extra(
    monkeypatch: pytest.MonkeyPatch, toy_suite: MakeToySuite, store: RunStore
) -> None:
    with pytest.raises(ValueError, match="needs `code` or `file`, exactly one of them"):
        case({"r": {"mode": "javascript", "code": "true", "file": "a.js"}})
    monkeypatch.setitem(sys.modules, "py_mini_racer", None)  # as if not installed
    with pytest.raises(EnvError, match=r"pip install 'caseforge\[javascript\]'"):
        graded({"r": {"mode": "javascript", "field": "reply", "code": "true"}}, "x")
    expect = {"r": {"mode": "javascript", "field": "reply", "code": "true"}}
    root = toy_suite([{"id": "a", "input": {}, "expect": expect}])
    with pytest.raises(EnvError) as raised:
        asyncio.run(Runner(RunOptions(suite_dir=root), store).run())
    assert raised.value.exit_code == 5
    assert store.list_runs() == []  # refused before any run was recorded


# --- python -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("check", "reply", "status", "reason"),
    [
        ({"code": "len(output) < 10"}, "short", "pass", ""),
        ({"code": "output.count('a') / 4", "threshold": 0.5}, "aab", "pass", ""),
        ({"code": "output.count('a') / 4", "threshold": 0.75}, "aab", "fail",
         "score 0.5 is below the threshold 0.75"),
        ({"code": "words = output.split()\nif len(words) > 3:\n    return {'pass': False, "
                  "'score': 0, 'reason': 'too long'}\nreturn True"}, "a b c d", "fail", "too long"),
        ({"code": "'true'"}, "x", "pass", ""),
        ({"code": "context['vars']['question'] == '2+2?'"}, "x", "pass", ""),
        ({"code": "[1]"}, "x", "error", "the Python code returned [1]: return a bool"),
        ({"code": "1 / 0"}, "x", "error", "grading raised ZeroDivisionError: division by zero"),
        ({"code": "exit(3)"}, "x", "error", "grading called sys.exit(3)"),
    ],
)  # fmt: skip
def test_python(check: dict[str, Any], reply: str, status: str, reason: str) -> None:
    got_status, got_reason = one({"mode": "python", **check}, reply)
    assert got_status == status and reason in got_reason


def test_python_cannot_change_the_output_other_checks_read() -> None:
    expect = {
        "items": {
            "mode": "python",
            "code": "output.append(9)\ncontext['vars'].clear()\nreturn True",
        },
        "again": {"mode": "exact", "value": [1], "field": "items"},
    }
    checks = graded(expect, output={"items": [1]})
    assert [c.status.value for c in checks] == ["pass", "pass"]


def test_python_code_that_does_not_compile_is_refused() -> None:
    with pytest.raises(ValueError, match=r"not valid Python: .* \(line 2 of the code\)"):
        case({"r": {"mode": "python", "code": "x = 1\nreturn x +"}})


def test_a_python_file_and_its_problems(tmp_path: Path) -> None:
    files = {
        "asserts/tone.py": "def get_assert(output, context):\n    return output.isupper()\n\n"
        "def polite(output, context):\n    return {'pass': 'please' in output, 'score': 1}\n",
    }
    expect = {
        "shout": {"mode": "python", "field": "reply", "file": "asserts/tone.py"},
        "polite": {"mode": "python", "field": "reply", "file": "asserts/tone.py",
                   "function": "polite"},
    }  # fmt: skip
    root = suite_with(tmp_path / "s", expect, files)
    loaded = load_suite(root).cases[0].case
    _, checks = grade_trial(loaded, AgentResult.model_validate({"reply": "PLEASE"}))
    assert [c.status.value for c in checks] == ["pass", "fail"]

    broken = {"asserts/tone.py": "import json\nraise RuntimeError('half written')\n"}
    (problem,) = validate_suite(suite_with(tmp_path / "b", expect | {"polite": expect["shout"]},
                                           broken)).errors[:1]  # fmt: skip
    assert problem.field == "expect.shout.file"
    assert problem.message == "asserts/tone.py:2: RuntimeError: half written"
    unnamed = {"r": {"mode": "python", "file": "asserts/tone.py", "function": "gone"}}
    (problem,) = validate_suite(suite_with(tmp_path / "c", unnamed, files)).errors
    assert problem.field == "expect.r.function"
    assert problem.message == "asserts/tone.py has no function gone(output, context)"


def test_every_new_mode_lands_in_the_case_schema() -> None:
    from caseforge.case.model import case_json_schema

    text = json.dumps(case_json_schema())
    for name in ('"json"', '"cost"', '"latency"', '"javascript"', '"python"', '"max_usd"',
                 '"max_ms"', '"negate"', '"threshold"'):  # fmt: skip
        assert name in text


def test_javascript_that_does_not_compile_is_refused_when_the_suite_loads(
    tmp_path: Path,
) -> None:
    """A syntax error is the case's mistake, found by validate, not a failing check that
    counts against the agent at run time."""
    with pytest.raises(ValueError, match=r"not valid JavaScript: SyntaxError: unexpected end"):
        case({"r": {"mode": "javascript", "code": "output.length >"}})
    with pytest.raises(ValueError, match=r"not valid JavaScript: SyntaxError: .*'\]'"):
        case({"r": {"mode": "javascript", "code": "output.includes('a')]"}})
    script = {"r": {"mode": "javascript", "file": "check.js"}}
    files = {"check.js": "module.exports = (output) => output.length >"}
    (problem,) = validate_suite(suite_with(tmp_path / "c", script, files)).errors
    assert problem.field == "expect.r.file"
    assert problem.message.startswith("check.js is not valid JavaScript: SyntaxError:")
    # Valid code of each form still loads, and compiling it ran nothing.
    valid = ("output.length > 3", "const n = output.length; n > 2",
             "if (output) { return true }\nreturn false", "throw new Error('boom')")  # fmt: skip
    for code in valid:
        case({"r": {"mode": "javascript", "code": code}})
