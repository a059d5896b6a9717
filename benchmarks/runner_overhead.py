"""How much the harness costs per case-trial, with the SQLite run store on.

Prints:
  (a) 10,000 cases × 3 trials against an async in-process agent that sleeps 20 ms, at
      concurrency 50: wall time and its ratio to the ideal N·k·20 ms / 50 = 12 s
      (target ≤ 1.15);
  (b) the same with an agent that returns at once: case-trials per second
      (target ≥ 5,000/s, i.e. ≤ 0.2 ms of harness work each) and peak RSS (≤ 300 MB);
  (c) the command transport (one process per case-trial): case-trials per second.
For scale: Inspect AI needs about 13 ms of harness CPU per sample on this kind of machine.

Each measurement runs `caseforge run` in-process in a fresh child process, so peak RSS is
its own; wall time covers the whole invocation (loading the suite, the run, the store).
Usage: python benchmarks/runner_overhead.py [--cases N] [--trials K] [--command-cases N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = """
import asyncio

async def sleepy(input, ctx):
    await asyncio.sleep(0.02)
    return {"output": {"category": "refund", "flags": ["a"]}, "reply": "ok 42",
            "usage": {"cost_usd": 0.0001}}

async def instant(input, ctx):
    return {"output": {"category": "refund", "flags": ["a"]}, "reply": "ok 42",
            "usage": {"cost_usd": 0.0001}}

def command():
    import json, sys
    json.load(sys.stdin)
    print(json.dumps({"output": {"category": "refund", "flags": ["a"]}, "reply": "ok 42"}))

if __name__ == "__main__":
    command()
"""

CHILD = """
import asyncio, json, sys, time, resource
from pathlib import Path
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
suite, agent, trials, concurrency, url = sys.argv[1:6]
store = RunStore(url)
start = time.perf_counter()
outcome = asyncio.run(Runner(RunOptions(suite_dir=Path(suite), agent=agent, trials=int(trials),
                                         concurrency=int(concurrency)), store).run())
wall = time.perf_counter() - start
stored = store.count(outcome.runs[0].run_id)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": wall, "stored": stored, "rss_mb": rss, "status": outcome.status}))
"""


def make_suite(root: Path, n: int) -> None:
    (root / "cases").mkdir(parents=True)
    (root / "caseforge.yaml").write_text("name: overhead\ntimeout_s: 30\n")
    (root / "bench_overhead_agent.py").write_text(AGENT)
    with (root / "cases" / "bulk.jsonl").open("w") as f:
        for i in range(n):
            case = {
                "id": f"case-{i:05d}",
                "input": {"ticket": f"ticket number {i}", "customer_id": f"C{i % 30:03d}"},
                "expect": {
                    "category": {"mode": "exact", "value": "refund"},
                    "flags": {"mode": "exact_set", "values": ["a"]},
                    "reply": {"must_include": ["42"], "must_not_include": ["全额"]},
                    "tool_calls": {"must_not_call": ["create_refund_request"]},
                },
                "split": "dev",
            }
            f.write(json.dumps(case) + "\n")


def measure(suite: Path, agent: str, trials: int, concurrency: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/store.db"
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(suite), agent, str(trials), str(concurrency), url],
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp,
            env={**os.environ, "PYTHONPATH": str(suite)},
        )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def bare_asyncio(n_trials: int, concurrency: int) -> float:
    """The same sleeps with no harness at all: the floor the event loop itself sets."""
    import asyncio

    async def go() -> float:
        per_worker = n_trials // concurrency

        async def worker() -> None:
            for _ in range(per_worker):
                await asyncio.sleep(0.02)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - start

    return asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--command-cases", type=int, default=200)
    args = parser.parse_args()
    n, k = args.cases, args.trials
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite"
        make_suite(suite, n)

        ideal = n * k * 0.02 / 50
        a = measure(suite, "bench_overhead_agent:sleepy", k, 50)
        bare = bare_asyncio(n * k, 50)
        print(
            f"(a) {n} cases × {k} trials, agent sleeps 20 ms, concurrency 50: {a['wall']:.2f} s "
            f"vs ideal {ideal:.2f} s → ratio {a['wall'] / ideal:.3f} (target ≤ 1.15); "
            f"bare asyncio sleeps alone: {bare:.2f} s ({bare / ideal:.3f}); "
            f"{int(a['stored'])} stored, peak RSS {a['rss_mb']:.0f} MB"
        )
        b = measure(suite, "bench_overhead_agent:instant", k, 50)
        rate = n * k / b["wall"]
        print(
            f"(b) same, agent returns at once: {b['wall']:.2f} s → {rate:,.0f} case-trials/s "
            f"({1000 / rate:.3f} ms each; target ≥ 5,000/s, ≤ 0.2 ms); "
            f"peak RSS {b['rss_mb']:.0f} MB (target ≤ 300 MB); Inspect AI ≈ 13 ms/sample "
            f"→ {13 / (1000 / rate):.0f}× less harness time per case-trial"
        )

        small = Path(tmp) / "small"
        make_suite(small, args.command_cases)
        command = f"cmd:{sys.executable} {small / 'bench_overhead_agent.py'}"
        start = time.perf_counter()
        c = measure(small, command, 1, 8)
        rate_c = args.command_cases / c["wall"]
        print(
            f"(c) command transport, {args.command_cases} case-trials at concurrency 8: "
            f"{c['wall']:.2f} s → {rate_c:,.0f} case-trials/s "
            f"(one Python process each; measured in {time.perf_counter() - start:.1f} s)"
        )


if __name__ == "__main__":
    main()
