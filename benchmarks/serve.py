"""How `caseforge serve` copes with big runs (issue 12's targets).

Builds a store with one run of 100,000 case-trials (50,000 cases × 2 trials) and two runs of
10,000 cases × 1 trial, each with the digest `caseforge run` stores when a run finishes.
Then, once the server has started (its store opened), measures in-process through the ASGI
app (server time, no network):
  (a) the first page of the run screen of the 100,000-case-trial run (target < 300 ms);
  (b) one grid page of it, once the run is open (target < 100 ms);
  (c) a compare of the two 10,000-case runs (target < 1 s);
  (d) the peak RSS of the process serving them.
Each figure is printed with its ratio to the target (≤ 1.00 meets it).
Usage: python benchmarks/serve.py [--cases N] [--trials K] [--small N]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from caseforge.compare.digest import save_digest
from caseforge.report.build import build_report
from caseforge.results import CheckResult, CheckStatus, TrialRecord, TrialStatus
from caseforge.serve import Catalog, create_app
from caseforge.store.db import RunStore, utcnow


def make_run(store: RunStore, suite: Path, cases: int, trials: int, fail: float, seed: int) -> str:
    rng = random.Random(seed)
    run_id = store.create_run(
        suite="bench", suite_path=str(suite), group_id=f"g{seed}", dataset_commit=None,
        dataset_dirty=None, agent="bench:run", config_name=f"c{seed}", config={},
        trials=trials, split="all", caseforge_version="bench", options={},
    )  # fmt: skip
    ids = [f"case-{i:06d}" for i in range(cases)]
    snapshot = {
        "input": {"ticket": "退款 hoàn tiền"},
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
            response = {"output": {"category": check.actual}, "reply": "好的"}
            rows.append(record.to_row(run_id, utcnow(), json.dumps(response)))
            if len(rows) >= 20_000:
                store.write_results(rows)
                rows = []
    store.write_results(rows)
    store.set_status(run_id, "finished")
    return run_id


def timed(client: TestClient, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, (url, response.status_code, response.text[:300])
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=50_000)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--small", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        suite = root / "suite"
        (suite / "cases").mkdir(parents=True)
        (suite / "caseforge.yaml").write_text("name: bench\n", encoding="utf-8")
        url = f"sqlite:///{root / 'store.db'}"
        store = RunStore(url)
        started = time.perf_counter()
        big = make_run(store, suite, args.cases, args.trials, 0.2, 1)
        a = make_run(store, suite, args.small, 1, 0.1, 2)
        b = make_run(store, suite, args.small, 1, 0.2, 3)
        print(f"store built in {time.perf_counter() - started:.1f} s")
        # What the end of `caseforge run` does: build the report, store the run's digest.
        started = time.perf_counter()
        save_digest(store, build_report(store, big))
        at_end = time.perf_counter() - started
        for small in (a, b):
            save_digest(store, build_report(store, small))
        store.close()
        print(f"digest of the big run stored at its end in {at_end:.1f} s (once per run)")
        catalog = Catalog.open([suite], url)
        catalog.infos()  # start-up: the store is opened (and its migrations checked) once
        with TestClient(create_app(catalog), base_url="http://127.0.0.1") as client:  # start-up
            client.get("/static/app.css")
            figures = [
                ("run screen, first page", timed(client, f"/runs/{big}"), 0.3),
                ("grid page, run open", timed(client, f"/fragments/runs/{big}/grid?page=7"), 0.1),
                ("compare of two 10,000-case runs", timed(client, f"/compare?a={a}&b={b}"), 1.0),
            ]
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    total = args.cases * args.trials
    print(f"run of {total:,} case-trials; two of {args.small:,} × 1")
    print(f"{'figure':36} {'measured':>10} {'target':>8} {'ratio':>7}")
    for name, seconds, target in figures:
        print(
            f"{name:36} {seconds * 1000:>8.0f}ms {target * 1000:>6.0f}ms {seconds / target:>7.2f}"
        )
    print(f"{'peak RSS of the process':36} {peak_mb:>8.0f}MB")


if __name__ == "__main__":
    main()
