"""Spans written by hand, as caseforge keeps them, for the tracing and check tests."""

from __future__ import annotations

from typing import Any

from caseforge.tracing.spans import SpanData

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def span(
    name: str,
    span_id: str,
    parent: str | None = None,
    *,
    start_ms: float = 0.0,
    took_ms: float = 1.0,
    status: str = "unset",
    message: str | None = None,
    attributes: dict[str, Any] | None = None,
) -> SpanData:
    """One span, ``took_ms`` long from ``start_ms`` after a fixed instant."""
    start = 1_700_000_000_000_000_000 + int(start_ms * 1e6)
    data: SpanData = {
        "trace_id": TRACE,
        "span_id": span_id.rjust(16, "0"),
        "parent_id": parent.rjust(16, "0") if parent else None,
        "name": name,
        "kind": "internal",
        "start_ns": start,
        "end_ns": start + int(took_ms * 1e6),
        "status": status,
        "attributes": dict(attributes or {}),
        "events": [],
    }
    if message:
        data["status_message"] = message
    return data


def agent_trace() -> list[SpanData]:
    """An agent's trace: a workflow, a retrieval, a tool call, a model call (listed out of
    order, as an exporter sends them: children first)."""
    return [
        span(
            "chat gpt-fake",
            "4",
            "1",
            start_ms=30,
            took_ms=40,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-fake"},
        ),
        span("agent workflow", "1", "a", start_ms=0, took_ms=90),
        span("retrieve", "2", "1", start_ms=1, took_ms=12, attributes={"documents": 3}),
        span(
            "execute_tool lookup_order",
            "3",
            "1",
            start_ms=14,
            took_ms=5,
            attributes={
                "gen_ai.tool.name": "lookup_order",
                "gen_ai.tool.call.arguments": '{"order_id": "ORD-7"}',
                "gen_ai.tool.call.result": '{"status": "shipped"}',
            },
        ),
    ]
