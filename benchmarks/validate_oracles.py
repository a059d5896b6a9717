"""The oracle phase of `caseforge validate`: in worker processes, and from the cache.

On a 115-case tau-bench-style suite, 50 of `validate`'s 54 seconds went to recomputing
the oracle (it replays each task's actions on a fresh database). This builds a suite of the
same shape: 115 cases, each with one oracle check whose oracle does `--work` seconds of
CPU work (a replay), and measures in one run:

  (a) the oracles called one after another in this process, as `validate` did before: the
      serial floor;
  (b) `validate --no-cache`: the oracles in min(cores, 4) worker processes; the ratio to
      the ideal (the serial floor divided by the workers);
  (c) `validate` of the unchanged suite: the oracle phase from the cache (target: under
      0.5 s), and the whole `validate` against the same suite with no oracle at all (its
      non-oracle time): the difference is what the oracle phase still costs.

Each `validate` runs in a fresh process, as a user runs it. Usage:
python benchmarks/validate_oracles.py [--cases 115] [--work 0.1] [--repeat 3]
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

from caseforge.oracle.pool import pool_size

ORACLES = """
import time
from caseforge.oracle import oracle

WORK_S = {work}


@oracle("replay")
def replay(input):
    end = time.process_time() + WORK_S  # CPU work, as a replay on a fresh database is
    total = 0
    while time.process_time() < end:
        total += 1
    return {{"refund": input["n"] * 3}}
"""


def make_suite(root: Path, cases: int, work: float, oracles: bool = True) -> Path:
    (root / "cases").mkdir(parents=True)
    config = {"name": "oracle-bench", "oracles": "oracles.py"} if oracles else {"name": "o"}
    (root / "caseforge.yaml").write_text(json.dumps(config), encoding="utf-8")
    (root / "oracles.py").write_text(ORACLES.format(work=work), encoding="utf-8")
    for i in range(cases):
        check = {"mode": "exact", "value": {"refund": i * 3}}
        if oracles:
            check["oracle"] = "replay"
        case = {"id": f"task-{i:03d}", "input": {"n": i}, "expect": {"state": check}}
        (root / "cases" / f"task-{i:03d}.yaml").write_text(json.dumps(case), encoding="utf-8")
    return root


def validate(suite: Path, *flags: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "caseforge", "validate", str(suite), "--json", *flags],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"validate failed: {done.stdout[-500:]}{done.stderr[-500:]}")
    return elapsed


def oracle_phase(suite: Path, cache: bool) -> float:
    """The oracle phase alone, timed inside validate_suite (in this process)."""
    from caseforge.case import validate as v

    spent: list[float] = []
    finish = v._OracleChecker.finish

    def timed(self: v._OracleChecker) -> None:
        started = time.perf_counter()
        finish(self)
        spent.append(time.perf_counter() - started)

    v._OracleChecker.finish = timed  # type: ignore[method-assign]
    try:
        report = v.validate_suite(suite, cache=cache)
    finally:
        v._OracleChecker.finish = finish  # type: ignore[method-assign]
    assert report.ok(), [p.format() for p in report.errors]
    return spent[0]


def serial_floor(suite: Path) -> float:
    """Every oracle called in this process, one after another: what validate did before."""
    from caseforge.case.load import load_suite
    from caseforge.oracle import load_oracles

    loaded = load_suite(suite)
    fns = load_oracles(suite / "oracles.py")
    started = time.perf_counter()
    for item in loaded.cases:
        for check in item.case.expect.values():
            fns[check.oracle](dict(item.case.input))  # type: ignore[union-attr]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=115)
    parser.add_argument("--work", type=float, default=0.1, help="CPU seconds per oracle call")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    workers = pool_size(args.cases)
    with tempfile.TemporaryDirectory() as tmp:
        suite = make_suite(Path(tmp) / "suite", args.cases, args.work)
        bare = make_suite(Path(tmp) / "bare", args.cases, args.work, oracles=False)
        serial, pooled, cached, whole_cached, whole_bare = [], [], [], [], []
        for _ in range(args.repeat):  # alternating, so a busy moment hits every measure
            serial.append(serial_floor(suite))
            pooled.append(oracle_phase(suite, cache=False))
            cached.append(oracle_phase(suite, cache=True))
            whole_cached.append(validate(suite))
            whole_bare.append(validate(bare))
    s, p, c = statistics.median(serial), statistics.median(pooled), statistics.median(cached)
    wc, wb = statistics.median(whole_cached), statistics.median(whole_bare)
    ideal = s / workers
    print(f"{args.cases} cases, one oracle check each, {args.work:g} CPU s per call; "
          f"{os.cpu_count()} cores, {workers} worker(s); median of {args.repeat}")  # fmt: skip
    print(f"(a) serial, in this process (before):  {s:7.2f} s")
    print(f"(b) worker processes (--no-cache):     {p:7.2f} s  = {p / ideal:.2f}x the ideal "
          f"{ideal:.2f} s (serial / workers), {s / p:.2f}x faster than (a)")  # fmt: skip
    print(f"(c) unchanged suite, from the cache:   {c:7.3f} s  (target < 0.5 s: "
          f"{'met' if c < 0.5 else 'NOT met'})")  # fmt: skip
    print(f"    whole validate, cached: {wc:.2f} s; the same suite without oracles: {wb:.2f} s; "
          f"the oracle phase adds {wc - wb:+.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
