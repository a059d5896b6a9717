"""An OTLP/HTTP trace receiver for one run: ``POST /v1/traces``, protobuf or JSON.

A command or HTTP agent exports its spans here (a command is pointed here by
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` unless its user set that variable). Each span is
offered to the registry, which keeps it with the case-trial of its trace id. The receiver
listens on loopback by default (``--otlp-listen HOST:PORT`` says where); on a loopback
address it answers only requests whose ``Host`` names this machine, so a web page cannot
post spans into a run through DNS rebinding. Each request is stored before it is answered:
when a command agent's exporter has its answer, its spans are there.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

from caseforge.network import host_of_header, is_loopback
from caseforge.tracing.context import REGISTRY, SpanRegistry
from caseforge.tracing.otlp import OtlpError, from_json, from_protobuf

PATH = "/v1/traces"
MAX_BODY = 32 * 1024 * 1024  # one export request, as sent and once inflated


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    registry: SpanRegistry
    loopback_only: bool
    received: int = 0  # requests stored
    problems: list[str]  # what kept spans out, to say once in the run's warnings


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    JSON: ClassVar[str] = "application/json"
    PROTOBUF: ClassVar[str] = "application/x-protobuf"

    def log_message(self, format: str, *args: object) -> None:
        return None  # an exporter's requests are not caseforge's output

    def _answer(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self, status: int, message: str) -> None:
        self._answer(status, message.encode("utf-8") + b"\n")

    def do_GET(self) -> None:
        self._refuse(405, f"caseforge's OTLP receiver takes POST {PATH}")

    def do_POST(self) -> None:
        if self.server.loopback_only:
            host = host_of_header(self.headers.get("Host", ""))
            if host is None or not is_loopback(host):
                self._refuse(421, "this receiver answers only requests to this machine")
                return
        if self.path.split("?")[0].rstrip("/") != PATH:
            self._refuse(404, f"caseforge's OTLP receiver takes POST {PATH}")
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._refuse(411, "a Content-Length is needed")
            return
        if int(length) > MAX_BODY:
            self._refuse(413, f"a trace export of at most {MAX_BODY // 2**20} MB")
            return
        body = self.rfile.read(int(length))
        try:
            body = _inflated(body, self.headers.get("Content-Encoding", ""))
        except ValueError as exc:
            self._refuse(400, str(exc))
            return
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        try:
            if kind == self.JSON:
                spans = from_json(json.loads(body))
            elif kind == self.PROTOBUF:
                spans = from_protobuf(body)
            else:
                self._refuse(415, f"send {self.PROTOBUF} or {self.JSON}")
                return
        except ImportError:
            problem = (
                "the agent exported its spans in protobuf, which caseforge reads with "
                "opentelemetry-proto: they were refused. Install it where caseforge runs "
                "(pip install 'caseforge[otel]'); an exporter that can send JSON needs "
                "nothing (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json: OpenTelemetry JS, the "
                "Collector; Python's exporter sends protobuf only)"
            )
            if problem not in self.server.problems:
                self.server.problems.append(problem)
            self._refuse(415, problem)
            return
        except (OtlpError, ValueError) as exc:
            self._refuse(400, f"not an OTLP trace export: {exc}")
            return
        for span in spans:
            self.server.registry.offer(span)
        self.server.received += 1
        # An empty ExportTraceServiceResponse: full success.
        self._answer(200, b"{}" if kind == self.JSON else b"", kind)


def _inflated(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise ValueError(f"Content-Encoding {encoding!r}: send gzip, deflate or none")
    inflater = zlib.decompressobj(wbits=31 if encoding == "gzip" else 15)
    try:
        out = inflater.decompress(body, MAX_BODY + 1)
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise ValueError(f"cannot inflate the body ({encoding}): {exc}") from None
    if len(out) > MAX_BODY or inflater.unconsumed_tail:
        raise ValueError(f"a trace export of at most {MAX_BODY // 2**20} MB, inflated")
    return out


class SpanReceiver:
    """The run's OTLP/HTTP receiver, on a thread of its own."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, registry: SpanRegistry = REGISTRY
    ) -> None:
        self.host, self.port, self.registry = host, port, registry
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._problems: list[str] = []

    @property
    def problems(self) -> list[str]:
        """What kept an agent's spans out (said once each)."""
        return list(self._problems)

    def start(self) -> SpanReceiver:
        """Listen (``OSError`` when the address cannot be had) and serve on a thread."""
        if self._server is not None:
            return self
        kind = _Server6 if ":" in self.host else _Server
        server = kind((self.host, self.port), _Handler)
        server.registry = self.registry
        server.loopback_only = is_loopback(self.host)
        server.problems = self._problems
        self._server = server
        self.port = int(server.server_address[1])
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True,
            name="caseforge-otlp",
        )  # fmt: skip
        self._thread.start()
        return self

    @property
    def received(self) -> int:
        """Export requests stored so far."""
        return self._server.received if self._server is not None else 0

    @property
    def endpoint(self) -> str:
        """The base URL an exporter on this machine is given (``/v1/traces`` is added)."""
        host = self.host
        if host in ("0.0.0.0", ""):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}"

    @property
    def traces_url(self) -> str:
        """The full traces URL (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` takes it whole)."""
        return self.endpoint + PATH

    def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            with contextlib.suppress(RuntimeError):
                self._thread.join(timeout=5)
