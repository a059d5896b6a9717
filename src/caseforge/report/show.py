"""One case-trial, whole: what ``caseforge show RUN [CASE]`` prints for debugging a failure."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from caseforge.errors import UsageError
from caseforge.report.model import SpanEntry, span_entries
from caseforge.results import CheckResult, TrialRecord, TrialStatus
from caseforge.store.db import RunStore
from caseforge.tracing.spans import from_stored, status_line, tool_calls


class FixtureUse(BaseModel):
    """How a case-trial used the suite's fixtures, request by request, in call order."""

    mode: str
    replayed: list[str] = Field(default_factory=list)
    recorded: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)


class TrialView(BaseModel):
    """Everything stored about one case-trial."""

    run_id: str
    case_id: str
    trial: int
    status: TrialStatus
    input: dict[str, JsonValue] = Field(default_factory=dict)
    output: dict[str, JsonValue] | None = None
    reply: str | None = None
    tool_calls: list[dict[str, JsonValue]] = Field(default_factory=list)
    transcript: list[dict[str, JsonValue]] = Field(
        default_factory=list, description="A multi-turn case's messages, with each turn."
    )
    ended_by: str | None = None
    user_usage: dict[str, JsonValue] | None = Field(
        None, description="A model-played user's tokens and cost, apart from the agent's."
    )
    outcomes: dict[str, JsonValue] | None = Field(
        None, description="What the suite's outcome probe read from the trial's workspace."
    )
    fixtures: FixtureUse | None = Field(
        None, description="Requests served from fixtures, recorded into them, or missing."
    )
    checks: list[CheckResult] = Field(default_factory=list)
    error: str | None = Field(
        None, description="The agent's error in full: its traceback, or a command's stderr."
    )
    log: str | None = Field(
        None,
        description="What the agent's side wrote: a command's stderr, an in-process agent's "
        "or hook's prints (the head and tail kept).",
    )
    log_dropped: int = Field(0, description="Bytes of the log dropped between head and tail.")
    tool_calls_source: Literal["agent", "spans"] | None = Field(
        None,
        description="Where `tool_calls` come from: the agent's answer, or its spans (it "
        "reported none).",
    )
    trace_id: str | None = Field(None, description="The case-trial's trace id.")
    spans: list[SpanEntry] = Field(
        default_factory=list,
        description="The agent's OpenTelemetry spans as a tree, with durations, attributes "
        "and errors.",
    )
    span_count: int = Field(0, description="How many spans were kept.")
    spans_dropped: int = Field(0, description="Spans past the 2,000 kept, dropped.")
    latency_s: float = 0.0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0


def trial_view(
    store: RunStore, run_id: str, case_id: str | None = None, trial: int | None = None
) -> TrialView:
    """The stored case-trial; by default the first that did not pass (else the first).

    Read by its key: one result row and one case of the snapshot, whatever the run's size."""
    store.get_run(run_id)  # an unknown run is named before anything else
    row = store.result(run_id, case_id, trial)
    if row is None:
        what = f"case {case_id!r}" if case_id else "any case"
        what += f" trial {trial}" if trial is not None else ""
        raise UsageError(f"run {run_id} has no stored result for {what}")
    record = TrialRecord.from_row(row)
    response_json, log_json = row["response_json"], row["log_json"]
    outcomes_json, fixtures_json = row["outcomes_json"], row["fixtures_json"]
    response = json.loads(response_json) if response_json else {}
    case = store.case(run_id, record.case_id) or {}
    log = json.loads(log_json) if log_json else {}
    spans, dropped = from_stored(row.get("spans_json"))
    calls = response.get("tool_calls") or []
    source: Literal["agent", "spans"] | None = "agent" if calls else None
    turned = any(t.get("tool_calls") for t in response.get("transcript") or [])
    if not calls and not turned and spans:
        calls = tool_calls(spans)
        source = "spans" if calls else None
    return TrialView(
        run_id=run_id,
        case_id=record.case_id,
        trial=record.trial,
        status=record.status,
        input=case.get("input", {}) if isinstance(case, dict) else {},
        output=response.get("output"),
        reply=response.get("reply"),
        tool_calls=calls,
        tool_calls_source=source,
        trace_id=spans[0]["trace_id"] if spans else None,
        spans=span_entries(spans),
        span_count=len(spans),
        spans_dropped=dropped,
        transcript=response.get("transcript", []),
        ended_by=response.get("ended_by"),
        user_usage=response.get("user_usage"),
        outcomes=json.loads(outcomes_json) if outcomes_json else None,
        fixtures=FixtureUse.model_validate_json(fixtures_json) if fixtures_json else None,
        checks=record.checks,
        error=record.error,
        log=log.get("text"),
        log_dropped=int(log.get("dropped", 0)),
        latency_s=record.latency_s,
        cost_usd=record.cost_usd,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
    )


def trial_text(view: TrialView) -> str:
    """The case-trial for a terminal, section by section."""

    def block(value: object, indent: str = "  ") -> str:
        # Text is printed as text (a ticket's lines stay lines); the rest as JSON.
        if isinstance(value, dict) and any(
            isinstance(v, str) and "\n" in v for v in value.values()
        ):
            return "\n".join(f"{indent}{k}:\n{block(v, indent + '  ')}" for k, v in value.items())
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
        return "\n".join(f"{indent}{line}" for line in text.splitlines()) or f"{indent}(empty)"

    lines = [
        f"{view.case_id} #{view.trial} · {view.status.value} · run {view.run_id} · "
        f"{view.latency_s:.3f}s · ${view.cost_usd:.4f} "
        f"({view.input_tokens} in / {view.output_tokens} out tokens)",
        "input:",
        block(view.input),
    ]
    if view.error:
        lines += ["error:", block(view.error)]
    if view.transcript:
        lines.append(f"conversation ({view.ended_by or 'ended'}):")
        if view.user_usage:
            spent = view.user_usage
            lines.append(
                f"  the simulated user: ${float(spent.get('cost_usd') or 0):.4f} "  # type: ignore[arg-type]
                f"({spent.get('input_tokens')} in / {spent.get('output_tokens')} out tokens), "
                "not counted in the agent's cost"
            )
        for message in view.transcript:
            lines.append(
                f"  [{message.get('turn')}] {message.get('role')}: {message.get('content')}"
            )
            for call in message.get("tool_calls") or []:  # type: ignore[union-attr]
                if isinstance(call, dict):
                    args = json.dumps(call.get("args", {}), ensure_ascii=False)
                    lines.append(f"      → {call.get('name')}({args})")
    if view.output is not None:
        lines += ["output:", block(view.output)]
    if view.reply:
        lines += ["reply:", block(view.reply)]
    if view.tool_calls:
        derived = view.tool_calls_source == "spans"
        lines.append("tool calls (from the agent's spans):" if derived else "tool calls:")
        for call in view.tool_calls:
            args = json.dumps(call.get("args", {}), ensure_ascii=False)
            result = json.dumps(call.get("result"), ensure_ascii=False)
            lines.append(f"  {call.get('name')}({args}) → {result}")
    if view.outcomes is not None:
        lines += ["outcome probe:", block(view.outcomes)]
    if view.fixtures is not None:
        use = view.fixtures
        counts = [f"{len(v)} {k}" for k, v in _fixture_lists(use) if v]
        lines.append(f"fixtures ({use.mode}): {', '.join(counts)}")
        for kind, requests in _fixture_lists(use):
            lines += [f"  {kind}: {request}" for request in requests]
    if view.checks:
        lines.append("checks:")
        lines += check_lines(view.checks)
    if view.spans:
        more = f", {view.spans_dropped:,} more dropped" if view.spans_dropped else ""
        lines.append(f"spans ({view.span_count}{more}; trace {view.trace_id}):")
        lines += ["  " + line for line in span_lines(view.spans)]
    if view.log:
        dropped = (
            f", {view.log_dropped:,} bytes dropped between head and tail"
            if (view.log_dropped)
            else ""
        )
        lines += [f"log (what the agent's side wrote{dropped}):", block(view.log)]
    return "\n".join(lines)


def check_lines(checks: list[CheckResult], indent: str = "  ") -> list[str]:
    """Each check's verdict, name, mode and reason, a line each, as ``caseforge show``
    prints them (the pytest plugin's failure messages too)."""
    lines = []
    for check in checks:
        why = f" — {check.reason}" if check.reason else ""
        lines.append(f"{indent}[{check.status.value}] {check.name} ({check.mode}){why}")
        if check.actual_bytes is not None:
            lines.append(
                f"{indent}    (graded {check.actual_bytes:,} bytes of {check.actual_ref}; "
                "the result keeps 2 KB of it)"
            )
    return lines


def span_lines(nodes: list[SpanEntry], attributes: int = 12, width: int = 80) -> list[str]:
    """The span tree for a terminal: a line per span (its duration, ERROR and the status
    message), then up to ``attributes`` of its attributes, each value cut to ``width``; an
    attribute its parent has with the same value (a session id, metadata an instrumentor
    copies onto every span) is counted, not repeated."""
    lines: list[str] = []

    def walk(node: SpanEntry, depth: int, inherited: dict[str, object]) -> None:
        pad = "  " * depth
        took = f"{node.duration_ms:.1f} ms" if node.duration_ms is not None else "open"
        error = ""
        if node.status == "error":
            message = status_line(node.status_message, width)
            error = "  ERROR" + (f": {message}" if message else "")
        turn = f"  (turn {node.turn})" if node.turn is not None and depth == 0 else ""
        lines.append(f"{pad}{node.name}  {took}{error}{turn}")
        items = [(k, v) for k, v in node.attributes.items() if inherited.get(k, _NONE) != v]
        same = len(node.attributes) - len(items)
        for key, value in items[:attributes]:
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            text = text.replace("\n", " ")
            cut = "…" if len(text) > width else ""
            lines.append(f"{pad}    {key} = {text[:width]}{cut}")
        if len(items) > attributes:
            lines.append(f"{pad}    … {len(items) - attributes} more attributes")
        if same:
            lines.append(f"{pad}    ({same} more as its parent's)")
        for event in node.events:
            if event.get("name") == "exception":
                found = event.get("attributes")
                said = found.get("exception.message") if isinstance(found, dict) else None
                lines.append(f"{pad}    exception: {str(said or '')[:width]}")
        for child in node.children:
            walk(child, depth + 1, dict(node.attributes))

    for root in nodes:
        walk(root, 0, {})
    return lines


_NONE = object()  # an attribute the parent does not have


def _fixture_lists(use: FixtureUse) -> list[tuple[str, list[str]]]:
    return [("missing", use.missing), ("replayed", use.replayed), ("recorded", use.recorded)]
