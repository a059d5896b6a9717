"""The span model: names against globs, the tree, the tool calls a trace shows, turns."""

from __future__ import annotations

from caseforge.tracing.spans import (
    MAX_TEXT,
    assign_turns,
    bounded_text,
    from_stored,
    name_matches,
    status_line,
    stored_json,
    tool_calls,
    tree,
)
from tests.tracing.helpers import agent_trace, span


def test_a_name_is_exact_and_a_glob_has_only_star_and_question_mark() -> None:
    assert name_matches("retrieve", "retrieve")
    assert not name_matches("retrieve", "retrieve_document")
    assert name_matches("retrieve_*", "retrieve_document_2")
    assert name_matches("chat ?pt*", "chat gpt-4.1")
    assert not name_matches("Chat *", "chat gpt")  # case-sensitive
    assert name_matches("GET /orders/[id]", "GET /orders/[id]")  # brackets are themselves
    assert not name_matches("GET /orders/[id]", "GET /orders/i")
    assert name_matches("*", "")


def test_the_tree_puts_children_under_parents_in_start_order() -> None:
    roots = tree(agent_trace())
    assert [r["name"] for r in roots] == ["agent workflow"]  # its parent is caseforge's call
    children = roots[0]["children"]
    assert [c["name"] for c in children] == [
        "retrieve",
        "execute_tool lookup_order",
        "chat gpt-fake",
    ]
    assert roots[0]["start_ms"] == 0.0 and children[2]["start_ms"] == 30.0
    assert children[2]["duration_ms"] == 40.0
    assert children[0]["attributes"] == {"documents": 3}


def test_tool_calls_read_from_spans_with_their_arguments_and_results() -> None:
    openinference = span(
        "lookup_order",
        "5",
        "1",
        start_ms=50,
        attributes={
            "openinference.span.kind": "TOOL",
            "tool.name": "lookup_order",
            "input.value": '{"order_id": "ORD-8"}',
            "output.value": "shipped",
        },
    )
    plain_text = span(
        "search", "6", "1", start_ms=60, attributes={"gen_ai.tool.name": "search",
                                                     "gen_ai.tool.call.arguments": "refund policy"}
    )  # fmt: skip
    not_a_tool = span(  # an LLM span naming its tools is no tool call
        "llm",
        "7",
        "1",
        start_ms=70,
        attributes={"openinference.span.kind": "LLM", "tool.name": "x"},
    )
    calls = tool_calls([*agent_trace(), plain_text, openinference, not_a_tool])
    assert calls == [
        {"name": "lookup_order", "args": {"order_id": "ORD-7"}, "result": {"status": "shipped"}},
        {"name": "lookup_order", "args": {"order_id": "ORD-8"}, "result": "shipped"},
        {"name": "search", "args": {"input": "refund policy"}, "result": None},
    ]


def test_a_conversations_spans_carry_the_turn_of_the_call_they_descend_from() -> None:
    spans = [
        span("turn one", "1", "c1"),
        span("deep", "2", "1"),
        span("turn two", "3", "c2"),
        span("lost", "4", "ff"),
    ]
    assign_turns(spans, {"c1".rjust(16, "0"): 1, "c2".rjust(16, "0"): 2})
    assert [s.get("turn") for s in spans] == [1, 1, 2, None]
    single = [span("only", "1", "c1")]
    assign_turns(single, {"c1".rjust(16, "0"): None})  # not a conversation: no turns
    assert "turn" not in single[0]


def test_stored_spans_round_trip_and_long_text_is_cut_saying_so() -> None:
    spans = agent_trace()
    assert from_stored(stored_json(spans, 3)) == (spans, 3)
    assert from_stored(None) == ([], 0)
    text = bounded_text("x" * (MAX_TEXT + 10))
    assert text.startswith("x" * MAX_TEXT) and text.endswith("[10 characters dropped]")


def test_a_status_message_in_one_line_without_a_glued_traceback() -> None:
    glued = "KeyError('no order')Traceback (most recent call last):\n  File 'x.py'\nKeyError"
    assert status_line(glued) == "KeyError('no order')"
    assert status_line("timeout\nretrying") == "timeout"
    assert status_line("x" * 200, 10) == "x" * 9 + "…"
    assert status_line(None) == ""


def test_show_counts_an_attribute_copied_from_the_parent_instead_of_repeating_it() -> None:
    from caseforge.report.model import span_entries
    from caseforge.report.show import span_lines

    shared = {"session.id": "s-1", "metadata": '{"user": "u-9"}'}
    spans = [
        span("agent", "1", attributes=shared),
        span("retrieve", "2", "1", start_ms=1, attributes={**shared, "hits": 3}),
        span("chat", "3", "1", start_ms=2, attributes={**shared, "session.id": "s-2"}),
    ]
    lines = span_lines(span_entries(spans))
    assert sum("session.id = s-1" in line for line in lines) == 1  # the root's own
    assert "      hits = 3" in lines and "      session.id = s-2" in lines  # new or changed
    assert lines.count("      (2 more as its parent's)") == 1  # retrieve: both the same
    assert lines.count("      (1 more as its parent's)") == 1  # chat: metadata the same
