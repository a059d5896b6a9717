"""OpenTelemetry: the agent's spans, kept with each case-trial, and caseforge's own.

- :mod:`~caseforge.tracing.spans`: a span as caseforge keeps it (plain JSON), its tree, its
  errors and the tool calls it shows; no OpenTelemetry package needed.
- :mod:`~caseforge.tracing.context`: one case-trial's trace (its ids, its ``traceparent``)
  and the registry that files spans under the case-trial whose trace they belong to.
- :mod:`~caseforge.tracing.collect`: an in-process agent's spans, through a span processor
  on the SDK's tracer provider (``caseforge[otel]``).
- :mod:`~caseforge.tracing.receiver`: a command or HTTP agent's spans, through an OTLP/HTTP
  receiver (protobuf with ``caseforge[otel]``, JSON always), decoded by
  :mod:`~caseforge.tracing.otlp`.
- :mod:`~caseforge.tracing.own`: caseforge's own spans (runs, case-trials, agent, judge and
  model calls), exported over OTLP/HTTP when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, and
  nothing at all when it is not.

Nothing here imports ``opentelemetry`` until an agent or the environment asks for it.
"""
