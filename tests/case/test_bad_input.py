"""Each class of bad input gives a one-line ``path:line:col`` error and exit 1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.errors import did_you_mean
from tests.conftest import SuiteFactory, dedent, good_case
from tests.helpers import caseforge_process

runner = CliRunner()
LOCATED = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<rest>.+)$")


def validate(root: Path) -> tuple[int, list[dict[str, object]]]:
    result = runner.invoke(app, ["validate", str(root), "--json"])
    return result.exit_code, json.loads(result.stdout)["errors"]


def only_error(root: Path) -> dict[str, object]:
    code, errors = validate(root)
    assert code == 1
    assert len(errors) == 1, errors
    return errors[0]


def test_yaml_syntax_error(make_suite: SuiteFactory) -> None:
    root = make_suite({"cases/a.yaml": "id: a\ninput: {ticket: [1, 2}\nexpect: {}\n"})
    error = only_error(root)
    assert error["path"].endswith("cases/a.yaml")
    assert (error["line"], error["col"]) == (2, 22)  # the stray `}`
    assert "YAML syntax error" in error["message"]


def test_unknown_mode(make_suite: SuiteFactory) -> None:
    text = good_case("a").replace("{mode: exact, value: refund}", "{mode: exactly, value: refund}")
    error = only_error(make_suite({"cases/a.yaml": text}))
    assert (error["line"], error["field"]) == (6, "expect.category.mode")
    assert "unknown mode 'exactly'" in error["message"]
    assert "exact_set" in error["message"]  # lists the modes that exist


def test_wrong_type(make_suite: SuiteFactory) -> None:
    text = good_case("a").replace("value: 20.0", "value: twenty")
    error = only_error(make_suite({"cases/a.yaml": text}))
    assert (error["line"], error["field"]) == (7, "expect.amount.value")
    assert "valid number" in error["message"] and "twenty" in error["message"]


def test_ignore_without_reason(make_suite: SuiteFactory) -> None:
    text = good_case("a").replace("{mode: ignore, reason: wording varies}", "{mode: ignore}")
    error = only_error(make_suite({"cases/a.yaml": text}))
    assert (error["line"], error["col"]) == (10, 3)
    assert error["field"] == "expect.wording.reason"
    assert "missing" in error["message"]


def test_bad_id(make_suite: SuiteFactory) -> None:
    error = only_error(make_suite({"cases/a.yaml": good_case("Refund_01")}))
    assert (error["line"], error["col"], error["field"]) == (1, 5, "id")


def test_duplicate_id_names_both_files(make_suite: SuiteFactory) -> None:
    root = make_suite(
        {"cases/a.yaml": good_case("same", "甲"), "cases/b.yaml": good_case("same", "乙乙乙")}
    )
    error = only_error(root)
    assert error["path"].endswith("b.yaml") and "a.yaml" in error["message"]
    assert "duplicate id 'same'" in error["message"]


def test_reused_retired_id(make_suite: SuiteFactory) -> None:
    retired = "- id: old-one\n  reason: disputed\n  retired: 2026-10-01\n"
    root = make_suite({"cases/a.yaml": good_case("old-one"), "retired.yaml": retired})
    error = only_error(root)
    assert error["field"] == "id" and "retired" in error["message"]


def test_oracle_drift_names_case_and_both_values(make_suite: SuiteFactory) -> None:
    text = good_case("a").replace("value: 20.0", "value: 21.0")
    error = only_error(make_suite({"cases/a.yaml": text}))
    assert (error["line"], error["field"]) == (7, "expect.amount.value")
    assert "oracle drift in case a" in error["message"]
    assert "21.0" in error["message"] and "20.0" in error["message"]


def test_unknown_oracle(make_suite: SuiteFactory) -> None:
    text = good_case("a").replace("oracle: price", "oracle: prise")
    error = only_error(make_suite({"cases/a.yaml": text}))
    assert "unknown oracle 'prise'" in error["message"] and "price" in error["message"]


def test_jsonl_errors_name_the_line(make_suite: SuiteFactory) -> None:
    good = {"id": "j1", "input": {"t": "x"}, "expect": {"a": {"mode": "exact", "value": 1}}}
    bad = {"id": "j2", "input": {"t": "y"}, "expect": {"a": {"mode": "regex", "value": "("}}}
    text = json.dumps(good) + "\n\n" + json.dumps(bad) + "\n{oops\n"
    code, errors = validate(make_suite({"cases/bulk.jsonl": text}))
    assert code == 1
    assert [(e["line"], e["field"]) for e in errors] == [(3, "expect.a.value"), (4, "")]
    assert "regular expression" in errors[0]["message"]
    assert "invalid JSON" in errors[1]["message"]


def test_bad_suite_config(make_suite: SuiteFactory) -> None:
    root = make_suite({"cases/a.yaml": good_case("a")}, config="name: demo\ntrails: 3\n")
    error = only_error(root)
    assert error["path"].endswith("caseforge.yaml")
    assert (error["line"], error["field"]) == (2, "trails")


def test_cli_prints_one_line_errors_without_traceback(make_suite: SuiteFactory) -> None:
    text = good_case("a").replace("{mode: ignore, reason: wording varies}", "{mode: ignore}")
    root = make_suite({"cases/a.yaml": text})
    proc = caseforge_process("validate", str(root))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1
    match = LOCATED.match(lines[0])
    assert match and match["path"].endswith("a.yaml") and match["line"] == "10"


def test_retire_unknown_id_is_a_one_line_error(make_suite: SuiteFactory) -> None:
    root = make_suite({"cases/a.yaml": good_case("a")})
    proc = caseforge_process("retire", str(root), "nope", "--reason", "x")
    assert proc.returncode == 2  # an unknown case named on the command line: usage
    assert proc.stderr.strip().count("\n") == 0 and "nope" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("strict", [False, True])
def test_near_duplicate_is_a_warning(make_suite: SuiteFactory, strict: bool) -> None:
    ticket = "我上个月被扣了两次钱，麻烦帮我查一下是不是重复扣款了，谢谢"
    root = make_suite(
        {
            "cases/a.yaml": good_case("a", ticket),
            "cases/b.yaml": good_case("b", ticket + "！"),
            "cases/c.yaml": good_case("c", "发票抬头写错了，能不能重新开一张"),
        }
    )
    args = ["validate", str(root), "--json"] + (["--strict"] if strict else [])
    result = runner.invoke(app, args)
    data = json.loads(result.stdout)
    assert [(d["a"], d["b"]) for d in data["near_duplicates"]] == [("a", "b")]
    assert any("near-duplicate of a" in w["message"] for w in data["warnings"])
    assert result.exit_code == (1 if strict else 0)


def test_valid_suite_passes(make_suite: SuiteFactory) -> None:
    root = make_suite(
        {"cases/a.yaml": good_case("a", "甲乙丙丁"), "cases/b.yaml": good_case("b", "戊己庚辛")}
    )
    code, errors = validate(root)
    assert (code, errors) == (0, [])


def test_yaml_keeps_no_as_a_string(make_suite: SuiteFactory) -> None:
    text = dedent(
        """
        id: a
        input: {ticket: "x"}
        expect:
          answer: {mode: exact, value: no}
        """
    )
    from caseforge.case.load import load_case

    root = make_suite({"cases/a.yaml": text})
    assert load_case(root / "cases/a.yaml").expect["answer"].value == "no"  # type: ignore[union-attr]


def test_a_script_as_long_as_max_turns_is_valid_and_one_more_is_not(
    make_suite: SuiteFactory,
) -> None:
    def case(messages: int) -> str:
        script = "".join(f"    - say: message {i}\n" for i in range(messages))
        return (
            "id: talk\ninput: {}\nconversation:\n  max_turns: 3\n  script:\n"
            + script
            + "expect: {category: {mode: exact, value: refund}}\n"
        )

    code, errors = validate(make_suite({"cases/talk.yaml": case(3)}))
    assert (code, errors) == (0, [])
    error = only_error(make_suite({"cases/talk.yaml": case(4)}))
    assert (error["line"], error["col"], error["field"]) == (6, 5, "conversation.script")
    assert error["message"].startswith("4 scripted messages, but max_turns is 3")


def test_a_jsonl_line_that_is_not_utf8_is_named_and_the_others_load(
    make_suite: SuiteFactory,
) -> None:
    good = json.dumps({"id": "j1", "input": {}, "expect": {"a": {"mode": "exact", "value": 1}}})
    root = make_suite({})
    (root / "cases" / "bulk.jsonl").write_bytes(
        good.encode() + b'\n{"id": "j2", "input": {"t": "caf\xe9"}}\n'
    )
    code, errors = validate(root)
    assert code == 1
    [error] = errors
    assert (error["line"], error["col"]) == (2, 33)  # the é, in characters
    assert error["message"].startswith("not UTF-8 text: byte 0xe9")


@pytest.mark.parametrize(
    ("check", "line_col_field", "says"),
    [
        ("{must_call: [refund]}", (6, 11, "expect.writes"), "say so with `field: tool_calls`"),
        (
            "{field: reply, must_call: [refund]}",
            (6, 19, "expect.writes.field"),
            "`field` is `tool_calls` (got 'reply')",
        ),
        (
            "{mode: tool_call, must_call: [refund]}",
            (6, 18, "expect.writes.mode"),
            "unknown mode 'tool_call'",
        ),
        (
            "{field: tool_calls, order: [refund, [cancel, notify]]}",
            (6, 38, "expect.writes.order"),
            "not a mix of calls and chains",
        ),
        (
            "{field: tool_calls, order: [[cancel, refund], [{nme: notify}]]}",
            (6, 64, "expect.writes.order.1.0.nme"),
            "unknown field",
        ),
        (
            "{mode: spans, order: [retrieve, [chat, tool]]}",
            (6, 32, "expect.writes.order"),
            "not a mix of spans and chains",
        ),
        (
            "{mode: spans, order: [[retrieve, chat], [{nme: tool}]]}",
            (6, 58, "expect.writes.order.1.0.nme"),
            "unknown field",
        ),
        (
            "{mode: exact_set, field: replies, values: [a]}",
            (6, 18, "expect.writes.mode"),
            "compares a whole list",
        ),
    ],
)
def test_tool_call_spans_and_replies_mistakes_are_named_where_they_are(
    make_suite: SuiteFactory, check: str, line_col_field: tuple[int, int, str], says: str
) -> None:
    text = good_case("a").replace("expect:\n", f"expect:\n  writes: {check}\n")
    code, errors = validate(make_suite({"cases/a.yaml": text}))
    assert code == 1
    found = [(e["line"], e["col"], e["field"]) for e in errors if says in str(e["message"])]
    assert found == [line_col_field], errors


@pytest.mark.parametrize(
    ("check", "field", "message"),
    [
        ("{mode: json, schema: 5}", "expect.x.schema", "expected a string or a mapping (got 5)"),
        (
            "{mode: tool_calls, max_calls: lots}",
            "expect.x.max_calls",
            "expected an integer or a mapping of names to integers (got 'lots')",
        ),
        (
            "{mode: spans, max_errors: [0]}",
            "expect.x.max_errors",
            "expected an integer or a mapping of names to integers (got [0])",
        ),
        # a value of one member's outer type (a mapping) is judged as that member alone
        (
            "{mode: spans, max_errors: {'*': none}}",
            "expect.x.max_errors.*",
            "Input should be a valid integer, unable to parse string as an integer (got 'none')",
        ),
    ],
)
def test_a_value_no_member_of_a_union_takes_is_one_error(
    make_suite: SuiteFactory, check: str, field: str, message: str
) -> None:
    text = f"id: a\ninput: {{}}\nexpect:\n  x: {check}\n"
    error = only_error(make_suite({"cases/a.yaml": text}))
    assert (error["line"], error["field"], error["message"]) == (4, field, message)


def test_a_union_in_caseforge_yaml_and_in_a_jsonl_line_is_one_error(
    make_suite: SuiteFactory,
) -> None:
    config = "name: demo\nagent: {command: 5}\n"
    error = only_error(make_suite({"cases/a.yaml": good_case("a")}, config=config))
    assert (error["line"], error["field"]) == (2, "agent.command")
    assert error["message"] == "expected a string or a list of strings (got 5)"
    line = json.dumps({"id": "b", "input": {}, "expect": {"x": {"mode": "json", "schema": 5}}})
    error = only_error(make_suite({"cases/a.yaml": good_case("a"), "cases/more.jsonl": line}))
    assert (error["line"], error["field"]) == (1, "expect.x.schema")
    assert error["message"] == "expected a string or a mapping (got 5)"


def test_an_item_of_a_list_in_a_union_is_named_by_its_index(make_suite: SuiteFactory) -> None:
    config = "name: demo\nagent: {command: [python, 3]}\n"
    error = only_error(make_suite({"cases/a.yaml": good_case("a")}, config=config))
    assert (error["field"], error["message"]) == (
        "agent.command.1", "Input should be a valid string (got 3)"
    )  # fmt: skip


@pytest.mark.parametrize(
    ("spans", "col", "field", "prefix"),
    [
        ('{must_have: [""]}', 32, "expect.x.must_have.0.name", ""),
        ('{must_not_have: [{name: ""}]}', 43, "expect.x.must_not_have.0.name", ""),
        ('{order: [retrieve, ""]}', 38, "expect.x.order.1.name", ""),
        ('{max_errors: {"": 0}}', 32, "expect.x.max_errors", "a key is "),
    ],
)
def test_an_empty_span_glob_is_refused_in_one_line(
    make_suite: SuiteFactory, spans: str, col: int, field: str, prefix: str
) -> None:
    text = f"id: a\ninput: {{}}\nexpect:\n  x: {{mode: spans, {spans[1:]}\n"
    error = only_error(make_suite({"cases/a.yaml": text}))
    assert (error["line"], error["col"], error["field"]) == (4, col, field)
    assert error["message"] == (
        f'{prefix}an empty glob ("") matches no span: write a span name or a glob (`*` any '
        'text, `?` one character; "*" every span)'
    )


def test_did_you_mean_names_the_nearest_known_name_or_nothing() -> None:
    assert did_you_mean("trails", ["trials", "timeout_s"]) == " (did you mean 'trials'?)"
    assert did_you_mean("zzz", ["trials", "timeout_s"]) == ""
    assert did_you_mean("trials", ["trials"]) == ""  # the name itself is no suggestion


def test_a_scripted_turns_checks_are_worded_as_the_cases_own(make_suite: SuiteFactory) -> None:
    turn = """\
id: a
input: {{}}
conversation:
  max_turns: 2
  script:
    - say: hi
      expect:
        reply: {}
expect:
  c: {{mode: exact, value: 1}}
"""
    error = only_error(make_suite({"cases/a.yaml": turn.format("{mode: json, schema: 5}")}))
    assert error["message"] == (
        "conversation.script.0.expect.reply.schema: expected a string or a mapping (got 5)"
    )
    error = only_error(
        make_suite({"cases/a.yaml": turn.format("{mode: regex, value: a, negat: true}")})
    )
    assert error["message"].startswith(
        "conversation.script.0.expect.reply.negat: unknown field 'negat' (did you mean 'negate'?)"
    )
