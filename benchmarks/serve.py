"""How `caseforge serve` copes with big runs and big suites (issues 12 and 28).

Builds a store with two runs of 100,000 case-trials each (50,000 cases × 2 trials, as
`caseforge run` leaves them: results, case snapshot and digest), one run of 1,000 case-trials
(the peer of the trial screen), and a suite of 10,000 one-per-file YAML cases. Then, in a
fresh process (so its peak RSS is its own), once the server has started, measures in-process
through the ASGI app (server time, no network):
  (a) the run screen's first page of a 100,000-case-trial run (target < 300 ms);
  (b) one grid page of it, once the run is open (target < 100 ms);
  (c) a trial of it, by its key (target < 150 ms), beside a trial of the 1,000 case-trial run:
      their ratio says whether a trial costs the size of its run (1.0: it does not);
  (d) the compare of the two 100,000 case-trial runs (target < 1 s);
  (e) the suite screen's first page of the 10,000-case suite, nothing cached (target < 1 s),
      and how long its validation then takes in the background (the page's progress note),
      against `caseforge validate` of the same suite in a process of its own (the peer),
      both with nothing parsed or cached before (`.caseforge/` removed);
  (f) the peak RSS of the serving process (target < 500 MB with the suite's validation).
Each figure is printed as wall time and as the serving process's CPU time, each with its
ratio to its target (≤ 1.00 meets it). The machine's load average is printed beside them:
other processes on it slow the wall times, hardly the CPU times.
Usage: python benchmarks/serve.py [--cases N] [--trials K] [--suite N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def make_run(store: object, suite: Path, cases: int, trials: int, fail: float, seed: int) -> str:
    from caseforge.results import CheckResult, CheckStatus, TrialRecord, TrialStatus
    from caseforge.store.db import RunStore, utcnow

    assert isinstance(store, RunStore)
    rng = random.Random(seed)
    run_id = store.create_run(
        suite="bench", suite_path=str(suite), group_id=f"g{seed}", dataset_commit=None,
        dataset_dirty=None, agent="bench:run", config_name=f"c{seed}", config={},
        trials=trials, split="all", caseforge_version="bench", options={},
    )  # fmt: skip
    ids = [f"case-{i:06d}" for i in range(cases)]
    snapshot = {
        "input": {"ticket": "退款 hoàn tiền\nsecond line"},
        "expect": {"category": {"mode": "exact", "value": "refund"}},
        "tags": ["bench"],
    }
    store.save_cases(run_id, [(i, json.dumps({"id": i, **snapshot})) for i in ids])
    rows = []
    for case_id in ids:
        for trial in range(1, trials + 1):
            ok = rng.random() > fail
            check = CheckResult(
                "category", "exact", CheckStatus.PASS if ok else CheckStatus.FAIL,
                "refund", "refund" if ok else "other", "" if ok else "expected refund",
            )  # fmt: skip
            record = TrialRecord(
                case_id=case_id, trial=trial, status=TrialStatus.PASS if ok else TrialStatus.FAIL,
                checks=[check], latency_s=rng.random(), cost_usd=0.001,
            )  # fmt: skip
            response = {"output": {"category": check.actual}, "reply": "好的，已为您办理退款。"}
            rows.append(record.to_row(run_id, utcnow(), json.dumps(response)))
            if len(rows) >= 20_000:
                store.write_results(rows)
                rows = []
    store.write_results(rows)
    store.set_status(run_id, "finished")
    return run_id


def build(root: Path, cases: int, trials: int, suite_cases: int) -> dict[str, str]:
    from caseforge.compare.digest import save_digest
    from caseforge.report.build import build_report
    from caseforge.store.db import RunStore

    sys.path.insert(0, str(HERE))
    from validate_scale import generate, write_suite

    suite = root / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: bench\n", encoding="utf-8")
    big_suite = root / "big-suite"
    write_suite(big_suite, generate(suite_cases), as_yaml=True)
    url = f"sqlite:///{root / 'store.db'}"
    store = RunStore(url)
    started = time.perf_counter()
    runs = {
        "a": make_run(store, suite, cases, trials, 0.1, 1),
        "b": make_run(store, suite, cases, trials, 0.2, 2),
        "small": make_run(store, suite, 500, trials, 0.2, 3),
    }
    print(f"store built in {time.perf_counter() - started:.1f} s", flush=True)
    started = time.perf_counter()
    for run_id in runs.values():  # what the end of `caseforge run` does
        save_digest(store, build_report(store, run_id))
    print(f"digests stored in {time.perf_counter() - started:.1f} s (once per run)", flush=True)
    store.close()
    return {**runs, "url": url, "suite": str(suite), "big_suite": str(big_suite)}


CPU: dict[str, float] = {}  # figure -> CPU seconds of the serving process


def timed(client: object, url: str, name: str = "") -> tuple[float, object]:
    """The request's wall time; its CPU time (every thread of this process: the app's and
    the client's) is kept in CPU[name], which the machine's other load does not inflate."""
    cpu = time.process_time()
    started = time.perf_counter()
    response = client.get(url)  # type: ignore[attr-defined]
    elapsed = time.perf_counter() - started
    if name:
        CPU[name] = min(CPU.get(name, 1e9), time.process_time() - cpu)
    assert response.status_code == 200, (url, response.status_code, response.text[:300])
    return elapsed, response


def measure(setup: dict[str, str]) -> dict[str, float]:
    """In a process of its own: serve the store and the two suites, and time the screens."""
    from fastapi.testclient import TestClient

    from caseforge.serve import Catalog, create_app

    a, b, small = setup["a"], setup["b"], setup["small"]
    suites = [Path(setup["suite"]), Path(setup["big_suite"])]
    catalog = Catalog.open(suites, setup["url"], reviewer="bench")
    catalog.infos()  # start-up: the store is opened (and its migrations checked) once
    found: dict[str, float] = {}
    with TestClient(create_app(catalog), base_url="http://127.0.0.1") as client:  # start-up
        client.get("/static/app.css")
        found["run"] = timed(client, f"/runs/{b}", "run")[0]
        found["grid"] = timed(client, f"/fragments/runs/{b}/grid?page=7", "grid")[0]
        trial = f"/runs/{b}/cases/case-031415/trials/2"
        peer = f"/runs/{small}/cases/case-000314/trials/2"
        timed(client, f"/runs/{small}/cases/case-000001/trials/1")  # templates compiled
        found["trial"] = min(timed(client, trial, "trial")[0] for _ in range(3))
        found["trial_peer"] = min(timed(client, peer, "trial_peer")[0] for _ in range(3))
        found["compare"] = timed(client, f"/compare?a={a}&b={b}", "compare")[0]  # never opened
        found["suite"] = timed(client, "/suites/1", "suite")[0]
        started = time.perf_counter()
        while True:  # the page's progress note, polled every second as the browser does
            if "HX-Refresh" in client.get("/fragments/suites/1/validation").headers:
                break  # done: the browser reloads the page
            time.sleep(1.0)
        found["validation"] = time.perf_counter() - started + found["suite"]
        found["suite_ready"] = timed(client, "/suites/1?page=3", "suite_ready")[0]
    found["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {**found, **{f"cpu_{k}": v for k, v in CPU.items()}}


def cold(suite: str) -> None:
    """Forget what earlier commands parsed and cached of the suite (`.caseforge/`)."""
    shutil.rmtree(Path(suite) / ".caseforge", ignore_errors=True)


def validate_alone(suite: str) -> float:
    cold(suite)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "caseforge", "validate", suite, "--json"],
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=50_000)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--suite", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="Build into DIR once and reuse it.")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the child process's setup
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(json.loads(args.measure))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        done = root / "setup.json"
        if done.exists():
            setup = json.loads(done.read_text())
        else:
            root.mkdir(parents=True, exist_ok=True)
            setup = build(root, args.cases, args.trials, args.suite)
            done.write_text(json.dumps(setup))
        cold(setup["big_suite"])
        load = os.getloadavg()
        child = subprocess.run(
            [sys.executable, __file__, "--measure", json.dumps(setup)],
            capture_output=True,
            text=True,
            check=False,
        )
        if child.returncode:
            sys.exit(child.stderr[-3000:])
        found = json.loads(child.stdout.splitlines()[-1])
        alone = validate_alone(setup["big_suite"])
        after = os.getloadavg()
    total = args.cases * args.trials
    print(f"two runs of {total:,} case-trials; a suite of {args.suite:,} YAML cases")
    print(f"load average before / after: {load[0]:.2f} / {after[0]:.2f} (2 cores)")
    print(f"{'figure':44} {'wall':>8} {'CPU':>8} {'target':>8} {'ratio':>6} {'CPU':>6}")
    rows = [
        ("run screen, first page", "run", 0.3),
        ("grid page, run open", "grid", 0.1),
        ("trial of a 100k case-trial run", "trial", 0.15),
        ("compare of two 100k case-trial runs", "compare", 1.0),
        ("suite screen, first page, 10k cases, cold", "suite", 1.0),
        ("suite screen, a page once validated", "suite_ready", 1.0),
    ]
    for name, key, target in rows:
        wall, cpu = found[key], found[f"cpu_{key}"]
        print(
            f"{name:44} {wall * 1000:>6.0f}ms {cpu * 1000:>6.0f}ms {target * 1000:>6.0f}ms "
            f"{wall / target:>6.2f} {cpu / target:>6.2f}"
        )
    print(
        f"{'trial: 100k run vs 1k run (1.0: size-free)':44} "
        f"{found['trial'] * 1000:>5.0f} / {found['trial_peer'] * 1000:.0f} ms "
        f"{found['trial'] / found['trial_peer']:>7.2f} (CPU "
        f"{found['cpu_trial'] / found['cpu_trial_peer']:.2f})"
    )
    print(
        f"{'validation in the background vs validate':44} "
        f"{found['validation']:>5.1f} / {alone:.1f} s {found['validation'] / alone:>8.2f}"
    )
    print(f"{'peak RSS of the serving process':44} {found['rss_mb']:>8.0f}MB {500:>6}MB "
          f"{found['rss_mb'] / 500:>7.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
