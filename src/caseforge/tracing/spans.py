"""A span as caseforge keeps it with a case-trial: plain JSON, whatever sent it (an in-process
agent's tracer provider, an OTLP/HTTP exporter in JSON or protobuf).

One span is a :class:`SpanData` dict::

    {"trace_id": "4bf9…", "span_id": "00f0…", "parent_id": "a3ce…" | None,
     "name": "execute_tool lookup_order", "kind": "internal", "start_ns": …, "end_ns": …,
     "status": "unset" | "ok" | "error", "status_message": "…", "attributes": {…},
     "events": [{"name", "time_ns", "attributes"}], "service": "…", "scope": "…",
     "turn": 2}

``turn`` is set in a conversation: the agent turn whose call the span descends from. This
module needs no OpenTelemetry package: it orders spans into a tree, says which are errors,
matches span names against globs and reads the tool calls a trace shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Required, TypedDict, cast

from caseforge.jsontypes import JSONObject, JSONValue

MAX_SPANS = 2000  # kept per case-trial; the rest are counted
MAX_TEXT = 4096  # characters kept of one attribute's text
MAX_ATTRIBUTES = 128  # attributes kept per span
MAX_EVENTS = 32  # events kept per span

# The attributes a tool-call span names its tool with: the GenAI conventions' and
# OpenInference's.
TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name")
_ARGUMENT_KEYS = ("gen_ai.tool.call.arguments", "input.value")
_RESULT_KEYS = ("gen_ai.tool.call.result", "output.value")


class SpanEvent(TypedDict, total=False):
    """A timed event of a span (an exception, a log line)."""

    name: Required[str]
    time_ns: int
    attributes: JSONObject


class SpanData(TypedDict, total=False):
    """One span of the agent's trace, as caseforge stores it."""

    trace_id: Required[str]
    span_id: Required[str]
    parent_id: str | None
    name: Required[str]
    kind: str
    start_ns: int
    end_ns: int
    status: str  # unset | ok | error
    status_message: str
    attributes: JSONObject
    events: list[SpanEvent]
    service: str
    scope: str
    turn: int


def duration_ms(span: Mapping[str, object]) -> float | None:
    """How long the span took, in milliseconds (None without both times)."""
    start, end = span.get("start_ns"), span.get("end_ns")
    if not isinstance(start, int) or not isinstance(end, int) or end < start:
        return None
    return (end - start) / 1e6


def status_line(message: str | None, width: int = 120) -> str:
    """A status message in one line: its first, without a traceback glued to it (as some
    instrumentors write ``KeyError('x')Traceback (most recent call last): …``), cut to
    ``width``."""
    lines = (message or "").strip().splitlines()
    if not lines:
        return ""
    first = lines[0].split("Traceback (most recent call last)")[0].strip() or lines[0]
    return first if len(first) <= width else first[: width - 1] + "…"


def is_error(span: Mapping[str, object]) -> bool:
    """Whether the span ended with the status ERROR."""
    return span.get("status") == "error"


@lru_cache(maxsize=1024)
def _glob(pattern: str) -> re.Pattern[str]:
    parts = [".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern]
    return re.compile("".join(parts), re.DOTALL)


def is_glob(pattern: str) -> bool:
    """Whether ``pattern`` holds a wildcard (``*``: any text, ``?``: one character)."""
    return "*" in pattern or "?" in pattern


def name_matches(pattern: str, name: str) -> bool:
    """A span name against a name or a glob (``*`` any text, ``?`` one character; every
    other character, ``[`` included, is itself); case-sensitive."""
    if not is_glob(pattern):
        return pattern == name
    return _glob(pattern).fullmatch(name) is not None


def ordered(spans: Iterable[SpanData]) -> list[SpanData]:
    """The spans by start time (then name), as a trace reads."""
    return sorted(spans, key=lambda s: (s.get("start_ns") or 0, s.get("name", "")))


class SpanNode(TypedDict):
    """A span with its children, for the tree that ``show``, ``report --raw`` and the web
    app print: its times in milliseconds, relative to the trace's first span."""

    name: str
    span_id: str
    start_ms: float | None
    duration_ms: float | None
    status: str
    status_message: str | None
    kind: str | None
    attributes: JSONObject
    events: list[JSONObject]
    turn: int | None
    children: list[SpanNode]


def tree(spans: Sequence[SpanData]) -> list[SpanNode]:
    """The spans as a forest: each under its parent, in start order; a span whose parent
    is not among them (the agent call caseforge made, a lost span) is a root."""
    spans = ordered(spans)
    starts = [s["start_ns"] for s in spans if isinstance(s.get("start_ns"), int)]
    origin = min(starts) if starts else 0
    nodes: dict[str, SpanNode] = {}
    for span in spans:
        start = span.get("start_ns")
        nodes[span["span_id"]] = {
            "name": span["name"],
            "span_id": span["span_id"],
            "start_ms": (start - origin) / 1e6 if isinstance(start, int) else None,
            "duration_ms": duration_ms(span),
            "status": span.get("status", "unset"),
            "status_message": span.get("status_message") or None,
            "kind": span.get("kind"),
            "attributes": dict(span.get("attributes") or {}),
            "events": [cast("JSONObject", dict(e)) for e in span.get("events") or []],
            "turn": span.get("turn"),
            "children": [],
        }
    roots: list[SpanNode] = []
    for span in spans:
        node = nodes[span["span_id"]]
        parent = nodes.get(span.get("parent_id") or "")
        if parent is not None and parent is not node:
            parent["children"].append(node)
        else:
            roots.append(node)
    return roots


def tool_name(span: Mapping[str, object]) -> str | None:
    """The tool a span executed (``gen_ai.tool.name``, OpenInference's ``tool.name`` on a
    TOOL span), or None for a span that is no tool call."""
    attributes = span.get("attributes")
    if not isinstance(attributes, Mapping):
        return None
    kind = attributes.get("openinference.span.kind")
    for key in TOOL_NAME_KEYS:
        name = attributes.get(key)
        if isinstance(name, str) and name and (key != "tool.name" or kind in (None, "TOOL")):
            return name
    return None


def tool_calls(spans: Sequence[SpanData]) -> list[JSONObject]:
    """The tool calls a trace shows, in start order, as an agent reports them: ``{name,
    args, result}`` (and ``turn`` in a conversation). Arguments are read from
    ``gen_ai.tool.call.arguments`` or OpenInference's ``input.value`` when they are a JSON
    object; otherwise a text argument is ``{"input": text}``."""
    calls: list[JSONObject] = []
    for span in ordered(spans):
        name = tool_name(span)
        if name is None:
            continue
        attributes = span.get("attributes") or {}
        call: JSONObject = {
            "name": name,
            "args": _arguments(_first(attributes, _ARGUMENT_KEYS)),
            "result": _parsed(_first(attributes, _RESULT_KEYS)),
        }
        if "turn" in span:
            call["turn"] = span["turn"]
        calls.append(call)
    return calls


def _first(attributes: Mapping[str, JSONValue], keys: Sequence[str]) -> JSONValue:
    for key in keys:
        if key in attributes:
            return attributes[key]
    return None


def _parsed(value: JSONValue) -> JSONValue:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            parsed: JSONValue = json.loads(value)
        except ValueError:
            return value
        return parsed
    return value


def _arguments(value: JSONValue) -> JSONObject:
    parsed = _parsed(value)
    if isinstance(parsed, dict):
        return parsed
    if parsed is None or parsed == "":
        return {}
    return {"input": parsed}


def assign_turns(spans: list[SpanData], calls: Mapping[str, int | None]) -> None:
    """Set each span's ``turn``: the turn of the agent call (span id → turn) it descends
    from, when that call was a conversation's."""
    if not any(turn is not None for turn in calls.values()):
        return
    parents = {s["span_id"]: s.get("parent_id") for s in spans}
    for span in spans:
        seen: set[str] = set()
        parent = span.get("parent_id")
        while parent is not None and parent not in calls and parent not in seen:
            seen.add(parent)
            parent = parents.get(parent)
        turn = calls.get(parent) if parent is not None else None
        if turn is not None:
            span["turn"] = turn


def bounded_text(value: str) -> str:
    """A text attribute as kept: at most MAX_TEXT characters, the cut said."""
    if len(value) <= MAX_TEXT:
        return value
    return value[:MAX_TEXT] + f"… [{len(value) - MAX_TEXT:,} characters dropped]"


def stored_json(spans: Sequence[SpanData] | None, dropped: int, missing: str | None = None) -> str:
    """The case-trial's spans as the store keeps them (``results.spans_json``); with none,
    why none came (``missing``), so a rescore says it too."""
    data: dict[str, object] = {"spans": list(spans or []), "dropped": dropped}
    if missing and not spans:
        data["missing"] = missing
    return json.dumps(data, ensure_ascii=False)


def missing_of(text: str | None) -> str | None:
    """Why no span came for a stored case-trial, when its run knew (``stored_json``)."""
    if not text or '"missing"' not in text:
        return None
    data = json.loads(text)
    why = data.get("missing") if isinstance(data, dict) else None
    return why if isinstance(why, str) else None


def from_stored(text: str | None) -> tuple[list[SpanData], int]:
    """The spans and the count dropped, from ``results.spans_json`` (None: none kept)."""
    if not text:
        return [], 0
    data = json.loads(text)
    if not isinstance(data, dict):
        return [], 0
    spans = data.get("spans")
    dropped = data.get("dropped")
    kept = [s for s in spans if isinstance(s, dict)] if isinstance(spans, list) else []
    return cast("list[SpanData]", kept), dropped if isinstance(dropped, int) else 0
