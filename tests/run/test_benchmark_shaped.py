"""A fictional task in the shape of a public agent benchmark (tau-bench's retail domain): a
JSON database end state as an `outcome`, expected output strings as a normalised
`must_include`, and the writes as argument-level `must_call`, with no regex workaround and
no `output` from the agent. A faulty agent fails it for the right reasons."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
from tests.conftest import report_json

HERE = Path(__file__).parent
TASK = """\
id: retail-cancel-both-pending
input:
  user_id: mia_lin_41
  instruction: Cancel both of my pending orders, I no longer need them.
expect:
  orders:                      # the database's end state
    mode: outcome
    value: {"#W1001": cancelled, "#W1002": cancelled}
  reply:                       # 1,093.34 and "CAMERA" both satisfy these
    must_include: ["1151.34", camera]
    normalize: true
    case_sensitive: false
  tool_calls:
    must_call:
      - {name: get_user, args: {user_id: mia_lin_41}, count: 1}
      - {name: cancel_pending_order, args: {order_id: "#W1001", reason: no longer needed}, count: 1}
      - {name: cancel_pending_order, args: {order_id: "#W1002", reason: no longer needed}, count: 1}
    must_not_call: [modify_pending_order_items]
    max_calls: 3
source: imported
tags: [retail, cancel]
"""


def test_a_benchmark_shaped_task_passes_the_good_agent_and_fails_the_faulty_one(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "retail"
    (suite / "cases").mkdir(parents=True)
    shutil.copy(HERE / "retail" / "retail_agent.py", suite / "retail_agent.py")
    (suite / "caseforge.yaml").write_text(
        "name: retail\nagent: {callable: 'retail_agent:run'}\n"
        "workspace_setup: 'retail_agent:prepare'\noutcome_probe: 'retail_agent:probe'\n"
        "configs: {good: {variant: good}, faulty: {variant: faulty}}\ntrials: 1\n",
        encoding="utf-8",
    )
    (suite / "cases" / "retail-cancel-both-pending.yaml").write_text(TASK, encoding="utf-8")
    assert "regex" not in TASK
    store = RunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    options = RunOptions(suite_dir=suite, configs=["good", "faulty"])
    outcome = asyncio.run(Runner(options, store).run())
    verdicts = {}
    for handle in outcome.runs:
        report = report_json(store, handle.run_id)
        trial = report["cases"][0]["trials"][0]
        verdicts[report["config"]] = {c["name"]: c for c in trial["checks"]}
    assert {name: c["status"] for name, c in verdicts["good"].items()} == {
        "orders": "pass",
        "reply.must_include": "pass",
        "tool_calls": "pass",
    }
    faulty = verdicts["faulty"]
    assert faulty["orders"]["status"] == "fail"
    assert faulty["orders"]["reason"] == 'the run left: #W1002: expected "cancelled", got "pending"'
    assert faulty["reply.must_include"]["status"] == "fail"  # 1,093.34 is not 1151.34
    calls = faulty["tool_calls"]["reason"]
    assert 'closest: cancel_pending_order(order_id="#W1001", reason="ordered by mistake")' in calls
    assert 'reason expected "no longer needed", got "ordered by mistake"' in calls
    assert 'not called: cancel_pending_order(order_id="#W1002"' in calls
