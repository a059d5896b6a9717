"""The case model: every check mode, the shorthand, tool calls, and the JSON Schema."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from caseforge.case.model import MODES, Case, case_json_schema
from caseforge.checks import (
    ExactSetCheck,
    IgnoreCheck,
    IncludeShorthand,
    JudgeCheck,
    MustIncludeCheck,
    MustNotIncludeCheck,
    NumberCheck,
    OutcomeCheck,
    ToolCallsCheck,
)
from caseforge.cli import app


def make(expect: dict[str, object], **extra: object) -> Case:
    return Case.model_validate({"id": "c-1", "input": {"ticket": "x"}, "expect": expect, **extra})


EVERY_MODE = {
    "category": {"mode": "exact", "value": "refund"},
    "flags": {"mode": "exact_set", "values": ["3:conflict", "3:mismatch"]},
    "scope_out": {"mode": "must_include", "values": ["效能"]},
    "banned": {"mode": "must_not_include", "values": ["全额"]},
    "order_id": {"mode": "regex", "value": r"^ORD-\d+$"},
    "amount": {"mode": "number", "value": 6578, "tolerance": 0.01},
    "refund": {"mode": "outcome", "value": None, "oracle": "refund_policy", "args": {"s": 1}},
    "facts": {"mode": "judge", "values": ["按剩余整月退款"]},
    "quality": {"mode": "judge", "rubric": "polite and specific"},
    "goal_wording": {"mode": "ignore", "reason": "wording varies"},
    "payload": {"mode": "json", "schema": {"type": "object"}},
    "spend": {"mode": "cost", "max_usd": 0.05},
    "speed": {"mode": "latency", "max_ms": 2000},
    "trace": {"mode": "spans", "must_have": ["chat *"], "max_errors": 0},
    "short": {"mode": "javascript", "code": "output.length < 100", "field": "reply"},
    "polite": {"mode": "python", "code": "'thanks' in output", "field": "reply"},
    "reply": {"must_include": ["6578"], "must_not_include": ["全额"]},
    "tool_calls": {"must_call": ["get_subscription"], "must_not_call": ["x"], "order": []},
}


def test_every_mode_parses_and_modes_are_complete() -> None:
    case = make(EVERY_MODE)
    modes = {check.mode for check in case.expect.values()}
    assert set(MODES) <= modes
    assert isinstance(case.expect["reply"], IncludeShorthand)
    assert isinstance(case.expect["tool_calls"], ToolCallsCheck)
    assert isinstance(case.expect["refund"], OutcomeCheck) and case.expect["refund"].value is None


def test_shorthand_expands_into_two_checks_on_one_field() -> None:
    case = make({"reply": {"must_include": ["6578"], "must_not_include": ["全额"]}})
    checks = list(case.checks())
    assert [(name, field, type(check)) for name, field, check in checks] == [
        ("reply.must_include", "reply", MustIncludeCheck),
        ("reply.must_not_include", "reply", MustNotIncludeCheck),
    ]


def test_field_override_lets_two_checks_read_one_field() -> None:
    case = make(
        {
            "amount_close": {
                "mode": "number",
                "value": 10,
                "tolerance": 1,
                "field": "refund.amount",
            },
            "amount_exact": {"mode": "exact", "value": 10, "field": "refund.amount"},
        }
    )
    assert [field for _, field, _ in case.checks()] == ["refund.amount", "refund.amount"]


@pytest.mark.parametrize(
    ("check", "fragment"),
    [
        ({"mode": "ignore"}, "reason"),
        ({"mode": "ignore", "reason": ""}, "reason"),
        ({"mode": "outcome"}, "needs `value`"),
        ({"mode": "judge"}, "`values` (facts) or a `rubric`"),
        ({"mode": "number", "value": 1, "tolerance": -1}, "tolerance"),
        ({"mode": "regex", "value": "(unclosed"}, "regular expression"),
        ({"mode": "must_include", "values": []}, "values"),
        ({"mode": "exact_set", "value": ["a"]}, "values"),
        ({"mode": "telepathy", "value": 1}, "mode"),
        ({"value": 1}, "needs `mode`"),
    ],
)
def test_bad_checks_are_rejected(check: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValidationError) as info:
        make({"f": check})
    assert fragment in str(info.value)


def test_tool_call_expectations_under_another_key_say_they_read_the_calls() -> None:
    with pytest.raises(ValidationError, match="say so with `field: tool_calls`"):
        make({"tools": {"must_call": ["a"]}})
    for said in ({"field": "tool_calls"}, {"mode": "tool_calls"}):
        case = make({"tools": {**said, "must_call": ["a"]}, "tool_calls": {"must_call": ["b"]}})
        assert [(name, field) for name, field, _ in case.checks()] == [
            ("tools", "tool_calls"),
            ("tool_calls", "tool_calls"),
        ]
    with pytest.raises(ValidationError, match="`field` is `tool_calls` \\(got 'reply'\\)"):
        make({"tools": {"field": "reply", "must_call": ["a"]}})
    with pytest.raises(ValidationError, match="in both"):
        make({"tool_calls": {"must_call": ["a"], "must_not_call": ["a"]}})


def test_tool_calls_may_be_written_down_as_ignore() -> None:
    case = make({"tool_calls": {"mode": "ignore", "reason": "no tools in this agent"}})
    assert isinstance(case.expect["tool_calls"], IgnoreCheck)


def test_metadata_fields() -> None:
    case = make(
        {"x": {"mode": "exact", "value": 1}},
        tags=["a"],
        source="error-analysis",
        split="test",
        added="2026-10-12",
        clock="2026-10-12T10:00:00+08:00",
        seed=7,
        provenance={"tuple": {"scenario": "cancel"}},
    )
    assert case.added is not None and case.added.isoformat() == "2026-10-12"
    assert case.clock is not None and case.clock.utcoffset() is not None
    with pytest.raises(ValidationError):
        make({"x": {"mode": "exact", "value": 1}}, source="scraped")
    with pytest.raises(ValidationError):
        make({"x": {"mode": "exact", "value": 1}}, colour="red")


def test_category_and_item_fields() -> None:
    case = make(EVERY_MODE, tags=["edge"])
    assert case.category() == "refund"
    assert case.item_fields() == {"flags": ["3:conflict", "3:mismatch"]}
    untagged = make({"x": {"mode": "exact", "value": 1}}, tags=["wallet"])
    assert untagged.category() == "wallet"


def test_json_schema_names_every_mode_and_round_trips() -> None:
    schema = case_json_schema()
    text = json.dumps(schema)
    for mode in MODES:
        assert f'"{mode}"' in text
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0 and json.loads(result.stdout)["title"] == "caseforge case"
    case = make(EVERY_MODE)
    again = Case.model_validate(json.loads(case.model_dump_json(exclude_unset=True)))
    assert again == case


def test_exact_set_pins_the_set_not_the_count() -> None:
    check = make({"f": {"mode": "exact_set", "values": ["a", "b"]}}).expect["f"]
    assert isinstance(check, ExactSetCheck) and check.expected == ["a", "b"]
    judge = make({"f": {"mode": "judge", "values": ["fact"]}}).expect["f"]
    assert isinstance(judge, JudgeCheck)
    number = make({"f": {"mode": "number", "value": 1}}).expect["f"]
    assert isinstance(number, NumberCheck) and number.tolerance == 0.0


def test_the_json_schema_takes_several_tool_call_checks_and_chains() -> None:
    import jsonschema

    case = {
        "id": "a",
        "input": {},
        "expect": {
            "tool_calls": {"must_call": [{"name": "find_user"}], "order": []},
            "writes": {
                "mode": "tool_calls",
                "order": [[{"name": "a"}, {"name": "b"}], [{"name": "c"}]],
            },
            "reads": {"field": "tool_calls", "order": [{"name": "find_user"}, {"name": "a"}]},
            "flags": {"mode": "exact_set", "values": ["x", "x"], "duplicates": "keep"},
            "trace": {"mode": "spans", "order": [["retrieve", "chat *"], [{"name": "x"}]]},
            "spans": {"mode": "spans", "must_have": ["*"], "order": []},
        },
    }
    make(case["expect"])  # the model takes it
    jsonschema.validate(case, case_json_schema())  # and so does an editor
    case["expect"]["flags"]["duplicates"] = "count"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(case, case_json_schema())


def test_the_json_schema_takes_a_matchers_shorthands() -> None:
    """A bare name for a call or a span, and an integer count, as the model takes them."""
    import jsonschema

    schema = case_json_schema()
    expect: dict[str, Any] = {
        "tool_calls": {"must_call": ["find_user", {"name": "refund", "count": 1}]},
        "trace": {"mode": "spans", "must_have": ["chat *", {"name": "retrieve", "count": 2}]},
    }
    case = {"id": "a", "input": {}, "expect": expect}
    make(expect)
    jsonschema.validate(case, schema)
    for wrong in ("", {"name": "refund", "count": -1}, {"name": "refund", "cont": 1}):
        expect["tool_calls"]["must_call"] = [wrong]
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(case, schema)
        with pytest.raises(ValidationError):
            make(expect)
