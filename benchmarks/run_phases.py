"""Where one `caseforge run` spends its time: the phases of benchmarks/vs_inspect.py's run.

Makes the same suite as vs_inspect.py (N one-file YAML cases, an instant in-process agent,
one `must_include` check each), then runs `caseforge run SUITE --quiet --no-judge --store
sqlite:///…` in a fresh process with timers wrapped around the functions of each phase:
importing the command, loading the cases (parsing and validating apart), recording the
run, the run itself (grading and storing apart), building the report and the digest. The
garbage collector's time is counted too, against the innermost phase it fell in. A phase's
time includes the phases listed under it. Figures are of one run; repeat it (--repeat) and
read the spread, the machine is shared.

The timers wrap caseforge's internal functions by name: when one is renamed, this script
fails with an AttributeError naming it, and needs the new name.

Usage: python benchmarks/run_phases.py [--cases N] [--repeat R]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vs_inspect import make_caseforge_suite

DRIVER = """
import time
T0 = time.perf_counter()
import atexit, collections, functools, gc, sys, threading

spent, calls = collections.defaultdict(float), collections.Counter()
order = []
stack = ["(between phases)"]
collected, collections_in = collections.defaultdict(float), collections.Counter()
gc_started = [0.0]


def on_gc(phase, info):
    if phase == "start":
        gc_started[0] = time.perf_counter()
    else:
        collected[stack[-1]] += time.perf_counter() - gc_started[0]
        collections_in[stack[-1]] += 1


gc.callbacks.append(on_gc)


def timed(owner, name, label, is_async=False):
    fn = getattr(owner, name)
    order.append(label)
    if is_async:
        @functools.wraps(fn)
        async def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - start
                calls[label] += 1
    else:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            mine = threading.current_thread() is threading.main_thread()
            if mine:
                stack.append(label)
            try:
                return fn(*args, **kwargs)
            finally:
                if mine:
                    stack.pop()
                spent[label] += time.perf_counter() - start
                calls[label] += 1
    setattr(owner, name, wrapper)


import caseforge.cli as cli
import caseforge.cli.command as command

cli_imported = time.perf_counter() - T0
load = command.LazyCommand.load


def load_and_wrap(self):
    start = time.perf_counter()
    stack.append("importing the run command")
    try:
        loaded = load(self)
    finally:
        stack.pop()
    spent["importing the run command"] += time.perf_counter() - start
    wrap_the_run()
    return loaded


command.LazyCommand.load = load_and_wrap


def wrap_the_run():
    import caseforge.case.load as cases
    import caseforge.api.run as api_run
    import caseforge.run.runner as runner
    import caseforge.run.session as session
    import caseforge.run.trial as trial
    import caseforge.store.db as db

    timed(db.RunStore, "__init__", "opening the store (a new file: migrated)")
    timed(runner.Runner, "_new_plan", "planning")
    timed(runner, "load_suite", "  loading the suite")
    timed(cases, "read_yaml", "    reading and parsing the YAML files")
    timed(cases, "parse_model", "    validating the cases (pydantic)")
    timed(runner.Runner, "_resolve_agent", "  importing the agent")
    timed(runner, "dataset_state", "  the dataset's git state")
    timed(db.RunStore, "create_run", "  recording the run (store.create_run)")
    timed(runner.Runner, "_open", "opening the session")
    timed(session.RunSession, "drive", "the run (session.drive)", is_async=True)
    timed(trial.TrialRunner, "__call__", "  case-trials, summed over concurrent ones", True)
    timed(session, "grade_outcome", "  grading")
    timed(session, "store_row", "  rows for the store")
    timed(db.RunStore, "write_results", "  writing rows (on a thread)")
    timed(session.RunSession, "close", "closing the session", is_async=True)
    timed(api_run, "build_report", "building the report (--quiet too)")
    timed(api_run, "save_digest", "saving the digest")
    timed(db.RunStore, "close", "closing the store")


def report():
    total = time.perf_counter() - T0
    print(f"{cli_imported:7.3f} s  caseforge.cli imported (after Python's own start)")
    for label in ["importing the run command", *order]:
        if calls[label] or label in spent:
            times = f" x{calls[label]:,}" if calls[label] > 1 else ""
            print(f"{spent[label]:7.3f} s  {label}{times}")
    print(f"{total:7.3f} s  in all, to exit")
    print("garbage collection, by the phase it fell in:")
    for label, seconds in sorted(collected.items(), key=lambda item: -item[1]):
        print(f"{seconds:7.3f} s  {label.strip()} ({collections_in[label]} collections)")
    print(f"{sum(collected.values()):7.3f} s  in all")


atexit.register(report)
sys.argv = ["caseforge", *sys.argv[1:]]
cli.main()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite"
        make_caseforge_suite(suite, args.cases)
        for i in range(args.repeat):
            store = Path(tmp) / f"store-{i}.db"
            argv = ["run", str(suite), "--quiet", "--no-judge", "--store", f"sqlite:///{store}"]
            print(f"-- {args.cases:,} cases, run {i + 1} of {args.repeat}", flush=True)
            subprocess.run(
                [sys.executable, "-c", DRIVER, *argv],
                cwd=tmp,
                check=True,
                stderr=subprocess.DEVNULL,  # the run's own lines: not what is measured
                stdout=None,
            )


if __name__ == "__main__":
    main()
