"""caseforge's own spans: a run, each case-trial, each agent call, judge call and model call,
named and described with OpenTelemetry's GenAI conventions (``invoke_agent``, ``chat``,
``gen_ai.*``), exported over OTLP/HTTP (protobuf) to the endpoint the standard variables
name, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``.

With neither set (or ``OTEL_SDK_DISABLED=true``, or ``OTEL_TRACES_EXPORTER=none``) every
function here does nothing, and OpenTelemetry is never imported. The spans go through a
tracer provider of caseforge's own, never the process's global one, so an in-process
agent's provider and exporters are the agent's alone.

**No message content by default.** A span carries names, ids, counts, models, statuses and
durations. Inputs, replies, prompts, completions and check reasons are added only inside
:func:`content_allowed` (the suite's ``otel.capture_content: true``, for a case not marked
sensitive): everything that adds content asks :func:`content` first.

Each case-trial is a trace of its own, linked to its run's span: the agent's own spans join
that trace (its id is the one caseforge keeps them under), and the trace of one failing
case-trial is found in any tracing backend by the id ``caseforge show`` prints.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from caseforge.tracing.context import new_span_id, new_trace_id, parse_traceparent, traceparent

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
# The GenAI conventions are at "Development" status; the newest names apply under this
# opt-in, the names before them otherwise (gen_ai.provider.name was gen_ai.system).
OPT_IN = "gen_ai_latest_experimental"

_lock = threading.Lock()
_state: dict[str, Any] = {}  # "key": the environment read; "provider", "tracer"; "problem"
_CONTENT: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "caseforge_otel_content", default=False
)
_RUN: contextvars.ContextVar[Span | None] = contextvars.ContextVar(
    "caseforge_otel_run", default=None
)


def configured(env: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for caseforge's own spans."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return any(env.get(name, "").strip() for name in ENDPOINT_VARIABLES)


_RECEIVERS: set[str] = set()  # this process's receivers of agents' spans (host:port)


def _key() -> tuple[str, ...]:
    names = (*ENDPOINT_VARIABLES, "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER")
    return (*(os.environ.get(name, "") for name in names), *sorted(_RECEIVERS))


def _address(url: str) -> str:
    """``host:port`` of an OTLP/HTTP URL, a loopback host as ``127.0.0.1``."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    host = parts.hostname or ""
    if host in ("localhost", "::1") or host.startswith("127."):
        host = "127.0.0.1"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 4318)
    except ValueError:
        return url
    return f"{host}:{port}"


def receiving(url: str) -> None:
    """A run's receiver of the agent's spans listens at ``url``: caseforge's own spans are
    never exported there, in this process (they would be taken for the agent's, or be sent
    to a port closed when the run ends)."""
    _RECEIVERS.add(_address(url))


def _endpoint() -> str:
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    return traces or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()


def _tracer() -> Tracer | None:
    """caseforge's tracer, built when the environment first asks for it; None otherwise.
    Built again when the variables change (a library caller, the tests)."""
    key = _key()
    if _state.get("key") == key:
        tracer: Tracer | None = _state.get("tracer")
        return tracer
    with _lock:
        if _state.get("key") != key:
            _build(key)
        built: Tracer | None = _state.get("tracer")
        return built


def _build(key: tuple[str, ...]) -> None:
    old: TracerProvider | None = _state.pop("provider", None)
    if old is not None:
        old.shutdown()
    _state.update(key=key, tracer=None)
    _state.pop("problem", None)
    if not configured():
        return
    if _RECEIVERS and _address(_endpoint()) in _RECEIVERS:
        _state["problem"] = (
            f"OTEL_EXPORTER_OTLP_*ENDPOINT ({_endpoint()}) is this run's own receiver of the "
            "agent's spans (--otlp-listen): caseforge's own spans were not exported"
        )
        return
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        _state["problem"] = (
            "OTEL_EXPORTER_OTLP_ENDPOINT is set, but caseforge's own spans need its otel "
            "extra: pip install 'caseforge[otel]' (no span of caseforge's was exported)"
        )
        return
    from caseforge._version import __version__

    protocol = os.environ.get(
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "")
    )
    if protocol.strip().lower() == "grpc":
        _state["problem"] = (
            "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: caseforge exports over OTLP/HTTP (protobuf) "
            "only; point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's HTTP port (4318)"
        )
    resource = Resource.create({"service.name": "caseforge", "service.version": __version__})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    _state["provider"] = provider
    _state["tracer"] = provider.get_tracer("caseforge", __version__)


def enabled() -> bool:
    """Whether caseforge exports its own spans now."""
    return _tracer() is not None


def problem() -> str | None:
    """What keeps the configured export from working, to say once (else None)."""
    _tracer()
    found: str | None = _state.get("problem")
    return found


def flush(timeout_s: float = 10.0) -> None:
    """Export what is waiting (the end of a run)."""
    provider: TracerProvider | None = _state.get("provider")
    if provider is not None:
        provider.force_flush(int(timeout_s * 1000))


def latest_conventions() -> bool:
    """Whether ``OTEL_SEMCONV_STABILITY_OPT_IN`` asks for the newest GenAI names."""
    opted = os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "")
    return OPT_IN in {part.strip() for part in opted.split(",")}


def provider_attribute(name: str) -> dict[str, str]:
    """The model provider's attribute, under the name the conventions in force give it."""
    return {"gen_ai.provider.name" if latest_conventions() else "gen_ai.system": name}


# --- content ----------------------------------------------------------------------------------


@contextlib.contextmanager
def content_allowed(allowed: bool) -> Iterator[None]:
    """Let spans started in this block carry message content (or forbid it)."""
    token = _CONTENT.set(allowed)
    try:
        yield
    finally:
        _CONTENT.reset(token)


def content() -> bool:
    """Whether message content may go on the spans started here."""
    return _CONTENT.get()


def as_text(value: object) -> str:
    """A value as a span attribute's text (JSON for a structure)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


# --- spans ------------------------------------------------------------------------------------


class OwnSpan:
    """One of caseforge's spans: set attributes on it (content only when allowed), end it."""

    def __init__(self, span: Span) -> None:
        self.span = span
        context = span.get_span_context()
        self.trace_id = f"{context.trace_id:032x}"
        self.span_id = f"{context.span_id:016x}"

    @property
    def traceparent(self) -> str:
        return traceparent(self.trace_id, self.span_id)

    def set(self, attributes: Mapping[str, object]) -> None:
        for key, value in attributes.items():
            if value is not None:
                self.span.set_attribute(key, value)  # type: ignore[arg-type]

    def set_content(self, key: str, value: object) -> None:
        """Message content: set only where content is allowed."""
        if content() and value is not None:
            self.span.set_attribute(key, as_text(value))

    def event(self, name: str, attributes: Mapping[str, object]) -> None:
        self.span.add_event(name, {k: v for k, v in attributes.items() if v is not None})  # type: ignore[misc]

    def error(self, message: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        self.span.set_status(Status(StatusCode.ERROR, message.splitlines()[0][:300]))

    def end(self) -> None:
        self.span.end()


def _context(parent: str | None, root: bool) -> Any:
    from opentelemetry import trace
    from opentelemetry.context import Context

    if parent is not None:
        ids = parse_traceparent(parent)
        if ids is not None:
            span_context = trace.SpanContext(
                int(ids[0], 16), int(ids[1], 16), is_remote=True, trace_flags=trace.TraceFlags(1)
            )
            return trace.set_span_in_context(trace.NonRecordingSpan(span_context))
    return Context() if root else None


def start(
    name: str,
    attributes: Mapping[str, object] | None = None,
    *,
    parent: str | None = None,
    root: bool = False,
    link_run: bool = False,
    kind: str = "internal",
) -> OwnSpan | None:
    """Start a span (ended by its ``end()``): under ``parent`` (a traceparent), a new trace
    (``root``), or under the current span; None when caseforge does not trace."""
    tracer = _tracer()
    if tracer is None:
        return None
    from opentelemetry import trace

    links = None
    run = _RUN.get() if link_run else None
    if run is not None:
        links = [trace.Link(run.get_span_context())]
    span = tracer.start_span(
        name,
        context=_context(parent, root),
        kind=getattr(trace.SpanKind, kind.upper()),
        attributes={k: v for k, v in (attributes or {}).items() if v is not None},  # type: ignore[misc]
        links=links,
    )
    return OwnSpan(span)


@contextlib.contextmanager
def span(
    name: str,
    attributes: Mapping[str, object] | None = None,
    *,
    parent: str | None = None,
    kind: str = "internal",
) -> Iterator[OwnSpan | None]:
    """A span around the block, current while it runs (its children are the block's); an
    exception leaving the block marks it an error. Yields None when caseforge does not
    trace."""
    own = start(name, attributes, parent=parent, kind=kind)
    if own is None:
        yield None
        return
    from opentelemetry import trace

    with trace.use_span(own.span, end_on_exit=True, record_exception=False):
        try:
            yield own
        except BaseException as exc:
            own.error(f"{type(exc).__name__}: {exc}")
            raise


@contextlib.contextmanager
def run_span(attributes: Mapping[str, object]) -> Iterator[OwnSpan | None]:
    """The run's span: each case-trial's trace links to it."""
    suite = attributes.get("caseforge.suite")
    own = start(f"caseforge run {suite}", attributes, root=True)
    if own is None:
        yield None
        return
    token = _RUN.set(own.span)
    try:
        yield own
    except BaseException as exc:
        own.error(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        _RUN.reset(token)
        own.end()
        flush()


def synthetic_call(trace_id: str | None = None) -> tuple[str, str]:
    """Ids for an agent call caseforge does not export: ``(trace id, span id)``."""
    return trace_id or new_trace_id(), new_span_id()
