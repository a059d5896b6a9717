"""An in-process agent's spans: a span processor on the process's tracer provider.

OpenTelemetry lets a process set its global tracer provider once. So caseforge:

- adds its processor to the SDK ``TracerProvider`` already set (the agent's code set it);
- sets an SDK ``TracerProvider`` with its processor when none is set, and the agent's code
  then adds its own processors (an exporter to the team's collector) to
  ``trace.get_tracer_provider()`` instead of setting one;
- keeps nothing, and says why once, when the provider set is not the SDK's (it takes no
  processor) or when ``opentelemetry-sdk`` is not installed (``caseforge[otel]``).

It does so when the agent's code has imported OpenTelemetry (only then can it make spans),
at the first case-trial after that; a process that never does pays nothing. The processor
hands each finished span to :data:`~caseforge.tracing.context.REGISTRY`, which keeps it
with its case-trial by trace id and drops the rest (a span the agent made outside any
case-trial, on a thread it started itself).
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING

from caseforge.tracing.context import (
    REGISTRY,
    SpanRegistry,
    TrialSpans,
    new_trace_id,
    otel_imported,
)

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import ReadableSpan, Span

    from caseforge.tracing.receiver import SpanReceiver
    from caseforge.tracing.spans import SpanData

_lock = threading.Lock()
_state: dict[str, object] = {}  # "installed": the provider; "problem": why not


def _processor_class(registry: SpanRegistry) -> object:
    from opentelemetry.sdk.trace import SpanProcessor

    from caseforge.tracing.otlp import from_readable

    started: dict[int, int] = {}  # span id → perf_counter_ns at its start

    class CaseTrialSpans(SpanProcessor):
        """Keeps each finished span with the case-trial whose trace it belongs to.

        caseforge may freeze the process clock around an in-process agent (time-machine),
        and the SDK reads its times from that clock: every span would start and end at the
        same instant. So the processor also times each span on the performance counter,
        which no one freezes, and uses that when the clock stood still."""

        def on_start(self, span: Span, parent_context: Context | None = None) -> None:
            context = span.context
            if context is not None and f"{context.trace_id:032x}" in registry:
                started[context.span_id] = time.perf_counter_ns()

        def on_end(self, span: ReadableSpan) -> None:
            context = span.context
            if context is None:
                return
            began = started.pop(context.span_id, None)
            trial = registry.get(f"{context.trace_id:032x}")
            if trial is None:
                return
            data = from_readable(span)
            start, end = span.start_time, span.end_time
            if began is not None and start is not None and start == end:  # a frozen clock
                ended = time.perf_counter_ns()
                data["start_ns"] = start + max(0, began - trial.opened_perf_ns)
                data["end_ns"] = data["start_ns"] + max(0, ended - began)
            registry.offer(data)

        def shutdown(self) -> None:
            return None

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return CaseTrialSpans()


def install(registry: SpanRegistry = REGISTRY) -> str | None:
    """Collect the in-process agent's spans from now on (once per process); returns why
    not, when it cannot (said once: the next calls return None)."""
    with _lock:
        if "installed" in _state or "problem" in _state:
            return None
        from opentelemetry import trace

        try:
            from opentelemetry.sdk.trace import TracerProvider
        except ImportError:
            problem = (
                "the agent uses OpenTelemetry, but opentelemetry-sdk is not installed: its "
                "spans are not kept (pip install 'caseforge[otel]')"
            )
            _state["problem"] = problem
            return problem
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider):  # none set: set the SDK's
            trace.set_tracer_provider(TracerProvider())
            provider = trace.get_tracer_provider()  # ours, or one set meanwhile
        add = getattr(provider, "add_span_processor", None)
        if add is None:
            problem = (
                f"the agent's tracer provider ({type(provider).__name__}) is not the "
                "OpenTelemetry SDK's and takes no span processor: its spans are not kept"
            )
            _state["problem"] = problem
            return problem
        add(_processor_class(registry))
        _state["installed"] = provider
        return None


def ready() -> tuple[bool, str | None]:
    """Whether an in-process agent's spans are collected now (installing the processor on
    first need), and a problem to say once."""
    if "installed" in _state:
        return True, None
    if not otel_imported():
        return False, None
    problem = install()
    return "installed" in _state, problem


class AgentSpans:
    """How a run keeps its agent's spans, case-trial by case-trial: through the span
    processor (an in-process agent) or the OTLP receiver (a command or HTTP agent)."""

    def __init__(
        self,
        in_process: bool,
        receiver: SpanReceiver | None = None,
        wait_s: float = 5.0,
        registry: SpanRegistry = REGISTRY,
        command: bool = False,
    ) -> None:
        self.in_process = in_process
        self.command = command  # a command agent: it inherits caseforge's environment
        self.receiver = receiver
        self.wait_s = wait_s  # how long an HTTP agent's spans are awaited after it answers
        self.registry = registry
        self._problems: list[str] = []

    @property
    def problems(self) -> list[str]:
        """What kept the agent's spans out, each said once (the run's warnings)."""
        found = [*self._problems, *(self.receiver.problems if self.receiver else [])]
        return list(dict.fromkeys(found))

    @property
    def traces_url(self) -> str | None:
        """Where a command agent exports (None: an in-process agent, or no receiver)."""
        return self.receiver.traces_url if self.receiver is not None else None

    def begin(self, trace_id: str | None = None) -> TrialSpans | None:
        """Open a case-trial's trace (``trace_id``, else a new one); None when this agent's
        spans cannot be kept."""
        if self.in_process:
            collecting, problem = ready()
            if problem is not None:
                self._problems.append(problem)
            if not collecting and self.receiver is None:
                return None
        elif self.receiver is None:
            return None
        return self.registry.open(trace_id or new_trace_id())

    def end(self, trial: TrialSpans) -> tuple[list[SpanData], int]:
        """Close a case-trial's trace: its spans, and how many were dropped."""
        self.registry.close(trial)
        return trial.take()

    def why_none(self, unsettled: bool) -> str | None:
        """Why a case-trial got no spans, when the run knows: a problem said once for the
        run (no SDK, a refused export), a command agent whose exporter the user pointed
        elsewhere, or an HTTP agent's spans awaited in vain (``unsettled``)."""
        for problem in self.problems:
            return problem
        mine = self.traces_url
        theirs = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
        if self.command and theirs and mine and theirs != mine:
            return (
                f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set ({theirs}): the command agent "
                f"exports there, not to this run's receiver ({mine})"
            )
        if unsettled and mine:
            return (
                f"none arrived within {self.wait_s:g} s of its answer (otel.span_wait_s): "
                f"can the agent reach {mine}?"
            )
        return None

    def close(self) -> None:
        if self.receiver is not None:
            self.receiver.close()
