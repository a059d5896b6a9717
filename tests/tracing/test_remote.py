"""A command or HTTP agent's spans: caseforge sends the W3C traceparent (TRACEPARENT for a
command, the traceparent header over HTTP), receives OTLP/HTTP for the run, and keeps each
span with its case-trial; a ``spans`` check passes and fails on them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from caseforge.agent.context import AgentContext
from caseforge.agent.transports import trace_environment
from caseforge.api import run_suite
from caseforge.api.run import execute_run
from caseforge.errors import EnvError, UsageError
from caseforge.report.build import load_report
from caseforge.run.rescore import rescore
from caseforge.store.db import RunStore
from tests.helpers import free_port, write_toy_suite

# An agent instrumented as any team would: the SDK's OTLP/HTTP exporter, configured by the
# standard variables, the parent taken from TRACEPARENT; its spans are flushed at exit.
COMMAND_AGENT = """
import json, os, sys
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

request = json.load(sys.stdin)
provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("cmd-agent")
parent = TraceContextTextMapPropagator().extract({"traceparent": os.environ["TRACEPARENT"]})
with tracer.start_as_current_span("handle", context=parent):
    for i in range(int(request["input"]["lookups"])):
        with tracer.start_as_current_span("execute_tool lookup") as tool:
            tool.set_attribute("gen_ai.tool.name", "lookup")
            tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"n": i}))
json.dump({"output": {"endpoint": os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")},
           "reply": "done"}, sys.stdout)
"""

EXPECT = {
    "trace": {
        "mode": "spans",
        "must_have": [{"name": "execute_tool *", "count": 2}],
        "order": ["handle", "execute_tool lookup"],
        "max_errors": 0,
    },
    "tool_calls": {"must_call": [{"name": "lookup", "args": {"n": 1}}]},
}


def command_suite(tmp_path: Path) -> Path:
    return write_toy_suite(
        tmp_path / "suite",
        [
            {"id": "two-lookups", "input": {"lookups": 2}, "split": "dev"},
            {"id": "three-lookups", "input": {"lookups": 3}, "split": "dev"},
        ],
        {
            "name": "cmd",
            "agent": {"command": [sys.executable, "cmd_agent.py"]},
            "timeout_s": 300,
            "concurrency": 2,
        },
        expect=EXPECT,
        files={"cmd_agent.py": COMMAND_AGENT},
    )


def test_a_command_agents_spans_arrive_with_their_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    suite = command_suite(tmp_path)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    [report] = run_suite(suite, store=store)
    full = load_report(report.run_id, store, raw=True)
    trials = {case.id: case.trials[0] for case in full.cases}
    two, three = trials["two-lookups"], trials["three-lookups"]
    assert two.status.value == "pass", two.checks
    assert three.status.value == "fail"  # three lookups: the spans check counts them
    [failed] = [c for c in three.checks if c.status.value == "fail"]
    assert failed.name == "trace" and failed.reason == "execute_tool *: 3 spans, expected 2×"
    assert two.spans is not None and [s.name for s in two.spans] == ["handle"]
    assert len(two.spans[0].children) == 2
    assert two.trace_id != three.trace_id
    assert two.tool_calls_source == "spans"
    assert [c.args for c in two.tool_calls] == [{"n": 0}, {"n": 1}]
    assert two.output is not None and str(two.output["endpoint"]).endswith("/v1/traces")


def test_a_users_own_traces_endpoint_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = f"http://127.0.0.1:{free_port()}/v1/traces"  # nothing listens: the team's collector
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", own)
    ctx = AgentContext("c", 1, 1, None, {}, ".")  # type: ignore[arg-type]
    ctx.traceparent, ctx.otlp_traces_url = "00-" + "a" * 32 + "-" + "b" * 16 + "-01", "http://x"
    env = trace_environment(ctx)
    assert env is not None
    assert (
        env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == own and env["TRACEPARENT"] == ctx.traceparent
    )
    suite = command_suite(tmp_path)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    [report] = run_suite(suite, store=store, cases=["two-lookups"])
    full = load_report(report.run_id, store, raw=True)
    [trial] = full.cases[0].trials
    assert trial.output == {"endpoint": own}
    # its spans went to the team's collector, not here: neither the spans check nor the
    # tool_calls check (the agent reported no calls, and no spans arrived) is judged
    assert trial.status.value == "incomplete"
    by_name = {c.name: c for c in trial.checks}
    assert by_name["trace"].status.value == "not_judged"
    assert by_name["tool_calls"].status.value == "not_judged"
    assert "reported no `tool_calls` and sent no spans" in by_name["tool_calls"].reason
    # each says why no span came (the run knows: the user's own endpoint), a rescore too
    because = f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set ({own}): the command agent exports"
    assert because in by_name["trace"].reason and because in by_name["tool_calls"].reason
    again = asyncio.run(rescore(RunStore(store), report.run_id, suite_dir=suite))
    [trial] = load_report(again.run_id, store).cases[0].trials
    assert because in {c.name: c for c in trial.checks}["trace"].reason
    assert trial.spans is None


def export_json(url: str, traceparent: str, names: list[str]) -> None:
    _, trace_id, parent, _ = traceparent.split("-")
    spans: list[dict[str, Any]] = []
    top = "1111111111111111"
    for index, name in enumerate(names):
        start = 10**18 + index
        spans.append({
            "traceId": trace_id, "spanId": f"{index + 2:016x}", "parentSpanId": top,
            "name": name, "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5),
        })  # fmt: skip
    spans.append(
        {
            "traceId": trace_id,
            "spanId": top,
            "parentSpanId": parent,
            "name": "handle",
            "startTimeUnixNano": str(10**18),
            "endTimeUnixNano": str(10**18 + 50),
        }
    )
    body = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    httpx.post(url, json=body).raise_for_status()


@pytest.fixture
def http_agent(tmp_path: Path) -> Iterator[tuple[str, list[str], str]]:
    """An HTTP agent that answers, then exports its spans a moment later (as a batch
    processor does): where it listens, the traceparents it got, the receiver's URL."""
    seen: list[str] = []
    receiver = f"http://127.0.0.1:{free_port()}"

    class Agent(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            parent = self.headers["traceparent"]
            seen.append(parent)
            body = json.dumps({"output": {}, "reply": "ok"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            names = ["retrieve"] * int(request["input"]["n"])

            def later() -> None:
                time.sleep(0.2)
                with contextlib.suppress(httpx.HTTPError):  # a receiver not there: lost
                    export_json(receiver + "/v1/traces", parent, names)

            threading.Thread(target=later, daemon=True).start()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Agent)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/run", seen, receiver
    server.shutdown()
    server.server_close()


def test_an_http_agents_spans_exported_after_it_answers_are_awaited(
    tmp_path: Path, http_agent: tuple[str, list[str], str]
) -> None:
    url, seen, receiver = http_agent
    suite = write_toy_suite(
        tmp_path / "suite",
        [
            {"id": "two", "input": {"n": 2}, "split": "dev"},
            {"id": "one", "input": {"n": 1}, "split": "dev"},
        ],
        {"name": "web", "agent": {"http": url}, "timeout_s": 300, "otel": {"span_wait_s": 120}},
        expect={"trace": {"mode": "spans", "must_have": [{"name": "retrieve", "count": 2}]}},
    )
    store = f"sqlite:///{tmp_path / 'store.db'}"
    listen = receiver.removeprefix("http://")
    [report] = run_suite(suite, store=store, otlp_listen=listen)
    statuses = {c.id: c.trials[0].status.value for c in report.cases}
    assert statuses == {"two": "pass", "one": "fail"}
    assert len(seen) == 2 and len(set(seen)) == 2
    assert all(len(header.split("-")[1]) == 32 for header in seen)


def test_an_address_that_cannot_be_had_stops_the_run_before_it_is_recorded(
    tmp_path: Path,
) -> None:
    suite = command_suite(tmp_path)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    with pytest.raises(UsageError, match="--otlp-listen 'nowhere': give HOST:PORT"):
        run_suite(suite, store=store, otlp_listen="nowhere")
    with pytest.raises(UsageError, match="--otlp-listen is for --executor local"):
        run_suite(suite, store=store, otlp_listen="127.0.0.1:4318", executor="ray")
    busy = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    try:
        taken = f"127.0.0.1:{busy.server_address[1]}"
        with pytest.raises(EnvError, match=f"--otlp-listen {taken}: cannot listen"):
            run_suite(suite, store=store, otlp_listen=taken)
    finally:
        busy.server_close()
    opened = RunStore(store)
    try:
        assert opened.list_runs() == []  # nothing was recorded
    finally:
        opened.close()


def test_the_wait_for_an_http_agents_spans_is_not_its_latency(
    tmp_path: Path, http_agent: tuple[str, list[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """caseforge waits for an HTTP agent's spans after it has answered; the wait is not the
    agent's: its latency (``latency`` checks, p50/p95, the gate) ends with the answer."""
    from caseforge.tracing.context import TrialSpans

    settle = TrialSpans.settle
    hold = 3.0  # each wait made at least this long: a latency counting it could not be shorter

    async def slow_settle(self: TrialSpans, call_span_id: str, timeout_s: float) -> bool:
        await asyncio.sleep(hold)
        return await settle(self, call_span_id, timeout_s)

    monkeypatch.setattr(TrialSpans, "settle", slow_settle)
    url, _, receiver = http_agent
    suite = write_toy_suite(
        tmp_path / "suite",
        [{"id": "two", "input": {"n": 2}, "split": "dev"}],
        {"name": "web", "agent": {"http": url}, "timeout_s": 300, "otel": {"span_wait_s": 120}},
        expect={"trace": {"mode": "spans", "must_have": [{"name": "retrieve", "count": 2}]}},
    )
    store = f"sqlite:///{tmp_path / 'store.db'}"
    [report] = run_suite(suite, store=store, otlp_listen=receiver.removeprefix("http://"))
    [trial] = report.cases[0].trials
    assert trial.status.value == "pass"  # the spans were awaited
    assert trial.latency_s is not None and trial.latency_s < hold


# An in-process agent whose code exports over OTLP to a fixed address, as promptfoo's
# tracing example does: with --otlp-listen on that address, its spans arrive too.
FIXED_EXPORTER_AGENT = """
import json, httpx

RECEIVER = "http://{listen}/v1/traces"

def run(input, ctx):
    _, trace_id, parent, _ = ctx.traceparent.split("-")
    spans = [{{"traceId": trace_id, "spanId": f"{{i + 2:016x}}", "parentSpanId": parent,
               "name": "retrieve", "startTimeUnixNano": str(10**18 + i),
               "endTimeUnixNano": str(10**18 + i + 5)}} for i in range(input["n"])]
    body = {{"resourceSpans": [{{"scopeSpans": [{{"spans": spans + spans}}]}}]}}  # twice
    httpx.post(RECEIVER, json=body).raise_for_status()
    return {{"output": {{}}, "reply": "ok", "tool_calls": []}}
"""


def test_an_in_process_agent_exporting_to_a_fixed_address_is_heard_with_otlp_listen(
    tmp_path: Path,
) -> None:
    listen = f"127.0.0.1:{free_port()}"
    suite = write_toy_suite(
        tmp_path / "suite",
        [{"id": "two", "input": {"n": 2}, "split": "dev"}],
        {"name": "fixed", "agent": {"callable": "fixed_agent:run"}, "timeout_s": 300},
        expect={"trace": {"mode": "spans", "must_have": [{"name": "retrieve", "count": 2}]}},
        files={"fixed_agent.py": FIXED_EXPORTER_AGENT.format(listen=listen)},
    )
    store = f"sqlite:///{tmp_path / 'store.db'}"
    [report] = run_suite(suite, store=store, otlp_listen=listen)
    [trial] = report.cases[0].trials
    assert trial.status.value == "pass", trial.checks  # each span kept once, sent twice


def test_caseforges_own_spans_never_go_to_the_runs_own_receiver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user who points OTEL_EXPORTER_OTLP_TRACES_ENDPOINT at the run's --otlp-listen (so
    the command agent finds it) also asks for caseforge's own spans there: they are not
    sent (they would be taken for the agent's, then retried at a closed port), and the
    run says so."""
    listen = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"http://localhost:{listen.split(':')[1]}/v1/traces"
    )
    suite = command_suite(tmp_path)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    settings = {"store": store, "cases": ["two-lookups"], "otlp_listen": listen}
    result = asyncio.run(execute_run(str(suite), settings))
    [report] = result.reports
    full = load_report(report.run_id, store, raw=True)
    [trial] = full.cases[0].trials
    assert trial.status.value == "pass", trial.checks  # the agent's spans came here
    names = [s.name for s in trial.spans or []]
    assert names and not any(name.startswith("invoke_agent") for name in names)
    assert any("own receiver" in w for w in result.warnings)


def test_an_http_agents_spans_awaited_in_vain_say_so(
    tmp_path: Path, http_agent: tuple[str, list[str], str]
) -> None:
    """The agent exports to an address that is not this run's receiver: its spans never
    come, and the spans check's reason says what was awaited and where."""
    url, _, _ = http_agent
    suite = write_toy_suite(
        tmp_path / "suite",
        [{"id": "two", "input": {"n": 2}, "split": "dev"}],
        {"name": "web", "agent": {"http": url}, "timeout_s": 300, "otel": {"span_wait_s": 0.2}},
        expect={"trace": {"mode": "spans", "must_have": [{"name": "retrieve", "count": 2}]}},
    )
    store = f"sqlite:///{tmp_path / 'store.db'}"
    [report] = run_suite(suite, store=store)  # a receiver on a free port: not the agent's
    [trial] = report.cases[0].trials
    assert trial.status.value == "incomplete"
    [check] = trial.checks
    assert "none arrived within 0.2 s of its answer (otel.span_wait_s)" in check.reason
    assert "can the agent reach http://127.0.0.1:" in check.reason
