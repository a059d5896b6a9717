"""tool_calls by name, by arguments (partial, each a value or a value check) and by count."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from caseforge.agent.protocol import AgentResult
from caseforge.case.model import Case
from caseforge.checks import ToolCallsCheck
from caseforge.grade.trial import grade_trial
from caseforge.results import CheckStatus

CALLS = [
    {"name": "get_subscription", "args": {"customer_id": "C023"}},
    {"name": "list_invoices", "args": {"customer_id": "C023", "limit": 3}},
    {
        "name": "create_refund_request",
        "args": {"invoice_id": "INV-2026-0090", "amount_yuan": 6578.0},
    },
]


def verdict(spec: dict[str, Any], calls: list[dict[str, Any]] = CALLS) -> tuple[str, str]:
    found = ToolCallsCheck.model_validate(spec).grade(calls)
    return found.status.value, found.reason


def test_plain_names_keep_working() -> None:
    assert verdict({"must_call": ["get_subscription", "list_invoices"]}) == ("pass", "")
    assert verdict({"must_not_call": ["delete_account"]}) == ("pass", "")
    assert verdict({"order": ["get_subscription", "create_refund_request"]}) == ("pass", "")
    assert verdict({"must_call": ["get_invoice"]}) == (
        "fail",
        "not called: get_invoice (calls: get_subscription, list_invoices, create_refund_request)",
    )
    assert verdict({"order": ["create_refund_request", "get_subscription"]})[0] == "fail"
    assert verdict({"must_call": ["x"]}, ["x", "y"]) == ("pass", "")  # a stored list of names


def test_arguments_match_partially_and_the_closest_call_says_how_it_differed() -> None:
    wanted = {"name": "create_refund_request", "args": {"invoice_id": "INV-2026-0091"}}
    status, reason = verdict({"must_call": [wanted]})
    assert status == "fail"
    assert reason == (
        'not called: create_refund_request(invoice_id="INV-2026-0091") — closest: '
        'create_refund_request(invoice_id="INV-2026-0090", amount_yuan=6578.0): '
        'invoice_id expected "INV-2026-0091", got "INV-2026-0090"'
    )
    near = {"invoice_id": "INV-2026-0090", "amount_yuan": {"mode": "number", "value": 6578.004,
                                                            "tolerance": 0.01}}  # fmt: skip
    assert verdict({"must_call": [{"name": "create_refund_request", "args": near}]})[0] == "pass"
    pattern = {"invoice_id": {"mode": "regex", "value": r"^INV-2026-\d{4}$"}}
    assert verdict({"must_call": [{"name": "create_refund_request", "args": pattern}]})[0] == "pass"
    missing = verdict({"must_call": [{"name": "list_invoices", "args": {"status": "paid"}}]})
    assert missing[0] == "fail" and "status missing" in missing[1]
    off = {"amount_yuan": {"mode": "number", "value": 6000, "tolerance": 1}}
    reason = verdict({"must_call": [{"name": "create_refund_request", "args": off}]})[1]
    assert "amount_yuan: 6578 is 578 from 6000 (tolerance 1)" in reason


def test_counts_catch_a_skipped_second_write() -> None:
    two_writes = [
        {"name": "create_refund_request", "args": {"invoice_id": "INV-1"}},
        {"name": "create_refund_request", "args": {"invoice_id": "INV-2"}},
    ]
    one_write = two_writes[:1]
    twice = {"must_call": [{"name": "create_refund_request", "count": 2}]}
    assert verdict(twice, two_writes) == ("pass", "")
    assert verdict(twice, one_write) == ("fail", "create_refund_request 2×: called 1×, expected 2×")
    assert verdict({"must_call": ["create_refund_request"]}, one_write)[0] == "pass"  # as before
    each = {"must_call": [
        {"name": "create_refund_request", "args": {"invoice_id": "INV-1"}, "count": 1},
        {"name": "create_refund_request", "args": {"invoice_id": "INV-2"}, "count": 1},
    ]}  # fmt: skip
    assert verdict(each, two_writes)[0] == "pass" and verdict(each, one_write)[0] == "fail"
    ranged = {"must_call": [{"name": "list_invoices", "count": {"min": 1, "max": 2}}]}
    assert verdict(ranged)[0] == "pass"
    assert verdict(ranged, [*CALLS, CALLS[1], CALLS[1]]) == (
        "fail",
        "list_invoices 1–2×: called 3×, expected 1–2×",
    )


def test_must_not_call_with_arguments_forbids_only_that_call() -> None:
    forbid = {"name": "create_refund_request", "args": {"invoice_id": "INV-2026-0091"}}
    assert verdict({"must_not_call": [forbid]}) == ("pass", "")
    forbid["args"] = {"invoice_id": "INV-2026-0090"}
    assert verdict({"must_not_call": [forbid]}) == (
        "fail",
        'called but forbidden: create_refund_request(invoice_id="INV-2026-0090")',
    )


def test_order_over_matchers_and_max_calls() -> None:
    order = [
        {"name": "list_invoices", "args": {"limit": 3}},
        {"name": "create_refund_request", "args": {"invoice_id": "INV-2026-0090"}},
    ]
    assert verdict({"order": order})[0] == "pass"
    assert verdict({"order": list(reversed(order))})[0] == "fail"
    assert verdict({"max_calls": 3}) == ("pass", "")
    assert verdict({"max_calls": 2}) == ("fail", "3 calls in all, at most 2 allowed")
    assert verdict({"max_calls": {"*": 5, "list_invoices": 0}}) == (
        "fail",
        "1 calls of list_invoices, at most 0 allowed",
    )


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ({"must_call": ["a"], "must_not_call": ["a"]}, "in both must_call and must_not_call: a"),
        ({"must_not_call": [{"name": "a", "count": 1}]}, "must_not_call takes no count"),
        ({"must_call": [{"name": "a", "count": {"min": 3, "max": 1}}]}, "count.max (1) is below"),
        ({"must_call": [{"name": "a", "args": {"x": {"mode": "judge"}}}]}, "not a value check"),
        ({"must_call": [{"name": "a", "args": {"x": {"mode": "number"}}}]}, "value"),
        ({"max_calls": -1}, "max_calls must be 0 or more"),
        ({"must_call": [{"name": "a", "argz": {}}]}, "Extra inputs"),
    ],
)
def test_mistakes_are_refused(spec: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(says)):
        ToolCallsCheck.model_validate(spec)


def test_graded_with_the_recorded_arguments_and_rendered_in_one_line() -> None:
    case = Case.model_validate(
        {
            "id": "t",
            "input": {},
            "expect": {
                "tool_calls": {
                    "must_call": [
                        "get_subscription",
                        {"name": "create_refund_request", "args": {"invoice_id": "INV-2026-0090"},
                         "count": 1},
                    ],
                    "max_calls": 4,
                }
            },
        }
    )  # fmt: skip
    result = AgentResult.model_validate({"output": {}, "reply": "", "tool_calls": CALLS})
    status, checks = grade_trial(case, result)
    assert status.value == "pass" and checks[0].status is CheckStatus.PASS
    assert checks[0].actual[2] == CALLS[2]  # the stored actual holds the arguments
    assert case.checks()[0][2].render() == (
        'tool_calls: call get_subscription, create_refund_request(invoice_id="INV-2026-0090") '
        "1×; max_calls 4"
    )


# --- several chains (a partial order) and several tool-call checks per case --------------------

WRITES = [
    {"name": "cancel_order", "args": {"order_id": "#W1"}},
    {"name": "update_address", "args": {"order_id": "#W2"}},
    {"name": "refund", "args": {"order_id": "#W1"}},
    {"name": "notify", "args": {"order_id": "#W2"}},
]


def test_each_chain_of_a_partial_order_holds_on_its_own() -> None:
    chains = {"order": [["cancel_order", "refund"], ["update_address", "notify"]]}
    assert verdict(chains, WRITES) == ("pass", "")  # interleaved: each chain holds
    # one chain written out would demand one total order the agent need not follow
    total = {"order": ["update_address", "notify", "cancel_order", "refund"]}
    assert verdict(total, WRITES)[0] == "fail"
    swapped = [WRITES[2], WRITES[1], WRITES[0], WRITES[3]]
    assert verdict(chains, swapped) == (
        "fail",
        "not in order cancel_order -> refund (calls: refund, update_address, cancel_order, notify)",
    )
    both = [WRITES[3], WRITES[2], WRITES[1], WRITES[0]]
    status, reason = verdict(chains, both)
    assert reason.startswith(
        "not in order cancel_order -> refund; not in order update_address -> notify (calls: "
    )
    cancel = {"name": "cancel_order", "args": {"order_id": "#W1"}}
    update = {"name": "update_address", "args": {"order_id": "#W9"}}
    with_args = {"order": [[cancel, "refund"], [update, "notify"]]}
    status, reason = verdict(with_args, WRITES)
    assert status == "fail" and reason.startswith(
        'not in order update_address(order_id="#W9") -> notify (calls:'
    )


@pytest.mark.parametrize(
    ("order", "says"),
    [
        (["a", ["b", "c"]], "not a mix of calls and chains"),
        ([["a", "b"], []], "`order` holds an empty chain"),
        ([["a", {"nme": "b"}]], "Extra inputs"),
    ],
)
def test_a_malformed_order_is_refused(order: list[Any], says: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(says)):
        ToolCallsCheck.model_validate({"order": order})


def test_one_chain_is_kept_as_written_and_several_read_back() -> None:
    a, b, c = ({"name": name} for name in "abc")
    one = ToolCallsCheck.model_validate({"order": ["a", "b"]})
    assert one.chains == [one.order]
    assert one.expected == {"order": [a, b]}
    several = ToolCallsCheck.model_validate({"mode": "tool_calls", "order": [["a", "b"], ["c"]]})
    assert several.expected == {"field": "tool_calls", "order": [[a, b], [c]]}
    assert ToolCallsCheck.model_validate(several.expected) == several
    assert several.render() == "tool_calls: in order a, b; in order c"


def test_a_case_with_two_tool_call_checks_grades_each() -> None:
    case = Case.model_validate(
        {
            "id": "t",
            "input": {},
            "expect": {
                "tool_calls": {"must_call": ["cancel_order"], "must_not_call": ["delete_user"]},
                "writes": {
                    "field": "tool_calls",
                    "order": [["cancel_order", "refund"], ["update_address", "notify"]],
                },
                "lookups": {"mode": "tool_calls", "must_call": ["find_user"], "turn": 1},
            },
        }
    )
    calls = [{**call, "turn": 2} for call in WRITES]
    result = AgentResult.model_validate({"tool_calls": calls})
    _, checks = grade_trial(case, result)
    found = {c.name: (c.status.value, c.reason) for c in checks}
    assert found["tool_calls"] == ("pass", "")
    assert found["writes"] == ("pass", "")
    assert found["lookups"] == ("fail", "not called: find_user (calls: none)")  # not in turn 1
    chains = [["cancel_order", "refund"], ["update_address", "notify"]]
    assert next(c for c in checks if c.name == "writes").expected == {
        "field": "tool_calls",
        "order": [[{"name": name} for name in chain] for chain in chains],
    }
