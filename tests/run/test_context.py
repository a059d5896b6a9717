"""SUITE/context/ reaches every transport: the request's `context` and `ctx.context`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from caseforge.errors import CaseforgeError
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
from tests.conftest import report_json

CALLABLE = """
def run(input, ctx):
    return {"output": {"policy": ctx.context["policy.md"].strip(),
                       "tools": [t["name"] for t in ctx.context["tools.json"]]}}
"""
COMMAND = """
import json, sys
request = json.load(sys.stdin)
context = request["context"]
print(json.dumps({"output": {"policy": context["policy.md"].strip(),
                             "tools": [t["name"] for t in context["tools.json"]]}}))
"""


def _suite(root: Path, agent: str) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "context").mkdir()
    (root / "context" / "policy.md").write_text("退款需主管审批。\n", encoding="utf-8")
    (root / "context" / "tools.json").write_text('[{"name": "get_order"}, {"name": "refund"}]')
    (root / "agent_ctx.py").write_text(CALLABLE)
    (root / "agent_cmd.py").write_text(COMMAND)
    (root / "caseforge.yaml").write_text(f"name: ctx\nagent: {agent}\ntrials: 1\n")
    (root / "cases" / "c.yaml").write_text(
        "id: c\ninput: {}\nexpect:\n  policy: {mode: exact, value: 退款需主管审批。}\n"
        "  tools: {mode: exact, value: [get_order, refund]}\nsource: manual\n",
        encoding="utf-8",
    )
    return root


@pytest.mark.parametrize(
    "agent",
    ["{callable: 'agent_ctx:run'}", f"{{command: [{sys.executable}, agent_cmd.py]}}"],
)
def test_context_reaches_callables_and_commands(tmp_path: Path, agent: str) -> None:
    suite = _suite(tmp_path / "s", agent)
    store = RunStore(f"sqlite:///{tmp_path / 'r.db'}")
    outcome = asyncio.run(Runner(RunOptions(suite_dir=suite), store).run())
    report = report_json(store, outcome.runs[0].run_id)
    trial = report["cases"][0]["trials"][0]
    assert trial["status"] == "pass", trial


def test_a_context_file_that_does_not_parse_fails_before_any_run(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s", "{callable: 'agent_ctx:run'}")
    (suite / "context" / "tools.json").write_text('[{"name": ]')
    store = RunStore(f"sqlite:///{tmp_path / 'r.db'}")
    with pytest.raises(CaseforgeError, match=r"tools.json:1:\d+: invalid JSON"):
        asyncio.run(Runner(RunOptions(suite_dir=suite), store).run())
    assert store.list_runs() == []
