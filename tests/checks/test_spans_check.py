"""The ``spans`` check: the tool-call grammar on the agent's spans (a name or glob with
partial attributes, a count, an order), a longest duration, a most error spans; and a
case-trial with no spans is not judged, never passed or failed."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from caseforge.agent.protocol import AgentResult, parse_response
from caseforge.case.model import Case
from caseforge.checks.spans import NO_SPANS, SpansCheck
from caseforge.grade.trial import grade_trial
from caseforge.results import CheckStatus, TrialStatus
from tests.tracing.helpers import agent_trace, span

SPANS = agent_trace()


def verdict(spec: dict[str, Any], spans: list[Any] = SPANS) -> tuple[str, str]:
    found = SpansCheck.model_validate({"mode": "spans", **spec}).grade(spans)
    return found.status.value, found.reason


def test_names_and_globs_with_counts() -> None:
    assert verdict({"must_have": ["retrieve", "chat *"]}) == ("pass", "")
    assert verdict({"must_have": [{"name": "*", "count": 4}]}) == ("pass", "")
    assert verdict({"must_have": [{"name": "*", "count": {"max": 3}}]}) == (
        "fail",
        "*: 4 spans, expected 0–3×",
    )
    assert verdict({"must_have": ["rerank"]}) == (
        "fail",
        "no span rerank (spans: agent workflow, retrieve, execute_tool lookup_order, "
        "chat gpt-fake)",
    )


def test_attributes_match_partially_each_a_value_or_a_value_check() -> None:
    tool = {"name": "execute_tool *", "attributes": {"gen_ai.tool.name": "lookup_order"}}
    assert verdict({"must_have": [tool]}) == ("pass", "")
    checked = {"name": "retrieve", "attributes": {"documents": {"mode": "number", "value": 3}}}
    assert verdict({"must_have": [checked]}) == ("pass", "")
    wrong = {"name": "execute_tool *", "attributes": {"gen_ai.tool.name": "cancel_order"}}
    status, reason = verdict({"must_have": [wrong]})
    assert status == "fail"
    assert reason == (
        'no span execute_tool *(gen_ai.tool.name="cancel_order") — closest: a span '
        'execute_tool lookup_order: gen_ai.tool.name expected "cancel_order", got "lookup_order"'
    )
    assert verdict({"must_not_have": [wrong]}) == ("pass", "")
    assert verdict({"must_not_have": ["chat *"]}) == (
        "fail",
        "forbidden span chat *: 1× (chat gpt-fake)",
    )


def test_order_is_by_start_time_whatever_order_the_spans_came_in() -> None:
    assert verdict({"order": ["retrieve", "execute_tool *", "chat *"]}) == ("pass", "")
    status, reason = verdict({"order": ["chat *", "retrieve"]})
    assert status == "fail"
    assert reason.startswith("not in order chat * -> retrieve (spans: agent workflow, retrieve,")


def test_order_takes_several_chains_each_holding_on_its_own() -> None:
    """A partial order, as in ``tool_calls``: the workflow starts before the retrieval, the
    tool call before the model call, and nothing is said between the two pairs."""
    chains = [["agent workflow", "retrieve"], ["execute_tool *", "chat *"]]
    assert verdict({"order": chains}) == ("pass", "")
    # the same entries as one chain say more (the tool call after the retrieval too)
    assert verdict({"order": [*chains[1], *chains[0]]})[0] == "fail"
    # only the broken chain is named, each on its own
    status, reason = verdict({"order": [["retrieve", "chat *"], ["chat *", "retrieve"]]})
    assert status == "fail"
    assert reason.startswith("not in order chat * -> retrieve (spans: ")
    assert "retrieve -> chat *" not in reason
    both = [["chat *", "retrieve"], [{"name": "execute_tool *", "count": 1}, "agent workflow"]]
    status, reason = verdict({"order": both})
    assert reason.startswith(
        "not in order chat * -> retrieve; not in order execute_tool * 1× -> agent workflow "
        "(spans: agent workflow, retrieve, execute_tool lookup_order, chat gpt-fake)"
    )
    check = SpansCheck.model_validate({"mode": "spans", "order": chains})
    assert check.render() == (
        "spans: in order agent workflow, retrieve; in order execute_tool *, chat *"
    )
    written = [[{"name": name} for name in chain] for chain in chains]
    assert check.expected == {"order": written}  # two chains, as written


def test_a_longest_duration_per_span_or_for_a_percentile() -> None:
    assert verdict({"must_have": [{"name": "chat *", "max_duration_ms": 40}]}) == ("pass", "")
    assert verdict({"must_have": [{"name": "*", "max_duration_ms": 20}]}) == (
        "fail",
        "*: 2 spans over 20 ms (agent workflow 90.0 ms, chat gpt-fake 40.0 ms)",
    )
    # durations 5, 12, 40, 90: the 50th percentile is 12 ms, the 75th 40 ms
    assert verdict({"must_have": [{"name": "*", "max_duration_ms": 12, "percentile": 50}]})[0] == (
        "pass"
    )
    assert verdict({"must_have": [{"name": "*", "max_duration_ms": 12, "percentile": 75}]}) == (
        "fail",
        "*: p75 of 4 spans took 40.0 ms, over 12 ms",
    )
    # a bound without requiring the span: count {min: 0}
    bound = {"name": "rerank", "count": {"min": 0}, "max_duration_ms": 1}
    assert verdict({"must_have": [bound]}) == ("pass", "")


def test_error_spans_in_all_or_by_name() -> None:
    failing = [*SPANS, span("retry chat", "9", "1", status="error", message="HTTP 429")]
    assert verdict({"max_errors": 0}) == ("pass", "")
    assert verdict({"max_errors": 0}, failing) == (
        "fail",
        "1 error span, at most 0 allowed: retry chat (HTTP 429)",
    )
    assert verdict({"max_errors": {"*": 1, "retry *": 0}}, failing) == (
        "fail",
        "1 error span named retry *, at most 0 allowed: retry chat (HTTP 429)",
    )
    assert verdict({"max_errors": {"chat *": 0}}, failing) == ("pass", "")


def test_no_spans_at_all_is_not_judged_and_says_how_to_instrument() -> None:
    assert verdict({"must_not_have": ["*retry*"]}, []) == ("not_judged", NO_SPANS)
    assert "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" in NO_SPANS and "caseforge[otel]" in NO_SPANS


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "a spans check needs must_have, must_not_have, order or max_errors"),
        ({"must_not_have": [{"name": "x", "count": 1}]}, "must_not_have takes no count"),
        ({"max_errors": -1}, "max_errors must be 0 or more"),
        ({"must_have": [{"name": "x", "percentile": 90}]}, "`percentile` goes with"),
        ({"must_have": [{"name": "x", "count": {"min": 3, "max": 1}}]}, "count.max (1)"),
        (
            {"must_have": [{"name": "x", "attributes": {"a": {"mode": "judge"}}}]},
            "attributes.a: mode 'judge' is not a value check",
        ),
        ({"must_have": [{"name": "x"}], "field": "reply"}, "reads the whole case-trial"),
        ({"order": ["a", ["b", "c"]]}, "not a mix of spans and chains"),
        ({"order": [["a", "b"], []]}, "`order` holds an empty chain"),
    ],
)
def test_mistakes_are_refused_naming_what(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as raised:
        SpansCheck.model_validate({"mode": "spans", **spec})
    assert message in str(raised.value)


def case_with(expect: dict[str, Any]) -> Case:
    return Case.model_validate({"id": "c1", "input": {"q": "x"}, "expect": expect})


def test_a_trial_without_spans_is_incomplete_and_with_them_is_graded() -> None:
    case = case_with(
        {
            "reply": {"mode": "must_include", "values": ["ok"]},
            "trace": {"mode": "spans", "must_have": ["retrieve"], "max_errors": 0},
        }
    )
    result = AgentResult(reply="ok")
    status, checks = grade_trial(case, result)
    assert status is TrialStatus.INCOMPLETE
    assert checks[1].status is CheckStatus.NOT_JUDGED and checks[1].reason == NO_SPANS
    status, checks = grade_trial(case, result, spans=SPANS)
    assert status is TrialStatus.PASS
    assert checks[1].actual == {
        "spans": 4,
        "errors": 0,
        "names": ["agent workflow", "retrieve", "execute_tool lookup_order", "chat gpt-fake"],
    }
    status, checks = grade_trial(
        case, result, spans=[*SPANS, span("boom", "8", "1", status="error")]
    )
    assert status is TrialStatus.FAIL


def test_tool_calls_read_from_spans_grade_like_reported_ones() -> None:
    case = case_with(
        {
            "tool_calls": {
                "must_call": [{"name": "lookup_order", "args": {"order_id": "ORD-7"}}],
                "must_not_call": ["cancel_order"],
            },
            "called": {"mode": "exact_set", "field": "tool_calls", "values": ["lookup_order"]},
        }
    )
    reported = AgentResult(
        tool_calls=[{"name": "lookup_order", "args": {"order_id": "ORD-7"}}]  # type: ignore[list-item]
    )
    _, by_agent = grade_trial(case, reported, spans=SPANS)
    _, by_spans = grade_trial(case, AgentResult(), spans=SPANS)
    assert [c.status for c in by_agent] == [c.status for c in by_spans] == [CheckStatus.PASS] * 2
    assert [c.reason for c in by_agent] == ["", ""]  # the agent's own calls: spans unread
    assert all("derived from the agent's spans" in c.reason for c in by_spans)
    wrong = [s for s in SPANS if "tool" not in s["name"]] + [
        span("execute_tool x", "9", "1", attributes={"gen_ai.tool.name": "cancel_order"})
    ]
    _, failing = grade_trial(case, AgentResult(), spans=wrong)
    assert failing[0].status is CheckStatus.FAIL
    assert "called but forbidden: cancel_order" in failing[0].reason
    assert "derived from the agent's spans" in failing[0].reason


def test_calls_neither_reported_nor_traced_are_not_judged_never_passed() -> None:
    """An agent that leaves ``tool_calls`` out and whose spans never arrived (no SDK, a
    refused export, an unreachable receiver) says nothing about its calls: a forbidden call
    cannot pass, a required one cannot fail. ``tool_calls: []`` is a report of none."""
    case = case_with(
        {
            "tool_calls": {"must_not_call": ["lookup_order"]},
            "called": {"mode": "must_include", "field": "tool_calls", "values": ["lookup_order"]},
            "reply": {"mode": "must_include", "values": ["ok"]},
        }
    )
    silent = parse_response({"reply": "ok"})
    assert silent.tool_calls_given is False
    status, checks = grade_trial(case, silent, spans=None)
    assert status is TrialStatus.INCOMPLETE
    assert [c.status for c in checks] == [
        CheckStatus.NOT_JUDGED, CheckStatus.NOT_JUDGED, CheckStatus.PASS,
    ]  # fmt: skip
    assert "reported no `tool_calls` and sent no spans" in checks[0].reason
    # the same silent agent with spans that show the forbidden call: graded, and failed
    status, checks = grade_trial(case, silent, spans=SPANS)
    assert [c.status for c in checks[:2]] == [CheckStatus.FAIL, CheckStatus.PASS]
    # spans that show no tool call at all: it called none, graded on the spans
    quiet = [s for s in SPANS if "tool" not in s["name"]]
    status, checks = grade_trial(case, silent, spans=quiet)
    assert status is TrialStatus.FAIL
    assert checks[0].status is CheckStatus.PASS and checks[1].status is CheckStatus.FAIL
    assert "derived from the agent's spans" in checks[1].reason
    # an agent that says it called nothing is graded on that, spans or not
    empty = parse_response({"reply": "ok", "tool_calls": []})
    assert empty.tool_calls_given is True
    status, checks = grade_trial(case, empty)
    assert [c.status for c in checks] == [CheckStatus.PASS, CheckStatus.FAIL, CheckStatus.PASS]
    # stored and read back (a rescore): the same verdicts
    again = AgentResult.model_validate_json(silent.model_dump_json())
    assert again.tool_calls_given is False
    assert "tool_calls_given" not in empty.model_dump_json()  # stored only when False
    assert grade_trial(case, again)[0] is TrialStatus.INCOMPLETE


def test_a_spans_check_refuses_what_it_cannot_use_and_keeps_counts_in_start_order() -> None:
    for extra, said in (
        ({"field": "reply"}, "`field`: a spans check reads the whole case-trial"),
        ({"oracle": "spans_of"}, "`oracle`: a spans check's expectations are written in the"),
    ):
        with pytest.raises(ValidationError, match=said):
            SpansCheck.model_validate({"mode": "spans", "must_have": ["*"], **extra})
    from caseforge.reference import modes_reference

    text = modes_reference()
    spans_part = text[text.index("### `spans`") : text.index("### `tool_calls`")]
    assert "| `field` |" not in spans_part and "| `oracle` |" not in spans_part
    assert "| `must_have` |" in spans_part
    check = SpansCheck.model_validate({"mode": "spans", "must_have": ["*"]})
    late, early = span("late", "2", start_ms=5), span("early", "3", start_ms=1)
    kept = check.kept([late, early, span("early", "4", start_ms=2)])
    assert kept == {"spans": 3, "errors": 0, "names": ["early ×2", "late"]}
