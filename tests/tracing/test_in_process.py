"""An in-process agent's spans, kept with each case-trial: whichever of the agent and
caseforge sets OpenTelemetry's global tracer provider first (it can be set once per
process, so each order runs in a process of its own), and without mixing the spans of
case-trials that run at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from caseforge.api import run_suite
from caseforge.report.build import load_report
from tests.helpers import REPO_ROOT, TIMEOUT_S, write_toy_suite

# The agent's own exporter (an in-memory one, standing for a team's collector) must keep
# getting its spans in both orders.
AGENT_SETS_FIRST = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

MINE = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(MINE))
trace.set_tracer_provider(provider)  # at import: before caseforge could
tracer = trace.get_tracer("order-agent")


def run(input, ctx):
    with tracer.start_as_current_span("handle ticket"):
        with tracer.start_as_current_span("execute_tool lookup_order") as tool:
            tool.set_attribute("gen_ai.tool.name", "lookup_order")
    return {"output": {}, "reply": "ok"}
"""

# The way the docs ask for: add processors to the provider caseforge has set, never set one.
CASEFORGE_SETS_FIRST = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

MINE = InMemorySpanExporter()
tracer = trace.get_tracer("order-agent")
PROVIDER = []


def run(input, ctx):
    if not PROVIDER:  # set up on first use: caseforge's provider is there by then
        provider = trace.get_tracer_provider()
        if isinstance(provider, TracerProvider):
            PROVIDER.append("found one set")
        else:
            provider = TracerProvider()
            trace.set_tracer_provider(provider)
            PROVIDER.append("set one")
        provider.add_span_processor(SimpleSpanProcessor(MINE))
    with tracer.start_as_current_span("handle ticket"):
        with tracer.start_as_current_span("execute_tool lookup_order") as tool:
            tool.set_attribute("gen_ai.tool.name", "lookup_order")
    return {"output": {}, "reply": "ok"}
"""

DRIVER = """
import json, sys
from caseforge.api import run_suite
from caseforge.report.build import load_report
import order_agent
[report] = run_suite(sys.argv[1], store=sys.argv[2], trials=2)
full = load_report(report.run_id, sys.argv[2], raw=True)
trials = [t.model_dump(mode="json") for c in full.cases for t in c.trials]
print(json.dumps({
    "trials": trials,
    "agent_exported": sorted({s.name for s in order_agent.MINE.get_finished_spans()}),
    "provider": getattr(order_agent, "PROVIDER", []),
}))
"""

EXPECT = {
    "reply": {"mode": "exact", "value": "ok"},
    "trace": {"mode": "spans", "must_have": [{"name": "handle ticket", "count": 1}]},
    "tool_calls": {"must_call": ["lookup_order"]},
}


def run_in_own_process(tmp_path: Path, agent: str) -> dict[str, Any]:
    suite = write_toy_suite(
        tmp_path / "suite",
        [{"id": "order-1", "input": {"q": "where is ORD-1"}, "split": "dev"}],
        {"name": "orders", "agent": {"callable": "order_agent:run"}, "timeout_s": 120},
        expect=EXPECT,
        files={"order_agent.py": agent},
    )
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(suite), f"sqlite:///{tmp_path / 'store.db'}"],
        cwd=suite,
        env={"PYTHONPATH": f"{suite}:{REPO_ROOT}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def assert_kept(result: dict[str, Any]) -> None:
    assert len(result["trials"]) == 2
    trace_ids = set()
    for trial in result["trials"]:
        assert trial["status"] == "pass", trial["checks"]
        [root] = trial["spans"]
        assert root["name"] == "handle ticket"
        assert [c["name"] for c in root["children"]] == ["execute_tool lookup_order"]
        assert trial["tool_calls_source"] == "spans"
        trace_ids.add(trial["trace_id"])
    assert len(trace_ids) == 2  # a trace per case-trial
    assert result["agent_exported"] == ["execute_tool lookup_order", "handle ticket"]


def test_the_agent_set_its_provider_first_and_caseforge_adds_its_processor(
    tmp_path: Path,
) -> None:
    assert_kept(run_in_own_process(tmp_path, AGENT_SETS_FIRST))


def test_caseforge_set_the_provider_first_and_the_agent_adds_its_processor_to_it(
    tmp_path: Path,
) -> None:
    result = run_in_own_process(tmp_path, CASEFORGE_SETS_FIRST)
    assert result["provider"] == ["found one set"]  # the SDK's, set by caseforge
    assert_kept(result)


CONCURRENT = """
import asyncio
from opentelemetry import trace

tracer = trace.get_tracer("busy-agent")


async def run(input, ctx):
    with tracer.start_as_current_span("handle") as top:
        top.set_attribute("case", ctx.case_id)
        for step in range(3):
            await asyncio.sleep(0.001 * (hash(ctx.case_id) % 5))  # interleave with the others
            with tracer.start_as_current_span(f"step {step}") as span:
                span.set_attribute("case", ctx.case_id)
    return {"output": {}, "reply": "ok"}


def sync_run(input, ctx):  # on caseforge's threads: the context goes with the call
    with tracer.start_as_current_span("handle") as top:
        top.set_attribute("case", ctx.case_id)
    return {"output": {}, "reply": "ok"}
"""


def test_concurrent_case_trials_keep_their_own_spans(tmp_path: Path) -> None:
    cases = [{"id": f"case-{i:02d}", "input": {"q": str(i)}, "split": "dev"} for i in range(12)]
    for agent in ("busy_agent:run", "busy_agent:sync_run"):
        suite = write_toy_suite(
            tmp_path / agent.replace(":", "-"),
            [dict(c) for c in cases],
            {"name": "busy", "agent": {"callable": agent}, "concurrency": 8, "timeout_s": 120},
            expect={"trace": {"mode": "spans", "must_have": ["handle"]}},
            files={"busy_agent.py": CONCURRENT},
        )
        store = f"sqlite:///{suite / 'store.db'}"
        [report] = run_suite(suite, store=store, trials=2)
        full = load_report(report.run_id, store, raw=True)
        steps = 3 if agent.endswith(":run") else 0
        for case in full.cases:
            for trial in case.trials:
                assert trial.status.value == "pass"
                assert trial.spans is not None
                [root] = trial.spans
                assert root.attributes["case"] == case.id
                assert [c.attributes["case"] for c in root.children] == [case.id] * steps
