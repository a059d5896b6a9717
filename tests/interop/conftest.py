"""A finished run to export: a small fictional suite whose in-process agent answers with a
reply, a structured output and tool calls; one case passes, one fails, one is multi-turn,
and one agent call crashes. Made once per test module, in its own store."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pytest

from caseforge.api import run_suite
from caseforge.report.model import RunReport

AGENT = '''
"""A fictional help-desk agent for Vandoria's rail company."""


def run(input, ctx):
    if input.get("crash"):
        raise RuntimeError("the timetable service is down")
    messages = ctx.messages or []
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    route = input.get("route") or ("R-12" if "R-12" in said else None)
    if messages and route is None:
        return {"output": {"intent": "timetable"}, "reply": "Which route number?"}
    return {
        "output": {"intent": "timetable", "route": route},
        "reply": f"Route {route} leaves Lumenport at 08:15.",
        "tool_calls": [
            {"name": "timetable", "args": {"route": route}, "result": {"first": "08:15"}}
        ],
        "usage": {"input_tokens": 20, "output_tokens": 8, "cost_usd": 0.002},
        "done": True,
    }
'''

CASES = {
    "route-r12": """
        id: route-r12
        input: {route: R-12}
        expect:
          intent: {mode: exact, value: timetable}
          reply: {must_include: ["08:15"]}
          tool_calls: {must_call: [timetable]}
        tags: [timetable]
    """,
    "route-r40": """
        id: route-r40
        input: {route: R-40}
        expect:
          reply: {must_include: ["09:30"]}
    """,
    "chat-route": """
        id: chat-route
        input: {}
        conversation:
          max_turns: 3
          script:
            - say: When does the first train leave?
            - say: It's R-12.
        expect:
          reply: {must_include: ["08:15"]}
    """,
    "crash": """
        id: crash
        input: {crash: true, route: R-1}
        expect:
          reply: {must_include: ["anything"]}
    """,
}


@dataclass(frozen=True)
class StoredRun:
    store: str
    run_id: str
    report: RunReport


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> StoredRun:
    root = tmp_path_factory.mktemp("run")
    suite = root / "rail"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text(
        "name: rail\nagent: {callable: 'rail_agent:run'}\nconfigs: {v1: {model: fictional-1}}\n",
        encoding="utf-8",
    )
    (suite / "rail_agent.py").write_text(AGENT, encoding="utf-8")
    for case_id, text in CASES.items():
        (suite / "cases" / f"{case_id}.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    store = f"sqlite:///{root / 'store.db'}"
    [report] = run_suite(suite, store=store, trials=2, judge=False, max_error_rate=1.0)
    return StoredRun(store, report.run_id, report)
