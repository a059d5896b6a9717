"""The OTLP/HTTP receiver: protobuf from OpenTelemetry's own exporter, JSON as other SDKs
send it, gzip; each span kept with the open case-trial of its trace, the rest dropped; and
requests that are not trace exports, or not to this machine, refused."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

from caseforge.tracing.context import SpanRegistry, new_span_id, new_trace_id
from caseforge.tracing.receiver import SpanReceiver


@pytest.fixture
def receiver() -> Iterator[SpanReceiver]:
    found = SpanReceiver("127.0.0.1", 0, SpanRegistry()).start()
    yield found
    found.close()


def export(url: str, trace_id: str, parent: str, compression: Compression | None = None) -> None:
    """Two spans under ``parent``, as an agent exports them: the SDK's exporter, protobuf."""
    provider = TracerProvider(resource=Resource.create({"service.name": "agent-x"}))
    exporter = OTLPSpanExporter(endpoint=url, compression=compression or Compression.NoCompression)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests")
    remote = SpanContext(int(trace_id, 16), int(parent, 16), True, TraceFlags(1))
    context = trace.set_span_in_context(trace.NonRecordingSpan(remote))
    with tracer.start_as_current_span("handle", context=context) as top:
        top.set_attribute("order.count", 2)
        with tracer.start_as_current_span("execute_tool lookup") as tool:
            tool.set_attribute("gen_ai.tool.name", "lookup")
            tool.set_attribute("tags", ["a", "b"])
            tool.set_status(Status(StatusCode.ERROR, "not found"))
    provider.shutdown()


def test_protobuf_from_the_sdk_exporter_is_kept_with_its_case_trial(
    receiver: SpanReceiver,
) -> None:
    trace_id, parent = new_trace_id(), new_span_id()
    trial = receiver.registry.open(trace_id)
    export(receiver.traces_url, trace_id, parent)
    export(receiver.traces_url, new_trace_id(), parent)  # another trace: not this trial's
    spans, dropped = trial.take()
    assert dropped == 0 and receiver.registry.unclaimed == 2
    by_name = {s["name"]: s for s in spans}
    assert set(by_name) == {"handle", "execute_tool lookup"}
    top, tool = by_name["handle"], by_name["execute_tool lookup"]
    assert top["trace_id"] == trace_id and top["parent_id"] == parent
    assert tool["parent_id"] == top["span_id"]
    assert tool["status"] == "error" and tool["status_message"] == "not found"
    assert tool["attributes"] == {"gen_ai.tool.name": "lookup", "tags": ["a", "b"]}
    assert top["attributes"] == {"order.count": 2} and top["service"] == "agent-x"
    assert top["kind"] == "internal" and top["end_ns"] >= top["start_ns"] > 0


def test_gzip_protobuf_too(receiver: SpanReceiver) -> None:
    trace_id = new_trace_id()
    trial = receiver.registry.open(trace_id)
    export(receiver.traces_url, trace_id, new_span_id(), Compression.Gzip)
    assert len(trial.take()[0]) == 2


def json_export(trace_id: str) -> dict[str, object]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name",
                                             "value": {"stringValue": "js"}}]},
                "scopeSpans": [
                    {
                        "scope": {"name": "agent"},
                        "spans": [
                            {
                                "traceId": trace_id,
                                "spanId": "00f067aa0ba902b7",
                                "parentSpanId": "",
                                "name": "retrieve",
                                "kind": 3,
                                "startTimeUnixNano": "1700000000000000000",
                                "endTimeUnixNano": "1700000000250000000",
                                "attributes": [
                                    {"key": "hits", "value": {"intValue": "3"}},
                                    {"key": "score", "value": {"doubleValue": 0.5}},
                                    {"key": "cached", "value": {"boolValue": True}},
                                ],
                                "status": {"code": "STATUS_CODE_ERROR", "message": "timeout"},
                                "events": [{"name": "exception",
                                            "timeUnixNano": "1700000000100000000",
                                            "attributes": [{"key": "exception.message",
                                                            "value": {"stringValue": "slow"}}]}],
                            }
                        ],
                    }
                ],
            }
        ]
    }  # fmt: skip


def test_json_as_other_sdks_send_it(receiver: SpanReceiver) -> None:
    trace_id = new_trace_id()
    trial = receiver.registry.open(trace_id)
    body = json.dumps(json_export(trace_id)).encode()
    answer = httpx.post(
        receiver.traces_url, content=body, headers={"content-type": "application/json"}
    )
    assert answer.status_code == 200 and answer.json() == {}
    other = body.replace(b"00f067aa0ba902b7", b"00f067aa0ba902b8")  # another span, gzipped
    gz = httpx.post(
        receiver.traces_url,
        content=gzip.compress(other),
        headers={"content-type": "application/json", "content-encoding": "gzip"},
    )
    assert gz.status_code == 200
    again = httpx.post(  # an exporter's retry of a batch whose answer it lost: kept once
        receiver.traces_url, content=body, headers={"content-type": "application/json"}
    )
    assert again.status_code == 200
    spans, _ = trial.take()
    assert len(spans) == 2
    assert spans[1]["span_id"] == "00f067aa0ba902b8"
    assert spans[0] == {
        "trace_id": trace_id,
        "span_id": "00f067aa0ba902b7",
        "parent_id": None,
        "name": "retrieve",
        "kind": "client",
        "status": "error",
        "status_message": "timeout",
        "attributes": {"hits": 3, "score": 0.5, "cached": True},
        "events": [
            {"name": "exception", "time_ns": 1700000000100000000,
             "attributes": {"exception.message": "slow"}}
        ],
        "start_ns": 1700000000000000000,
        "end_ns": 1700000000250000000,
        "service": "js",
        "scope": "agent",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("path", "headers", "body", "status", "says"),
    [
        ("/v1/traces", {"content-type": "text/plain"}, b"x", 415, "application/x-protobuf"),
        ("/v1/logs", {"content-type": "application/json"}, b"{}", 404, "POST /v1/traces"),
        ("/v1/traces", {"content-type": "application/json"}, b"[1]", 400, "not a JSON object"),
        ("/v1/traces", {"content-type": "application/x-protobuf"}, b"\xff\xff", 400, "not an OTLP"),
        ("/v1/traces", {"content-type": "application/json", "content-encoding": "br"}, b"{}",
         400, "Content-Encoding 'br'"),
        ("/v1/traces", {"content-type": "application/json", "host": "evil.example:80"}, b"{}",
         421, "only requests to this machine"),
    ],
)  # fmt: skip
def test_what_is_not_a_trace_export_to_this_machine_is_refused(
    receiver: SpanReceiver, path: str, headers: dict[str, str], body: bytes, status: int, says: str
) -> None:
    answer = httpx.post(receiver.endpoint + path, content=body, headers=headers)
    assert answer.status_code == status
    assert says in answer.text
    assert receiver.received == 0


def test_the_endpoint_a_local_exporter_is_given() -> None:
    assert SpanReceiver("0.0.0.0", 4318).endpoint == "http://127.0.0.1:4318"
    assert SpanReceiver("::1", 4318).traces_url == "http://[::1]:4318/v1/traces"
