"""OTLP trace export requests (``POST /v1/traces``) into :class:`SpanData`: the JSON
encoding (ids in hex, 64-bit integers as strings or numbers, enums as numbers or names)
and the protobuf one (``opentelemetry-proto``, in ``caseforge[otel]``). An in-process
agent's finished spans (the SDK's ``ReadableSpan``) are read the same way.

Every decoder keeps at most ``spans.MAX_ATTRIBUTES`` attributes and ``MAX_EVENTS`` events
per span and cuts text values to ``MAX_TEXT`` characters.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from caseforge.errors import CaseforgeError
from caseforge.jsontypes import JSONObject, JSONValue
from caseforge.tracing.spans import (
    MAX_ATTRIBUTES,
    MAX_EVENTS,
    SpanData,
    SpanEvent,
    bounded_text,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
STATUSES = {0: "unset", 1: "ok", 2: "error"}


class OtlpError(CaseforgeError):
    """A request body that is not an OTLP trace export in the encoding it claims (the
    receiver answers it 400; it never reaches a command)."""


# --- JSON -------------------------------------------------------------------------------------


def from_json(data: object) -> list[SpanData]:
    """The spans of an OTLP/JSON ``ExportTraceServiceRequest``."""
    if not isinstance(data, Mapping):
        raise OtlpError("the body is not a JSON object")
    found: list[SpanData] = []
    for resource_spans in _items(data.get("resourceSpans")):
        resource = resource_spans.get("resource")
        attrs = _json_attributes(
            resource.get("attributes") if isinstance(resource, Mapping) else ()
        )
        service = attrs.get("service.name")
        for scope_spans in _items(resource_spans.get("scopeSpans")):
            scope = scope_spans.get("scope")
            scope_name = scope.get("name") if isinstance(scope, Mapping) else None
            for span in _items(scope_spans.get("spans")):
                found.append(_json_span(span, service, scope_name))
    return found


def _items(value: object) -> Iterator[Mapping[str, object]]:
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, Mapping))


def _json_span(span: Mapping[str, object], service: object, scope: object) -> SpanData:
    trace_id, span_id = _json_id(span.get("traceId"), 16), _json_id(span.get("spanId"), 8)
    if trace_id is None or span_id is None:
        raise OtlpError("a span without a valid traceId or spanId")
    status = span.get("status")
    status = status if isinstance(status, Mapping) else {}
    data: SpanData = {
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_id": _json_id(span.get("parentSpanId"), 8),
        "name": str(span.get("name") or ""),
        "kind": _enum(span.get("kind"), KINDS, "SPAN_KIND_"),
        "status": _enum(status.get("code"), STATUSES, "STATUS_CODE_"),
        "attributes": _json_attributes(span.get("attributes")),
        "events": [
            _event(
                str(event.get("name") or ""),
                _int(event.get("timeUnixNano")),
                _json_attributes(event.get("attributes")),
            )
            for event in list(_items(span.get("events")))[:MAX_EVENTS]
        ],
    }
    _times(data, _int(span.get("startTimeUnixNano")), _int(span.get("endTimeUnixNano")))
    _extras(data, status.get("message"), service, scope)
    return data


def _json_id(value: object, size: int) -> str | None:
    """A trace or span id: hex in OTLP/JSON (base64, which some encoders write, read too)."""
    if not isinstance(value, str) or not value:
        return None
    text = value.lower()
    if len(text) == 2 * size and all(c in "0123456789abcdef" for c in text):
        return None if set(text) == {"0"} else text
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise OtlpError(f"{value!r} is not a hex (or base64) id of {size} bytes") from None
    if len(raw) != size:
        raise OtlpError(f"{value!r} is not an id of {size} bytes")
    return raw.hex() if any(raw) else None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _enum(value: object, names: Mapping[int, str], prefix: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return names.get(value, "unset" if prefix == "STATUS_CODE_" else "unspecified")
    if isinstance(value, str) and value.startswith(prefix):
        return value[len(prefix) :].lower()
    return "unset" if prefix == "STATUS_CODE_" else "unspecified"


def _json_attributes(value: object) -> JSONObject:
    found: JSONObject = {}
    for item in _items(value):
        key = item.get("key")
        if isinstance(key, str) and len(found) < MAX_ATTRIBUTES:
            found[key] = _json_value(item.get("value"))
    return found


def _json_value(value: object) -> JSONValue:
    if not isinstance(value, Mapping):
        return None
    if "stringValue" in value:
        return bounded_text(str(value["stringValue"]))
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        number = value["intValue"]
        digits = isinstance(number, int | str) and str(number).lstrip("-").isdigit()
        return int(str(number)) if digits else None
    if "doubleValue" in value:
        number = value["doubleValue"]
        return float(number) if isinstance(number, int | float | str) else None
    if "arrayValue" in value:
        array = value["arrayValue"]
        values = array.get("values") if isinstance(array, Mapping) else None
        return [_json_value(v) for v in values] if isinstance(values, list) else []
    if "kvlistValue" in value:
        kvlist = value["kvlistValue"]
        return _json_attributes(kvlist.get("values") if isinstance(kvlist, Mapping) else None)
    if "bytesValue" in value:
        return str(value["bytesValue"])  # base64, as sent
    return None


# --- protobuf ---------------------------------------------------------------------------------


def from_protobuf(body: bytes) -> list[SpanData]:
    """The spans of an OTLP/protobuf ``ExportTraceServiceRequest`` (needs
    ``opentelemetry-proto``, which ``caseforge[otel]`` installs)."""
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise OtlpError(f"not an OTLP protobuf trace export: {exc}") from None
    found: list[SpanData] = []
    for resource_spans in request.resource_spans:
        service = _pb_attributes(resource_spans.resource.attributes).get("service.name")
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if len(span.trace_id) != 16 or len(span.span_id) != 8:
                    raise OtlpError("a span without a valid trace_id or span_id")
                data: SpanData = {
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_id": span.parent_span_id.hex() if any(span.parent_span_id) else None,
                    "name": span.name,
                    "kind": KINDS.get(span.kind, "unspecified"),
                    "status": STATUSES.get(span.status.code, "unset"),
                    "attributes": _pb_attributes(span.attributes),
                    "events": [
                        _event(e.name, e.time_unix_nano or None, _pb_attributes(e.attributes))
                        for e in list(span.events)[:MAX_EVENTS]
                    ],
                }
                _times(data, span.start_time_unix_nano or None, span.end_time_unix_nano or None)
                _extras(data, span.status.message, service, scope_spans.scope.name)
                found.append(data)
    return found


def _pb_attributes(items: Iterable[Any]) -> JSONObject:
    found: JSONObject = {}
    for item in items:
        if len(found) >= MAX_ATTRIBUTES:
            break
        found[str(item.key)] = _pb_value(item.value)
    return found


def _pb_value(value: Any) -> JSONValue:
    which = value.WhichOneof("value")
    if which == "string_value":
        return bounded_text(str(value.string_value))
    if which == "bool_value":
        return bool(value.bool_value)
    if which == "int_value":
        return int(value.int_value)
    if which == "double_value":
        return float(value.double_value)
    if which == "array_value":
        return [_pb_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return _pb_attributes(value.kvlist_value.values)
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return None


# --- the SDK's finished spans -----------------------------------------------------------------


def from_readable(span: ReadableSpan) -> SpanData:
    """An in-process agent's finished span, from its tracer provider."""
    context = span.context
    parent = span.parent
    resource = span.resource.attributes.get("service.name") if span.resource else None
    scope = span.instrumentation_scope
    data: SpanData = {
        "trace_id": f"{context.trace_id:032x}" if context else "0" * 32,
        "span_id": f"{context.span_id:016x}" if context else "0" * 16,
        "parent_id": f"{parent.span_id:016x}" if parent is not None else None,
        "name": span.name,
        "kind": span.kind.name.lower(),
        "status": span.status.status_code.name.lower(),
        "attributes": _sdk_attributes(span.attributes),
        "events": [
            _event(e.name, e.timestamp, _sdk_attributes(e.attributes))
            for e in list(span.events)[:MAX_EVENTS]
        ],
    }
    _times(data, span.start_time, span.end_time)
    _extras(data, span.status.description, resource, scope.name if scope else None)
    return data


def _sdk_attributes(attributes: Mapping[str, object] | None) -> JSONObject:
    found: JSONObject = {}
    for key, value in (attributes or {}).items():
        if len(found) >= MAX_ATTRIBUTES:
            break
        found[str(key)] = _sdk_value(value)
    return found


def _sdk_value(value: object) -> JSONValue:
    if isinstance(value, str):
        return bounded_text(value)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Sequence):
        return [_sdk_value(v) for v in value]
    return bounded_text(str(value))


# --- shared -----------------------------------------------------------------------------------


def _event(name: str, time_ns: int | None, attributes: JSONObject) -> SpanEvent:
    event: SpanEvent = {"name": name, "attributes": attributes}
    if time_ns:
        event["time_ns"] = time_ns
    return event


def _times(data: SpanData, start: int | None, end: int | None) -> None:
    if start:
        data["start_ns"] = start
    if end:
        data["end_ns"] = end


def _extras(data: SpanData, message: object, service: object, scope: object) -> None:
    if isinstance(message, str) and message:
        data["status_message"] = bounded_text(message)
    if isinstance(service, str) and service:
        data["service"] = service
    if isinstance(scope, str) and scope:
        data["scope"] = scope
