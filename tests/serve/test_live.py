"""A run in progress, watched in the browser: the runs list and the run screen update while
`caseforge run` works in another process, and the run screen reloads when it ends."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from caseforge.serve import Catalog
from caseforge.store.db import RunStore
from tests.serve.conftest import REPO, Served, start_server
from tests.serve.test_browser_daily import _sideways

AGENT = """import json, sys, time
request = json.load(sys.stdin)
time.sleep(0.4)
n = request["input"]["n"]
print(json.dumps({"output": {"category": "a" if n % 3 else "b"}}))
"""


def _slow_suite(root: Path, cases: int) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    (root / "caseforge.yaml").write_text(
        "name: live\nagent: {command: [python, agent.py]}\ntrials: 1\nconcurrency: 1\n"
        "timeout_s: 30\n",
        encoding="utf-8",
    )
    for n in range(1, cases + 1):
        (root / "cases" / f"c{n:02d}.yaml").write_text(
            f"id: c{n:02d}\ninput: {{n: {n}}}\nexpect:\n  category: {{mode: exact, value: a}}\n"
            "source: manual\n",
            encoding="utf-8",
        )
    return root


def test_a_running_run_updates_live_and_reloads_when_it_ends(
    page: Any, world: Served, tmp_path: Path
) -> None:
    suite = _slow_suite(tmp_path / "live", cases=14)
    url = f"sqlite:///{tmp_path / 'live.db'}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "caseforge", "run", str(suite), "--store", url, "-q"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        run_id = None
        while time.monotonic() < deadline and run_id is None:
            time.sleep(0.2)
            if (tmp_path / "live.db").exists():
                store = RunStore(url, create=False)
                found = store.list_runs()
                if found and store.count(found[0].id) >= 2:
                    run_id = found[0].id
                store.close()
        assert run_id, "the run did not start"
        address, server = start_server(Catalog.open([suite], url, reviewer="x"))
        page.goto(address + "/")
        row = page.locator("#runs-table tr.run.running")
        expect(row).to_contain_text("done")
        page.screenshot(path=str(world.artifacts / "runs-live.png"), full_page=True)
        page.goto(address + f"/runs/{run_id}")
        done = page.locator("#live [data-live=done]")
        first = done.inner_text()
        assert first.endswith("of 14")
        stored = page.inner_text("#summary")
        expect(done).not_to_have_text(first, timeout=10_000)  # polled: it moved on
        expect(page.locator("#summary")).not_to_have_text(stored)  # and so did the summary
        page.screenshot(path=str(world.artifacts / "run-live.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})  # a phone's width, live too
        assert _sideways(page) <= 0, "the running run's screen scrolls sideways at 390 px"
        page.set_viewport_size({"width": 1360, "height": 900})
        assert proc.wait(timeout=60) in (0, 1), proc.stderr.read() if proc.stderr else ""
        expect(page.locator("#live")).to_have_count(0, timeout=10_000)  # reloaded, finished
        assert "14 × 1 = 14" in page.inner_text("table.kv")
        page.goto(address + "/")
        expect(page.locator("#runs-table tr.run.finished")).to_have_count(1)
        server.should_exit = True  # type: ignore[attr-defined]
    finally:
        if proc.poll() is None:
            proc.kill()
