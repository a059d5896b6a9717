"""The same store tests on SQLite and on a real PostgreSQL server (tests/postgres.py): runs,
results, reports, resume, the unique key, and several writers at once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from caseforge.errors import EnvError
from caseforge.run.runner import Runner, RunOptions
from caseforge.run.trial import RetryPolicy
from caseforge.store.db import RunStore
from caseforge.store.schema import metadata
from tests.conftest import MakeToySuite, report_json

REPO = Path(__file__).resolve().parents[2]
FAST_RETRY = RetryPolicy(attempts=2, backoff_s=0.001)


def run(store: RunStore, **options: Any) -> Any:
    options.setdefault("retry", FAST_RETRY)
    return asyncio.run(Runner(RunOptions(**options), store).run())


def test_a_new_store_has_exactly_the_tables_of_the_code(store_url: str) -> None:
    store = RunStore(store_url)
    with store.engine.connect() as conn:
        assert list(compare_metadata(MigrationContext.configure(conn), metadata)) == []
    store.close()


def test_a_run_is_stored_reported_stopped_and_resumed(
    toy_suite: MakeToySuite, store_url: str
) -> None:
    store = RunStore(store_url)
    cases = [{"id": f"c{i}", "input": {"cost": 0.01, "want": "refund"}} for i in range(8)]
    root = toy_suite(cases, concurrency=1)
    stopped = run(store, suite_dir=root, max_cost=0.035, trials=1)
    run_id = stopped.runs[0].run_id
    assert stopped.status == "stopped" and store.count(run_id) == 3
    assert store.get_run(run_id).status == "stopped"
    resumed = run(store, suite_dir=root, resume=run_id, trials=1)
    assert resumed.runs[0].run_id == run_id and resumed.executed == 5
    assert store.count(run_id) == 8 and store.get_run(run_id).status == "finished"
    report = report_json(store, run_id)
    assert report["summary"]["pass_rate"] == 1.0
    assert [c["id"] for c in report["cases"]] == [f"c{i}" for i in range(8)]
    assert {r.id for r in store.list_runs()} == {run_id}
    store.close()


def test_a_case_trial_is_stored_once_by_the_key_not_by_luck(
    toy_suite: MakeToySuite, store_url: str
) -> None:
    store = RunStore(store_url)
    done = run(store, suite_dir=toy_suite([{"id": "a", "input": {}}]))
    [row] = list(store.results(done.runs[0].run_id))
    again = {k: v for k, v in row.items() if k in {c.name for c in metadata.tables["results"].c}}
    with pytest.raises(EnvError, match=r"cannot store 1 finished case-trial"):
        store.write_results([again])
    assert store.count(done.runs[0].run_id) == 1
    store.close()


def test_two_processes_write_into_one_store_at_once(tmp_path: Path, store_url: str) -> None:
    suites = []
    for name in ("alpha", "beta"):
        root = tmp_path / name
        (root / "cases").mkdir(parents=True)
        (root / "caseforge.yaml").write_text(
            f"name: {name}\nagent: {{callable: 'tests.run.toy_agent:run'}}\ntrials: 3\n"
            "concurrency: 8\ntimeout_s: 10\n"
        )
        with (root / "cases" / "bulk.jsonl").open("w") as f:
            for i in range(120):
                f.write(
                    f'{{"id": "{name}-{i:03d}", "input": {{"behaviour": "slow", "sleep": 0.002}},'
                    ' "expect": {"category": {"mode": "exact", "value": "refund"}}}\n'
                )
        suites.append(root)
    RunStore(store_url).close()  # created once, before the writers start
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "caseforge",
                "run",
                str(root),
                "--store",
                store_url,
                "-q",
                "--no-judge",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for root in suites
    ]
    for proc in procs:
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
    store = RunStore(store_url)
    runs = store.list_runs()
    assert sorted(r.suite for r in runs) == ["alpha", "beta"]
    for info in runs:
        keys = [(r["case_id"], r["trial"]) for r in store.results(info.id)]
        assert len(keys) == len(set(keys)) == 360, info.suite
        assert store.get_run(info.id).status == "finished"
    store.close()


def test_resume_from_another_checkout_of_the_suite(
    toy_suite: MakeToySuite, store_url: str, tmp_path: Path
) -> None:
    import shutil

    cases = [{"id": f"c{i}", "input": {"cost": 0.01}} for i in range(6)]
    root = toy_suite(cases, concurrency=1)
    store = RunStore(store_url)
    stopped = run(store, suite_dir=root, max_cost=0.025)
    run_id = stopped.runs[0].run_id
    assert stopped.status == "stopped" and store.count(run_id) == 2
    elsewhere = tmp_path / "another" / "checkout"
    shutil.copytree(root, elsewhere)
    shutil.rmtree(root)  # the first checkout is gone, as on another machine
    resumed = run(store, suite_dir=elsewhere, resume=run_id)
    assert resumed.runs[0].run_id == run_id and resumed.executed == 4
    assert store.count(run_id) == 6 and store.get_run(run_id).status == "finished"
    store.close()
