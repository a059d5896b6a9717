"""How much the harness costs per case-trial, with the SQLite run store on.

Prints, each figure the median of --repeat runs (default 5), each run in a fresh process:
  (a) 10,000 cases × 3 trials against an async in-process agent that sleeps 20 ms, at
      concurrency 50: the run's wall time and its ratio to the ideal N·k·20 ms / 50 = 12 s
      (target ≤ 1.05), beside the same sleeps on a bare event loop with no harness, in the
      same way (fresh processes, median), which is the floor the loop itself sets; and by
      how much a 20 ms sleep overran on each (mean and p99), which is where the time goes;
  (b) the same with an agent that returns at once: case-trials per second and harness time
      per case-trial (targets ≥ 10,000/s and ≤ 0.1 ms) and peak RSS (≤ 300 MB);
  (c) the command transport (one process per case-trial): case-trials per second;
  (d) multi-turn cases, a scripted user of 3 messages each, the agent sleeping 20 ms per
      turn, concurrency 50: the run's ratio to the ideal N·k·3·20 ms / 50 (target ≤ 1.15).
"The run" starts when the plan is made (suite loaded and validated, runs recorded) and ends
when every result is stored; the whole invocation, loading included, is printed beside it.

--otel-overhead measures instead what the `otel` extra costs when it is installed and not
configured (no OTEL_EXPORTER_OTLP_ENDPOINT): (a) and (b), each run --repeat times with the
extra and as many times without it (its import blocked in the child, as if not installed),
alternating, so a busy machine weighs on both alike; target: within 3 % of without.
For scale: Inspect AI needs about 13 ms of harness CPU per sample on this kind of machine.

Usage: python benchmarks/runner_overhead.py [--cases N] [--trials K] [--repeat R]
                                           [--command-cases N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = """
import asyncio, time

LATE = []  # how much longer than 20 ms each sleep took: the loop was busy, or its timer late

async def sleepy(input, ctx):
    start = time.perf_counter()
    await asyncio.sleep(0.02)
    LATE.append(time.perf_counter() - start - 0.02)
    return {"output": {"category": "refund", "flags": ["a"]}, "reply": "ok 42",
            "usage": {"cost_usd": 0.0001}}

async def sleepy_turn(input, ctx):
    await asyncio.sleep(0.02)
    return {"output": {"category": "refund"}, "reply": f"turn {ctx.turn} ok 42",
            "usage": {"cost_usd": 0.0001}, "done": False}

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
import os, sys
if os.environ.get("CASEFORGE_BENCH_NO_OTEL"):  # as if the otel extra were not installed
    class _NoOtel:
        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None
    sys.meta_path.insert(0, _NoOtel())
import asyncio, json, time, resource
from pathlib import Path
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
suite, agent, trials, concurrency, url = sys.argv[1:6]
store = RunStore(url)
marks = {}
def started(handles, progress):
    marks["run"] = time.perf_counter()
start = time.perf_counter()
options = RunOptions(suite_dir=Path(suite), agent=agent, trials=int(trials),
                     concurrency=int(concurrency))
outcome = asyncio.run(Runner(options, store, on_start=started).run())
end = time.perf_counter()
stored = store.count(outcome.runs[0].run_id)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
agent_module = sys.modules.get("bench_overhead_agent")  # absent for the command transport
late = sorted(getattr(agent_module, "LATE", [])) or [0.0]
print(json.dumps({"wall": end - start, "run": end - marks["run"], "stored": stored,
                  "rss_mb": rss, "status": outcome.status,
                  "late_ms": 1000 * sum(late) / len(late),
                  "late_p99_ms": 1000 * late[int(0.99 * (len(late) - 1))]}))
"""

BARE = """
import asyncio, json, sys, time
n_trials, concurrency = int(sys.argv[1]), int(sys.argv[2])
late = []
async def go():
    per_worker = n_trials // concurrency
    async def worker():
        for _ in range(per_worker):
            start = time.perf_counter()
            await asyncio.sleep(0.02)
            late.append(time.perf_counter() - start - 0.02)
    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start
wall = asyncio.run(go())
late.sort()
print(json.dumps({"wall": wall, "late_ms": 1000 * sum(late) / len(late),
                  "late_p99_ms": 1000 * late[int(0.99 * (len(late) - 1))]}))
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


def make_talk_suite(root: Path, n: int) -> None:
    """``n`` cases whose scripted user says three things: three agent turns each."""
    (root / "cases").mkdir(parents=True)
    (root / "caseforge.yaml").write_text("name: overhead-talk\ntimeout_s: 30\n")
    (root / "bench_overhead_agent.py").write_text(AGENT)
    with (root / "cases" / "bulk.jsonl").open("w") as f:
        for i in range(n):
            says = [{"say": f"message {t} of ticket {i}"} for t in range(1, 4)]
            case = {
                "id": f"talk-{i:05d}",
                "input": {"customer_id": f"C{i % 30:03d}"},
                "conversation": {"max_turns": 3, "script": says},
                "expect": {
                    "category": {"mode": "exact", "value": "refund"},
                    "reply": {"must_include": ["42"]},
                    "turn_count": {"mode": "number", "value": 3},
                },
                "split": "dev",
            }
            f.write(json.dumps(case) + "\n")


def _child(code: str, *argv: str, cwd: str, env: dict[str, str] | None = None) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


OTEL_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def measure(
    suite: Path, agent: str, trials: int, concurrency: int, otel: bool = True
) -> dict[str, float]:
    """One `caseforge run` in a fresh process, with its own store (``otel``: the extra
    importable; never configured)."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/store.db"
        paths = [str(suite), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {k: v for k, v in os.environ.items() if k not in OTEL_VARIABLES}
        env["PYTHONPATH"] = os.pathsep.join(paths)
        if not otel:
            env["CASEFORGE_BENCH_NO_OTEL"] = "1"
        argv = (str(suite), agent, str(trials), str(concurrency), url)
        return _child(CHILD, *argv, cwd=tmp, env=env)


def bare_asyncio(n_trials: int, concurrency: int) -> dict[str, float]:
    """The same sleeps with no harness at all, in a fresh process: the loop's own floor."""
    with tempfile.TemporaryDirectory() as tmp:
        return _child(BARE, str(n_trials), str(concurrency), cwd=tmp)


def median_of(repeat: int, measure_once: object) -> dict[str, float]:
    """Each key's median over ``repeat`` fresh-process measurements."""
    assert callable(measure_once)
    runs = [measure_once() for _ in range(repeat)]
    if any(run.get("status") != "finished" for run in runs):
        raise SystemExit(f"a measured run did not finish: {runs}")
    numbers = [key for key, value in runs[0].items() if isinstance(value, int | float)]
    return {key: statistics.median(run[key] for run in runs) for key in numbers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5, help="fresh-process runs per figure")
    parser.add_argument("--command-cases", type=int, default=200)
    parser.add_argument("--talk-cases", type=int, default=2_000)
    parser.add_argument("--otel-overhead", action="store_true", help=__doc__.split("--")[-1])
    args = parser.parse_args()
    n, k, r = args.cases, args.trials, args.repeat
    if args.otel_overhead:
        otel_overhead(n, k, r)
        return
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite"
        make_suite(suite, n)

        ideal = n * k * 0.02 / 50
        floor = median_of(r, lambda: {**bare_asyncio(n * k, 50), "status": "finished"})
        bare = floor["wall"]
        a = median_of(r, lambda: measure(suite, "bench_overhead_agent:sleepy", k, 50))
        print(
            f"(a) {n} cases × {k} trials, agent sleeps 20 ms, concurrency 50, median of {r}: "
            f"the run {a['run']:.2f} s vs ideal {ideal:.2f} s → ratio {a['run'] / ideal:.3f} "
            f"(target ≤ 1.05); bare asyncio sleeps alone {bare:.2f} s → {bare / ideal:.3f}; "
            f"harness beyond the bare loop {a['run'] / bare:.3f}×; whole invocation "
            f"{a['wall']:.2f} s; {int(a['stored'])} stored, peak RSS {a['rss_mb']:.0f} MB; "
            f"a 20 ms sleep overran by {a['late_ms']:.2f} ms on average (p99 "
            f"{a['late_p99_ms']:.1f} ms) against the bare loop's {floor['late_ms']:.2f} ms "
            f"(p99 {floor['late_p99_ms']:.1f} ms)"
        )
        b = median_of(r, lambda: measure(suite, "bench_overhead_agent:instant", k, 50))
        rate = n * k / b["run"]
        print(
            f"(b) same, agent returns at once, median of {r}: the run {b['run']:.2f} s → "
            f"{rate:,.0f} case-trials/s, {1000 / rate:.3f} ms each (targets ≥ 10,000/s, "
            f"≤ 0.1 ms: ratio {rate / 10_000:.2f} of the target rate); whole invocation "
            f"{b['wall']:.2f} s ({n * k / b['wall']:,.0f}/s with loading); peak RSS "
            f"{b['rss_mb']:.0f} MB (target ≤ 300 MB); Inspect AI ≈ 13 ms/sample → "
            f"{13 / (1000 / rate):.0f}× less harness time per case-trial"
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

        talk = Path(tmp) / "talk"
        m = args.talk_cases
        make_talk_suite(talk, m)
        ideal_talk = m * k * 3 * 0.02 / 50
        d = median_of(r, lambda: measure(talk, "bench_overhead_agent:sleepy_turn", k, 50))
        print(
            f"(d) {m} multi-turn cases × {k} trials, 3 turns each, 20 ms a turn, concurrency "
            f"50, median of {r}: the run {d['run']:.2f} s vs ideal {ideal_talk:.2f} s → ratio "
            f"{d['run'] / ideal_talk:.3f} (target ≤ 1.15); {int(d['stored'])} stored"
        )


def otel_overhead(n: int, k: int, r: int) -> None:
    """(a) and (b) with the otel extra and without it, alternating, medians compared."""
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite"
        make_suite(suite, n)
        workloads = (("(a) sleeping 20 ms", "sleepy"), ("(b) returning at once", "instant"))
        for label, agent in workloads:
            runs: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(r):
                for otel in (False, True):
                    found = measure(suite, f"bench_overhead_agent:{agent}", k, 50, otel)
                    if found.get("status") != "finished":
                        raise SystemExit(f"a measured run did not finish: {found}")
                    runs[otel].append(found["run"])
            without, with_ = statistics.median(runs[False]), statistics.median(runs[True])
            print(
                f"{label}, {n} cases × {k} trials, median of {r} each: with the otel extra "
                f"(not configured) {with_:.2f} s, without {without:.2f} s → ratio "
                f"{with_ / without:.3f} (target ≤ 1.03); runs with {sorted(runs[True])}, "
                f"without {sorted(runs[False])}"
            )
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; after: "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))  # fmt: skip


if __name__ == "__main__":
    main()
