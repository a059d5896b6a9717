"""One case-trial's trace, and the registry that files spans under their case-trial.

Every case-trial whose spans caseforge keeps has a trace of its own: a trace id, and a span
id for each agent call made in it (each attempt, each turn of a conversation). The agent
gets the call's W3C ``traceparent`` (``00-<trace id>-<span id>-01``): as the current
OpenTelemetry context in process, in the ``traceparent`` header over HTTP, in
``TRACEPARENT`` for a command. Whatever reaches caseforge (a span processor, the OTLP
receiver) is offered to the :data:`REGISTRY`, which files a span under the open case-trial
of its trace id and drops the others. Case-trials run concurrently never mix: each has its
own trace id.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from caseforge.tracing.spans import MAX_SPANS, SpanData, assign_turns

_random = random.Random()  # caseforge's own: an agent seeding `random` changes nothing here
if hasattr(os, "register_at_fork"):  # a forked worker must not repeat its parent's ids
    os.register_at_fork(after_in_child=_random.seed)
TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def new_trace_id() -> str:
    """A random, valid (non-zero) W3C trace id: 32 lower-case hex digits."""
    return f"{_random.getrandbits(128) or 1:032x}"


def new_span_id() -> str:
    """A random, valid (non-zero) span id: 16 lower-case hex digits."""
    return f"{_random.getrandbits(64) or 1:016x}"


def traceparent(trace_id: str, span_id: str) -> str:
    """The W3C ``traceparent`` of a span: version 00, sampled."""
    return f"00-{trace_id}-{span_id}-01"


def parse_traceparent(text: str) -> tuple[str, str] | None:
    """``(trace id, span id)`` of a W3C ``traceparent`` (None if it is not one)."""
    found = TRACEPARENT.match(text.strip().lower())
    if found is None or set(found.group(1)) == {"0"} or set(found.group(2)) == {"0"}:
        return None
    return found.group(1), found.group(2)


def otel_imported() -> bool:
    """Whether this process has imported OpenTelemetry's API (the agent's code, an
    instrumentor, caseforge's own tracing): only then can an in-process agent make spans."""
    return "opentelemetry.trace" in sys.modules


@contextlib.contextmanager
def current_span_context(trace_id: str, span_id: str) -> Iterator[None]:
    """Make ``(trace_id, span_id)`` the current OpenTelemetry span context while the block
    runs, so the spans an in-process agent starts are its children (a no-op when nothing
    has imported OpenTelemetry: nothing could start a span)."""
    if not otel_imported():
        yield
        return
    from opentelemetry import context, trace

    span_context = trace.SpanContext(
        int(trace_id, 16), int(span_id, 16), is_remote=False, trace_flags=trace.TraceFlags(1)
    )
    token = context.attach(trace.set_span_in_context(trace.NonRecordingSpan(span_context)))
    try:
        yield
    finally:
        context.detach(token)


@dataclass
class TrialSpans:
    """The spans of one case-trial, as they arrive (from any thread)."""

    trace_id: str
    calls: dict[str, int | None] = field(default_factory=dict)  # agent call span id → turn
    spans: list[SpanData] = field(default_factory=list)
    dropped: int = 0
    opened_perf_ns: int = field(default_factory=time.perf_counter_ns)  # a clock no one freezes
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _seen: set[str] = field(default_factory=set, repr=False)
    _waiting: tuple[asyncio.AbstractEventLoop, asyncio.Event, str] | None = field(
        default=None, repr=False
    )

    def call(self, turn: int | None = None) -> str:
        """A new agent call of this case-trial (an attempt, a turn): its span id."""
        span_id = new_span_id()
        self.calls[span_id] = turn
        return span_id

    def add(self, span: SpanData) -> None:
        with self._lock:
            if span["span_id"] in self._seen:  # the processor's, and again over OTLP
                return
            self._seen.add(span["span_id"])
            if len(self.spans) < MAX_SPANS:
                self.spans.append(span)
            else:
                self.dropped += 1
            waiting = self._waiting
        if waiting is not None and span.get("parent_id") == waiting[2]:
            loop, event, _ = waiting
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(event.set)

    def clear(self) -> None:
        """Forget what arrived so far (the attempt that made it is retried)."""
        with self._lock:
            self.spans.clear()
            self._seen.clear()
            self.dropped = 0

    async def settle(self, call_span_id: str, timeout_s: float) -> bool:
        """Wait, at most ``timeout_s``, until the agent's own top span for the call
        ``call_span_id`` has arrived (an HTTP agent exports after it answers): True when
        it has. Its children end before it, so they came with it or before it."""
        event = asyncio.Event()
        with self._lock:
            if any(s.get("parent_id") == call_span_id for s in self.spans):
                return True
            self._waiting = (asyncio.get_running_loop(), event, call_span_id)
        try:
            async with asyncio.timeout(timeout_s):
                await event.wait()
            return True
        except TimeoutError:
            return False
        finally:
            self._waiting = None

    def take(self) -> tuple[list[SpanData], int]:
        """The spans kept (each with its conversation turn) and how many were dropped."""
        with self._lock:
            spans, dropped = list(self.spans), self.dropped
        assign_turns(spans, self.calls)
        return spans, dropped


class SpanRegistry:
    """The open case-trials by trace id: what files an arriving span under its case-trial."""

    def __init__(self) -> None:
        self._open: dict[str, TrialSpans] = {}
        self._lock = threading.Lock()
        self.unclaimed = 0  # spans of no open case-trial (late, or not caseforge's)

    def open(self, trace_id: str) -> TrialSpans:
        trial = TrialSpans(trace_id)
        with self._lock:
            self._open[trace_id] = trial
        return trial

    def close(self, trial: TrialSpans) -> None:
        with self._lock:
            if self._open.get(trial.trace_id) is trial:
                del self._open[trial.trace_id]

    def offer(self, span: SpanData) -> bool:
        """File ``span`` under its case-trial; False (and counted) when none is open."""
        trial = self._open.get(span["trace_id"])
        if trial is None:
            self.unclaimed += 1
            return False
        trial.add(span)
        return True

    def __contains__(self, trace_id: str) -> bool:
        return trace_id in self._open

    def get(self, trace_id: str) -> TrialSpans | None:
        """The open case-trial of a trace, if any."""
        return self._open.get(trace_id)


# One per process: an in-process agent's tracer provider is the process's, and so is its
# span processor.
REGISTRY = SpanRegistry()
