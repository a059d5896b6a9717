"""How long `caseforge run` takes to stop after SIGTERM, at each phase (target: 1 s).

Each phase starts a real run in a process of its own, as a script in CI does, waits for the
agent's marker file (the phase has begun), sends SIGTERM, and times the process's exit:

  import     the agent's module takes for ever to import (before any run is recorded)
  running    a sync agent sleeping 0.5 s per call, 40 trials (threads are abandoned)
  blocked    an `async def` agent that never awaits, holding the event loop
  ten-million  1,000 cases x 10,000 trials: planning must not stand in the way

It prints each phase's latency (median of --repeat), its exit code and the run's stored
status. Usage: python benchmarks/stop_latency.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from caseforge.store.db import RunStore

REPO = Path(__file__).resolve().parents[1]
AGENTS = {
    "import": """
        import pathlib, time
        pathlib.Path(__file__).with_name("started").touch()
        time.sleep(900)
        def run(input, ctx):
            return {"output": {"x": 1}}
    """,
    "running": """
        import pathlib, time
        def run(input, ctx):
            pathlib.Path(__file__).with_name("started").touch()
            time.sleep(0.5)
            return {"output": {"x": 1}}
    """,
    "blocked": """
        import pathlib, time
        async def run(input, ctx):
            pathlib.Path(__file__).with_name("started").touch()
            time.sleep(900)
            return {"output": {"x": 1}}
    """,
}
AGENTS["ten-million"] = AGENTS["running"]


def suite(root: Path, phase: str) -> tuple[Path, list[str]]:
    cases = 1000 if phase == "ten-million" else 4
    (root / "cases").mkdir(parents=True)
    config = {"name": "stop", "agent": {"callable": "agent:run"}, "timeout_s": 900}
    (root / "caseforge.yaml").write_text(json.dumps(config), encoding="utf-8")
    rows = [
        json.dumps({"id": f"c{i}", "input": {}, "expect": {"x": {"mode": "exact", "value": 1}}})
        for i in range(cases)
    ]
    (root / "cases" / "all.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (root / "agent.py").write_text(textwrap.dedent(AGENTS[phase]), encoding="utf-8")
    trials = {"ten-million": "10000", "running": "40"}.get(phase, "1")
    return root, ["--trials", trials, "--concurrency", "2"]


def once(phase: str) -> tuple[float, int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        root, flags = suite(Path(tmp) / "suite", phase)
        url = f"sqlite:///{Path(tmp) / 'store.db'}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "caseforge", "run", str(root), "-q", "--store", url, *flags],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while not (root / "started").exists():
            if proc.poll() is not None:
                raise SystemExit(f"{phase}: the run ended before its agent started")
            time.sleep(0.005)
        sent = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=300)
        took = time.perf_counter() - sent
        runs = RunStore(url).list_runs()
        return took, code, runs[0].status if runs else "(none recorded)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"SIGTERM to exit, median of {args.repeat} (target: 1 s)")
    for phase in AGENTS:
        results = [once(phase) for _ in range(args.repeat)]
        took = statistics.median(r[0] for r in results)
        codes = sorted({r[1] for r in results})
        statuses = sorted({r[2] for r in results})
        verdict = "met" if took <= 1.0 else "NOT met"
        print(f"  {phase:12} {took:6.3f} s ({took:.2f}x the target, {verdict}); exit "
              f"{'/'.join(map(str, codes))}; run {'/'.join(statuses)}")  # fmt: skip


if __name__ == "__main__":
    main()
