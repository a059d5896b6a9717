"""A chat-completions endpoint on loopback that answers every request with one recorded
wire-format completion, and keeps when each request arrived: for agents in other
processes (Ray workers), which an in-process mock cannot reach."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.llm.wire import completion


@dataclass
class FakeModel:
    base_url: str
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of each request


@contextmanager
def fake_model() -> Iterator[FakeModel]:
    body = json.dumps(completion("fine", prompt_tokens=1000, completion_tokens=500)).encode()
    seen: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(time.monotonic())
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

        def date_time_string(self, timestamp: float | None = None) -> str:
            return "Mon, 02 Mar 2026 09:30:00 GMT"  # recordings of two runs compare equal

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield FakeModel(f"http://127.0.0.1:{server.server_port}/v1", seen)
    finally:
        server.shutdown()
        server.server_close()
