"""`--shard I/N --run-id ID`: N processes fill one run in a shared store, each case-trial
exactly once; the shard ledger says when the run is finished; a shard that disagrees with
the run is refused, and a stopped shard resumes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from caseforge.errors import UsageError
from caseforge.run.plan import Shard
from caseforge.run.runner import RunOptions
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite, report_json
from tests.helpers import caseforge_process as caseforge

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def test_shards_partition_the_case_trials_stably() -> None:
    keys = [(f"case-{i}", t) for i in range(300) for t in range(1, 4)]
    owners = [[s for s in range(1, 4) if Shard(s, 3).holds(c, t)] for c, t in keys]
    assert all(len(found) == 1 for found in owners)  # each in exactly one shard
    sizes = [sum(1 for found in owners if found == [s]) for s in range(1, 4)]
    assert min(sizes) > 250  # and shared out evenly (900 / 3 = 300 each)
    assert Shard.parse(" 2/3 ") == Shard(2, 3)
    for bad, says in (("0/3", "from 1 to N"), ("4/3", "from 1 to N"), ("2", "I/N")):
        with pytest.raises(UsageError, match=says):
            Shard.parse(bad)


def test_a_shard_needs_the_run_id_every_shard_names() -> None:
    with pytest.raises(UsageError, match="--shard 1/2 needs --run-id"):
        RunOptions(shard=Shard(1, 2))
    with pytest.raises(UsageError, match="--run-id 'a b'"):
        RunOptions(shard=Shard(1, 2), run_id="a b")
    RunOptions(shard=Shard(1, 1))  # one shard of one is the whole run


def test_two_shards_at_once_fill_one_run_exactly_once(
    toy_suite: MakeToySuite, store_url: str
) -> None:
    cases = [{"id": f"c{i:02d}", "input": {"behaviour": "slow", "sleep": 0.01}} for i in range(30)]
    root = toy_suite(cases, trials=2)
    RunStore(store_url).close()
    argv = ["run", str(root), "--store", store_url, "--run-id", "ci-1234", "-q"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "caseforge", *argv, "--shard", f"{i}/2"],
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in (1, 2)
    ]
    for proc in procs:
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
    store = RunStore(store_url)
    assert [r.id for r in store.list_runs()] == ["ci-1234"]
    keys = [(r["case_id"], r["trial"]) for r in store.results("ci-1234")]
    assert len(keys) == len(set(keys)) == 60
    assert store.get_run("ci-1234").status == "finished"
    ledger = store.shards("ci-1234")
    assert [(row["shard"], row["shards"], row["status"]) for row in ledger] == [
        (1, 2, "finished"),
        (2, 2, "finished"),
    ]
    assert report_json(store, "ci-1234")["summary"]["case_trials"] == 60
    store.close()


def test_the_run_is_finished_only_when_every_shard_is(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    root = toy_suite([{"id": f"c{i}", "input": {}} for i in range(10)])
    url = f"sqlite:///{tmp_path / 's.db'}"
    first = caseforge("run", str(root), "--store", url, "--run-id", "g7", "--shard", "1/3")
    assert first.returncode == 0, first.stderr
    assert "1 of 3 shard(s) finished, the run is running" in first.stdout
    store = RunStore(url)
    assert store.get_run("g7").status == "running"
    mine = sum(1 for i in range(10) if Shard(1, 3).holds(f"c{i}", 1))
    assert store.count("g7") == mine
    for index in (2, 3):
        done = caseforge("run", str(root), "--store", url, "--run-id", "g7", "--shard",
                         f"{index}/3")  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert store.get_run("g7").status == "finished" and store.count("g7") == 10
    assert "3 of 3 shard(s) finished, the run is finished" in done.stdout


def test_a_shard_that_runs_something_else_is_refused(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    root = toy_suite([{"id": f"c{i}", "input": {}} for i in range(4)])
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert caseforge("run", str(root), "--store", url, "--run-id", "r1", "--shard",
                     "1/2").returncode == 0  # fmt: skip
    other = caseforge("run", str(root), "--store", url, "--run-id", "r1", "--shard", "2/2",
                      "--trials", "3")  # fmt: skip
    assert other.returncode == 2
    assert "--run-id r1: that run has a different trials (stored 1, here 3)" in other.stderr
    again = caseforge("run", str(root), "--store", url, "--run-id", "r1")
    assert again.returncode == 2 and "finish it with --resume r1" in again.stderr


def test_a_matrix_derives_each_configurations_run_from_the_group_id(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    root = toy_suite(
        [{"id": f"c{i}", "input": {}} for i in range(6)],
        configs={"a": {}, "b": {"fail": ["c1"]}},
    )
    url = f"sqlite:///{tmp_path / 's.db'}"
    for index in (1, 2):
        done = caseforge("run", str(root), "--store", url, "--run-id", "m1", "--shard",
                         f"{index}/2", "--config", "a", "--config", "b")  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
    store = RunStore(url)
    assert sorted(r.id for r in store.list_runs()) == ["m1", "m1-2"]
    for run_id in ("m1", "m1-2"):
        assert store.count(run_id) == 6 and store.get_run(run_id).status == "finished"
    assert store.get_run("m1-2").config_name == "b"


def test_a_stopped_shard_resumes_as_that_shard(toy_suite: MakeToySuite, tmp_path: Path) -> None:
    cases = [{"id": f"c{i:02d}", "input": {"cost": 0.01}} for i in range(20)]
    root = toy_suite(cases, concurrency=1)
    url = f"sqlite:///{tmp_path / 's.db'}"
    base = ["run", str(root), "--store", url]
    stopped = caseforge(*base, "--run-id", "r9", "--shard", "1/2", "--max-cost", "0.025")
    assert "--max-cost" in stopped.stdout + stopped.stderr
    store = RunStore(url)
    assert store.get_run("r9").status == "stopped"
    assert [row["status"] for row in store.shards("r9")] == ["stopped"]
    resumed = caseforge(*base, "--resume", "r9", "--shard", "1/2")
    assert resumed.returncode == 0, resumed.stderr
    mine = sum(1 for i in range(20) if Shard(1, 2).holds(f"c{i:02d}", 1))
    assert store.count("r9") == mine and store.get_run("r9").status == "running"
    second = caseforge(*base, "--run-id", "r9", "--shard", "2/2")
    assert second.returncode == 0, second.stderr
    assert store.count("r9") == 20 and store.get_run("r9").status == "finished"


def test_a_whole_run_resume_finishes_a_run_whose_other_shards_never_ran(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    root = toy_suite([{"id": f"c{i}", "input": {}} for i in range(9)])
    url = f"sqlite:///{tmp_path / 's.db'}"
    base = ["run", str(root), "--store", url]
    assert caseforge(*base, "--run-id", "w1", "--shard", "1/3").returncode == 0
    store = RunStore(url)
    assert store.get_run("w1").status == "running"
    rest = caseforge(*base, "--resume", "w1")  # the whole run, from wherever it stands
    assert rest.returncode == 0, rest.stderr
    assert store.count("w1") == 9 and store.get_run("w1").status == "finished"
