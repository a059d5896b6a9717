"""Every check mode, tool calls, outcomes, the approval pause and the case-trial status."""

from __future__ import annotations

from typing import Any

import pytest

from caseforge.agent.protocol import AgentResult, ToolCall
from caseforge.case.model import Case
from caseforge.checks import outcome_matches
from caseforge.grade import GradeOptions, grade_trial
from caseforge.results import CheckStatus, TrialStatus


def case(expect: dict[str, Any]) -> Case:
    return Case.model_validate({"id": "c", "input": {}, "expect": expect})


def result(output: dict[str, Any], **extra: Any) -> AgentResult:
    return AgentResult.model_validate({"output": output, **extra})


def one(expect: dict[str, Any], output: dict[str, Any], **extra: Any) -> tuple[str, str]:
    _, checks = grade_trial(case(expect), result(output, **extra))
    assert len(checks) == 1
    return checks[0].status.value, checks[0].reason


@pytest.mark.parametrize(
    ("check", "actual", "status", "reason"),
    [
        ({"mode": "exact", "value": "refund"}, "refund", "pass", ""),
        (
            {"mode": "exact", "value": "refund"},
            "billing",
            "fail",
            'expected "refund", got "billing"',
        ),
        ({"mode": "exact", "value": 3}, 3.0, "pass", ""),
        ({"mode": "exact", "value": True}, 1, "fail", "expected true, got 1"),
        ({"mode": "exact_set", "values": ["3:conflict", "4:u"]}, ["4:u", "3:conflict"], "pass", ""),
        (
            {"mode": "exact_set", "values": ["a", "b", "c", "d"]},
            ["a", "b", "c", "x"],
            "fail",
            "missing d; unexpected x",
        ),
        ({"mode": "exact_set", "values": ["a"]}, "a", "fail", 'expected a list, got "a"'),
        ({"mode": "must_include", "values": ["結帳頁效能"]}, ["結帳頁效能問題"], "pass", ""),
        ({"mode": "must_include", "values": ["6578"]}, "退您 6578 元", "pass", ""),
        (
            {"mode": "must_include", "values": ["6578", "x"]},
            "6578",
            "fail",
            'does not include ["x"]',
        ),
        ({"mode": "must_not_include", "values": ["全额"]}, "按月退", "pass", ""),
        ({"mode": "must_not_include", "values": ["全额"]}, "全额退款", "fail", 'includes ["全额"]'),
        ({"mode": "regex", "value": r"^INV-\d{4}-\d{4}$"}, "INV-2026-0091", "pass", ""),
        ({"mode": "regex", "value": r"^INV-\d+$"}, "inv 9", "fail", '"inv 9" does not match'),
        ({"mode": "number", "value": 6578, "tolerance": 0.01}, 6578.004, "pass", ""),
        ({"mode": "number", "value": 6578, "tolerance": 0.01}, "6578.5", "fail", "0.5 from 6578"),
        ({"mode": "number", "value": 1}, "abc", "fail", 'not a number: "abc"'),
    ],
)
def test_modes(check: dict[str, Any], actual: Any, status: str, reason: str) -> None:
    got_status, got_reason = one({"f": check}, {"f": actual})
    assert got_status == status
    assert reason in got_reason


def test_missing_field_fails_with_reason() -> None:
    assert one({"f": {"mode": "exact", "value": 1}}, {}) == ("fail", "no field 'f' in the output")


def test_dotted_paths_and_reserved_fields() -> None:
    expect = {
        "amount": {"mode": "number", "value": 5, "field": "refund.amount"},
        "reply": {"must_include": ["hi"], "must_not_include": ["bye"]},
    }
    status, checks = grade_trial(case(expect), result({"refund": {"amount": 5}}, reply="hi there"))
    assert status is TrialStatus.PASS
    assert [c.name for c in checks] == ["amount", "reply.must_include", "reply.must_not_include"]


def test_ignore_is_skipped_and_judge_is_not_judged() -> None:
    expect = {
        "x": {"mode": "exact", "value": 1},
        "wording": {"mode": "ignore", "reason": "varies"},
        "facts": {"mode": "judge", "values": ["a fact"]},
    }
    status, checks = grade_trial(case(expect), result({"x": 1}))
    assert [c.status for c in checks] == [
        CheckStatus.PASS,
        CheckStatus.SKIPPED,
        CheckStatus.NOT_JUDGED,
    ]
    assert status is TrialStatus.INCOMPLETE  # never a silent pass
    skipped, checks = grade_trial(
        case(expect), result({"x": 1}), options=GradeOptions(judge="skip")
    )
    assert skipped is TrialStatus.PASS and checks[2].status is CheckStatus.SKIPPED


def test_tool_calls_must_call_must_not_call_and_order() -> None:
    expect = {
        "tool_calls": {
            "must_call": ["list_invoices"],
            "must_not_call": ["create_refund_request"],
            "order": ["get_subscription", "list_invoices"],
        }
    }
    calls = [ToolCall(name="get_subscription"), ToolCall(name="list_invoices")]
    assert one(expect, {}, tool_calls=calls) == ("pass", "")
    status, reason = one(
        expect,
        {},
        tool_calls=[
            ToolCall(name="list_invoices"),
            ToolCall(name="get_subscription"),
            ToolCall(name="create_refund_request"),
        ],
    )
    assert status == "fail"
    assert "called but forbidden: create_refund_request" in reason
    assert "not in order get_subscription -> list_invoices" in reason
    assert one(expect, {}, tool_calls=[])[1].startswith("not called: list_invoices")


def test_outcome_compares_probe_result_with_alternatives() -> None:
    expected = {"invoice_id": "INV-2026-0123", "amount_yuan": 2392.0}
    other = {"invoice_id": "INV-2026-0026", "amount_yuan": 2392.0}
    assert outcome_matches(expected, {"invoice_id": "INV-2026-0123", "amount_yuan": 2392})
    assert not outcome_matches(expected, other)  # alternatives are the check's any_of
    assert not outcome_matches(expected, {"invoice_id": "INV-2026-0123", "amount_yuan": 7176.0})
    assert not outcome_matches(expected, [expected, expected])  # two requests filed
    assert outcome_matches(None, None) and not outcome_matches(None, {"invoice_id": "x"})

    expect = {"refund": {"mode": "outcome", "value": expected, "any_of": [other]}}
    for left, verdict in [
        (other, TrialStatus.PASS),
        (expected, TrialStatus.PASS),
        ({"invoice_id": "INV-2026-0999", "amount_yuan": 2392.0}, TrialStatus.FAIL),
    ]:
        status, checks = grade_trial(case(expect), result({}), outcomes={"refund": left})
        assert status is verdict, checks[0].reason
    status, checks = grade_trial(case(expect), result({}), outcomes=None)
    assert status is TrialStatus.ERROR and "no outcome_probe" in checks[0].reason
    status, checks = grade_trial(case(expect), result({}), outcomes={}, outcome_error="boom")
    assert status is TrialStatus.ERROR and checks[0].reason == "boom"


def test_approval_pause_makes_reply_checks_cannot_judge() -> None:
    expect = {
        "needs_approval": {"mode": "exact", "value": True},
        "reply": {"must_include": ["6578"], "must_not_include": ["已退款"]},
        "facts": {"mode": "judge", "values": ["需要主管审批"]},
        "refund": {
            "mode": "outcome",
            "value": {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0},
        },
    }
    paused = result({"needs_approval": True}, reply="", paused_for_approval=True)
    outcomes = {"refund": {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0}}
    status, checks = grade_trial(case(expect), paused, outcomes)
    by_name = {c.name: c.status for c in checks}
    assert by_name["reply.must_include"] is CheckStatus.CANNOT_JUDGE
    assert by_name["reply.must_not_include"] is CheckStatus.CANNOT_JUDGE
    assert by_name["facts"] is CheckStatus.CANNOT_JUDGE
    assert by_name["approval_pause"] is CheckStatus.PASS
    assert status is TrialStatus.PASS  # the pause and the intercepted request were right
    # A pause the case does not expect fails.
    no_approval = {"needs_approval": {"mode": "exact", "value": False}}
    status, checks = grade_trial(case(no_approval), paused)
    assert status is TrialStatus.FAIL
    assert checks[-1].name == "approval_pause" and "does not expect approval" in checks[-1].reason
    # The wrong intercepted request still fails while paused.
    wrong = {"refund": {"invoice_id": "INV-2026-0051", "amount_yuan": 3564.0}}
    assert grade_trial(case(expect), paused, wrong)[0] is TrialStatus.FAIL


def test_each_result_carries_expected_actual_and_reason() -> None:
    _, checks = grade_trial(case({"f": {"mode": "exact", "value": "a"}}), result({"f": "b"}))
    data = checks[0].to_json()
    assert data == {
        "name": "f",
        "mode": "exact",
        "status": "fail",
        "expected": "a",
        "actual": "b",
        "reason": 'expected "a", got "b"',
    }


@pytest.mark.parametrize(
    ("check", "actual", "status"),
    [
        ({"mode": "must_include", "values": ["3:conflict"]}, ["13:conflict"], "fail"),
        ({"mode": "must_include", "values": ["3:conflict"]}, ["AC 3:conflict (AC2)"], "pass"),
        ({"mode": "must_include", "values": ["結帳頁效能"]}, ["結帳頁效能問題"], "pass"),
        ({"mode": "must_not_include", "values": ["refund"]}, ["get_refund_policy"], "pass"),
        ({"mode": "must_not_include", "values": ["refund"]}, ["refund"], "fail"),
        ({"mode": "exact_set", "values": [1, "2"]}, ["1", 2], "fail"),
        ({"mode": "exact_set", "values": [{"a": 1}]}, [{"a": 1}], "pass"),
    ],
)
def test_list_items_match_whole_phrases_and_keep_their_types(
    check: dict[str, Any], actual: Any, status: str
) -> None:
    assert one({"f": check}, {"f": actual})[0] == status
