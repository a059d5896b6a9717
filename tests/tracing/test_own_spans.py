"""caseforge's own spans, exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: a
run, its case-trials, agent, judge and model calls, with the GenAI conventions. What goes
over the wire is read as bytes: no input, reply, prompt or completion by default; with
``otel.capture_content: true`` they go, but never for a case marked sensitive. Without the
variable, nothing is exported and OpenTelemetry is not imported."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from caseforge.api import run_suite
from tests.helpers import REPO_ROOT, TIMEOUT_S, write_toy_suite
from tests.llm.wire import completion

SECRETS = {
    "input": "INPUT-SECRET-B2",
    "prompt": "PROMPT-SECRET-A1",
    "reply": "REPLY-SECRET-C3",
    "completion": "COMPLETION-SECRET-D4",
    "sensitive": "SENSITIVE-SECRET-E5",
}

AGENT = f'''
async def run(input, ctx):
    answer = await ctx.llm(model="fake-model").chat(
        [{{"role": "user", "content": "{SECRETS["prompt"]} " + input["q"]}}]
    )
    return {{"output": {{}}, "reply": "{SECRETS["reply"]} " + input["q"] + " " + answer.text}}
'''


@pytest.fixture
def collector() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback OTLP/HTTP collector that keeps each export's body as sent."""
    bodies: list[bytes] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            bodies.append(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    server.shutdown()
    server.server_close()


@pytest.fixture
def model() -> Iterator[str]:
    """A chat-completions endpoint answering every request with one completion."""
    body = json.dumps(completion(SECRETS["completion"], model="fake-model")).encode()

    class Model(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def suite(tmp_path: Path, capture: bool) -> Path:
    cases = [
        {"id": "plain", "input": {"q": SECRETS["input"]}, "split": "dev"},
        {
            "id": "marked",
            "input": {"q": SECRETS["sensitive"]},
            "split": "dev",
            "provenance": {"sensitive": True},
        },
    ]
    return write_toy_suite(
        tmp_path / ("captured" if capture else "default"),
        cases,
        {
            "name": "own-spans",
            "agent": {"callable": "own_agent:run"},
            "timeout_s": 120,
            "judge": {"model": "fake-model"},
            "otel": {"capture_content": capture},
        },
        expect={
            "reply": {"mode": "must_include", "values": ["SECRET"]},
            "tone": {"mode": "judge", "rubric": "polite"},
        },
        files={"own_agent.py": AGENT},
    )


def exported(bodies: list[bytes]) -> list[tuple[str, dict[str, object], str]]:
    """(span name, attributes, trace id) of every span exported."""
    found = []
    for body in bodies:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            service = {a.key: a.value.string_value for a in resource.resource.attributes}
            assert service["service.name"] == "caseforge"
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attributes: dict[str, object] = {}
                    for a in span.attributes:
                        kind = a.value.WhichOneof("value")
                        attributes[a.key] = getattr(a.value, kind) if kind else None
                    found.append((span.name, attributes, span.trace_id.hex()))
    return found


def run_traced(
    tmp_path: Path, capture: bool, collector: str, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector)
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER",
                 "OTEL_EXPORTER_OTLP_COMPRESSION", "CASEFORGE_MODEL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", model)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    run_suite(suite(tmp_path, capture), store=f"sqlite:///{tmp_path / 'store.db'}", no_cache=True)


def test_no_content_leaves_by_default(
    tmp_path: Path,
    collector: tuple[str, list[bytes]],
    model: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, bodies = collector
    run_traced(tmp_path, False, url, model, monkeypatch)
    wire = b"".join(bodies)
    assert wire, "nothing was exported"
    for secret in SECRETS.values():
        assert secret.encode() not in wire, secret
    spans = exported(bodies)
    names = [name for name, _, _ in spans]
    assert names.count("caseforge run own-spans") == 1
    assert sorted(n for n in names if n.startswith("caseforge case-trial")) == [
        "caseforge case-trial marked",
        "caseforge case-trial plain",
    ]
    assert names.count("invoke_agent own_agent:run") == 2
    assert names.count("chat fake-model") >= 4  # the agent's model calls and the judge's
    assert names.count("caseforge judge tone") == 2
    chat = next(attrs for name, attrs, _ in spans if name == "chat fake-model")
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.request.model"] == "fake-model"
    assert chat["gen_ai.usage.input_tokens"] == 120
    assert "gen_ai.input.messages" not in chat
    # each case-trial is a trace of its own; its agent call, model calls and judge join it
    by_trace: dict[str, list[str]] = {}
    for name, _, trace_id in spans:
        by_trace.setdefault(trace_id, []).append(name)
    plain = next(t for t in by_trace.values() if "caseforge case-trial plain" in t)
    assert "invoke_agent own_agent:run" in plain and "caseforge judge tone" in plain
    assert plain.count("chat fake-model") >= 2


def test_content_goes_when_asked_but_never_for_a_sensitive_case(
    tmp_path: Path,
    collector: tuple[str, list[bytes]],
    model: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, bodies = collector
    run_traced(tmp_path, True, url, model, monkeypatch)
    wire = b"".join(bodies)
    for what in ("input", "prompt", "reply", "completion"):
        assert SECRETS[what].encode() in wire, what
    assert SECRETS["sensitive"].encode() not in wire
    spans = exported(bodies)
    marked_trace = next(t for n, _, t in spans if n == "caseforge case-trial marked")
    for name, attributes, trace_id in spans:
        if trace_id == marked_trace:
            assert not any(k in attributes for k in ("gen_ai.input.messages",
                                                     "gen_ai.output.messages")), name  # fmt: skip


def test_without_the_variable_nothing_is_exported_nor_imported(tmp_path: Path) -> None:
    probe = write_toy_suite(
        tmp_path / "plain",
        [{"id": "one", "input": {"q": "x"}, "split": "dev"}],
        {"name": "quiet", "agent": {"callable": "quiet_agent:run"}, "timeout_s": 120},
        expect={"reply": {"mode": "exact", "value": "ok"}},
        files={
            "quiet_agent.py": "def run(input, ctx):\n    return {'output': {}, 'reply': 'ok'}\n"
        },
    )
    script = (
        "import sys; from caseforge.api import run_suite; "
        f"run_suite({str(probe)!r}, store={f'sqlite:///{tmp_path}/s.db'!r}); "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    env = {"PYTHONPATH": f"{probe}:{REPO_ROOT}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True,
        timeout=TIMEOUT_S, check=False, cwd=probe,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
