"""`--executor ray`: case-trials run on the workers of a Ray cluster (the session's, on
loopback), graded and stored by the driver. What a run gives is what the local executor
gives; two workers keep one rate limit between them; a worker killed mid-run costs only
its case-trials in flight, which run again elsewhere, exactly once; fixtures record and
replay the same as on one machine."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from caseforge.errors import EnvError, UsageError
from caseforge.report.build import build_report
from caseforge.report.render import to_json
from caseforge.run.ray_executor import RayExecutor
from caseforge.run.runner import RunOptions
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite, report_json
from tests.helpers import caseforge_process as caseforge
from tests.raycluster import RayCluster
from tests.run.fake_model import fake_model

PRICES = {"gpt-4.1-mini": {"input": 0.4, "output": 1.6}}
CALL_USD = (1000 * 0.4 + 500 * 1.6) / 1e6  # what one fake completion costs


def _trials(store: RunStore, run_id: str) -> dict[tuple[str, int], dict[str, Any]]:
    """Each case-trial of a stored run, as the raw report shows it (outputs included)."""
    report = json.loads(to_json(build_report(store, run_id, raw=True)))
    return {(c["id"], t["trial"]): t for c in report["cases"] for t in c["trials"]}


def _pool(store: RunStore, run_id: str) -> dict[str, Any]:
    pool: dict[str, Any] = store.get_run(run_id).options["executor"]
    return pool


def test_a_ray_run_gives_what_the_local_executor_gives(
    toy_suite: MakeToySuite, tmp_path: Path, ray_env: RayCluster
) -> None:
    cases = [
        {
            "id": f"c{i:02d}",
            "input": {"behaviour": "worker", "sleep": 0.05, "want": want},
            "clock": "2026-03-02T09:30:00+00:00",  # the runs' own clocks differ
        }
        for i, want in enumerate(["refund"] * 9 + ["other"] * 3)
    ]
    root = toy_suite(cases, trials=2, concurrency=6)
    runs = {}
    for executor in ("local", "ray"):
        url = f"sqlite:///{tmp_path / executor}.db"
        done = caseforge("run", str(root), "--store", url, "--executor", executor, "-q")
        assert done.returncode == 0, done.stderr
        store = RunStore(url)
        (info,) = store.list_runs()
        runs[executor] = (store, info.id)
    local, ray = (_trials(*runs[name]) for name in ("local", "ray"))
    assert local.keys() == ray.keys() and len(ray) == 24
    for key, trial in ray.items():
        theirs = local[key]
        assert (trial["status"], trial["reply"]) == (theirs["status"], theirs["reply"])
        assert {**trial["output"], "pid": 0} == {**theirs["output"], "pid": 0}
    pids = {t["output"]["pid"] for t in ray.values()}
    assert len(pids) == 2 and os.getpid() not in pids  # both workers ran some, not the driver
    store, run_id = runs["ray"]
    pool = _pool(store, run_id)
    assert (pool["name"], pool["workers"], pool["lost_workers"]) == ("ray", 2, 0)
    assert pool["address"] == ray_env.address


def test_two_workers_keep_one_rate_limit_between_them(
    toy_suite: MakeToySuite, tmp_path: Path, ray_env: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [{"id": f"c{i:02d}", "input": {"behaviour": "worker", "llm": True}} for i in range(9)]
    limit = {"rpm": 3, "window_s": 2.0}  # 3 requests in any 2 s, across both workers
    # Waiting for the limit is part of a case-trial's time: give it more than the default.
    root = toy_suite(cases, concurrency=12, prices=PRICES, rate_limit=limit, timeout_s=60)
    url = f"sqlite:///{tmp_path / 'limit.db'}"
    with fake_model() as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        done = caseforge("run", str(root), "--store", url, "--executor", "ray", "--workers", "2")
        arrivals = sorted(model.arrivals)
    assert done.returncode == 0, done.stderr
    assert len(arrivals) == 9
    # Any 4 requests in a row span the window, less the way from the limiter to the
    # endpoint (a new worker's first request takes a few tenths of a second longer, more
    # on a busy machine): with a limit each, the two workers would send 6 at once.
    spans = [arrivals[i + 3] - arrivals[i] for i in range(len(arrivals) - 3)]
    assert min(spans) > 1.0, spans
    assert arrivals[-1] - arrivals[0] > 3.5  # 9 requests at 3 per 2 s
    store = RunStore(url)
    (info,) = store.list_runs()
    trials = _trials(store, info.id)
    assert len({t["output"]["pid"] for t in trials.values()}) == 2  # both workers called
    pool = _pool(store, info.id)
    assert pool["limited_calls"] == 9 and pool["limit_waited_s"] > 0
    assert "rate_limit: let 9 model call(s) through" in done.stdout


def test_the_local_executor_keeps_the_same_limit_across_its_case_trials(
    toy_suite: MakeToySuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [{"id": f"c{i:02d}", "input": {"behaviour": "worker", "llm": True}} for i in range(8)]
    limit = {"rpm": 4, "window_s": 2}
    root = toy_suite(cases, concurrency=8, prices=PRICES, rate_limit=limit, timeout_s=60)
    with fake_model() as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        done = caseforge("run", str(root), "--store", f"sqlite:///{tmp_path / 's.db'}", "-q")
        arrivals = sorted(model.arrivals)
    assert done.returncode == 0, done.stderr
    # The fifth waited for the window (less the first request's own start-up), where a
    # limit per case-trial would have let all 8 through at once.
    assert len(arrivals) == 8 and arrivals[4] - arrivals[0] > 1.0


def test_a_killed_worker_costs_only_its_case_trials_in_flight(
    toy_suite: MakeToySuite, tmp_path: Path, ray_env: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "killed"
    cases = [
        {"id": f"c{i:02d}", "input": {"behaviour": "worker", "llm": True, "sleep": 0.6}}
        for i in range(16)
    ]
    cases[5]["input"].update(kill_once=str(marker), kill_after=0.3)  # kills its worker
    root = toy_suite(cases, trials=2, concurrency=8, prices=PRICES)
    url = f"sqlite:///{tmp_path / 'killed.db'}"
    with fake_model() as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        done = caseforge(
            "run", str(root), "--store", url, "--executor", "ray", "--workers", "2", "--no-cache"
        )  # fmt: skip  (a retry asks the model again)
        calls = len(model.arrivals)
    assert done.returncode == 0, done.stderr
    assert marker.exists()
    store = RunStore(url)
    (info,) = store.list_runs()
    assert info.status == "finished"
    keys = [(r["case_id"], r["trial"]) for r in store.results(info.id)]
    assert len(keys) == len(set(keys)) == 32  # nothing lost, nothing twice
    report = report_json(store, info.id)
    assert report["summary"]["pass_rate"] == 1.0
    pool = _pool(store, info.id)
    assert pool["lost_workers"] == 1 and pool["lost_twice"] == 0
    # What it had been sent ran again, each once: the 4 it was running (the killer among
    # them) and those queued behind them (the driver keeps 4 times the slots started). Each
    # one running had made its model call before the kill: that is the spend reported lost.
    retried = pool["retried"]
    assert 1 <= retried < 32  # its share of what was started, never the whole run
    started = round(pool["lost_usd"] / CALL_USD)
    assert 1 <= started <= min(4, retried)
    assert pool["lost_usd"] == pytest.approx(started * CALL_USD)
    assert calls == 32 + started  # the queued ones had called nothing
    assert report["summary"]["cost_usd"] == pytest.approx(32 * CALL_USD)  # stored: once each
    assert f"1 died: {retried} case-trial(s) in flight on them ran again" in done.stdout
    assert f"${started * CALL_USD:.4f} through ctx.llm()" in done.stdout


def test_fixtures_record_and_replay_on_workers_as_on_one_machine(
    toy_suite: MakeToySuite, tmp_path: Path, ray_env: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [{"id": f"c{i:02d}", "input": {"behaviour": "worker", "llm": True}} for i in range(6)]
    recorded: dict[str, dict[str, str]] = {}
    with fake_model() as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        for executor in ("local", "ray"):
            root = toy_suite(cases, trials=2, prices=PRICES)
            url = f"sqlite:///{tmp_path / executor}.db"
            done = caseforge("run", str(root), "--store", url, "--executor", executor,
                             "--fixtures", "record", "--no-cache", "-q")  # fmt: skip
            assert done.returncode == 0, done.stderr
            recorded[executor] = {
                path.name: path.read_text() for path in (root / "fixtures").glob("*.json")
            }
        live_calls = len(model.arrivals)
    assert live_calls == 24  # 6 cases × 2 trials, once per executor
    assert len(recorded["ray"]) == 6
    for name, text in recorded["local"].items():
        assert recorded["ray"][name] == text, name
    # Replayed on the workers with no endpoint at all: the same answers, no request made.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    url = f"sqlite:///{tmp_path / 'replay.db'}"
    done = caseforge("run", str(root), "--store", url, "--executor", "ray",
                     "--fixtures", "replay", "--no-cache")  # fmt: skip
    assert done.returncode == 0, done.stderr
    store = RunStore(url)
    (info,) = store.list_runs()
    report = report_json(store, info.id)
    assert report["summary"]["pass_rate"] == 1.0
    assert report["summary"]["cost_usd"] == pytest.approx(12 * CALL_USD)
    replayed = [r for r in store.results(info.id) if json.loads(r["fixtures_json"])["replayed"]]
    assert len(replayed) == 12


def test_ray_errors_are_one_line(
    toy_suite: MakeToySuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = toy_suite([{"id": "c1", "input": {}}])
    url = f"sqlite:///{tmp_path / 's.db'}"
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")  # nothing listens there
    unreachable = caseforge("run", str(root), "--store", url, "--executor", "ray")
    assert unreachable.returncode == 5, unreachable.stderr
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in unreachable.stderr
    assert "check RAY_ADDRESS" in unreachable.stderr and "Traceback" not in unreachable.stderr
    for argv, says in (
        (["--executor", "dask"], "--executor must be local or ray, not 'dask'"),
        (["--workers", "2"], "--workers is for an executor with workers (--executor ray)"),
        (["--executor", "ray", "--workers", "0"], "--workers must be at least 1, not 0"),
    ):
        bad = caseforge("run", str(root), "--store", url, *argv)
        assert bad.returncode == 2 and says in bad.stderr, bad.stderr
    with pytest.raises(UsageError, match="--workers must be at least 1"):
        RayExecutor(4, workers=-1)
    RunOptions(executor="ray", workers=3)  # fine together


def test_without_ray_installed_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from caseforge.run.ray_executor import _connect

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails
    with pytest.raises(EnvError, match=r"needs Ray: pip install 'caseforge\[ray\]'"):
        _connect(None)


def _raylets() -> int:
    import subprocess

    found = subprocess.run(["pgrep", "-c", "-x", "raylet"], capture_output=True, text=True)
    return int(found.stdout.strip() or 0)


def test_with_no_address_a_local_cluster_runs_the_case_trials_and_is_stopped(
    toy_suite: MakeToySuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ray")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    root = toy_suite([{"id": f"c{i}", "input": {"behaviour": "worker"}} for i in range(4)])
    url = f"sqlite:///{tmp_path / 's.db'}"
    before = _raylets()
    done = caseforge("run", str(root), "--store", url, "--executor", "ray", "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert "ray: 2 worker(s) at local; none died" in done.stdout
    assert _raylets() == before  # the cluster it started is gone
    store = RunStore(url)
    (info,) = store.list_runs()
    assert store.count(info.id) == 4 and _pool(store, info.id)["address"] == "local"


def test_a_worker_that_cannot_start_leaves_the_run_stopped_with_one_line(
    toy_suite: MakeToySuite, tmp_path: Path, ray_env: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = toy_suite([{"id": "c1", "input": {}}])
    url = f"sqlite:///{tmp_path / 's.db'}"
    monkeypatch.setenv("CASEFORGE_TEST_DRIVER", "1")  # the driver imports it; a worker cannot
    done = caseforge("run", str(root), "--store", url, "--executor", "ray",
                     "--agent", "tests.run.driver_only_agent:run")  # fmt: skip
    assert done.returncode == 5, done.stderr
    assert "a Ray worker could not start" in done.stderr
    assert "imports only where CASEFORGE_TEST_DRIVER is set" in done.stderr
    assert "Traceback" not in done.stderr
    store = RunStore(url)
    (info,) = store.list_runs()
    assert info.status == "stopped" and store.count(info.id) == 0  # --resume finishes it


def test_a_bad_option_leaves_no_run(
    toy_suite: MakeToySuite, tmp_path: Path, ray_env: RayCluster
) -> None:
    root = toy_suite([{"id": "c1", "input": {}}])
    url = f"sqlite:///{tmp_path / 's.db'}"
    done = caseforge("run", str(root), "--store", url, "--executor", "ray", "--config", "nope")
    assert done.returncode == 2 and "--config: unknown config nope" in done.stderr
    assert RunStore(url).list_runs() == []


def test_when_the_only_worker_dies_its_replacement_finishes_the_run(
    toy_suite: MakeToySuite, tmp_path: Path, ray_env: RayCluster
) -> None:
    marker = tmp_path / "killed"
    cases = [{"id": f"c{i:02d}", "input": {"behaviour": "worker", "sleep": 0.3}} for i in range(6)]
    cases[2]["input"].update(kill_once=str(marker), kill_after=0.1)
    root = toy_suite(cases, concurrency=3)
    url = f"sqlite:///{tmp_path / 's.db'}"
    done = caseforge("run", str(root), "--store", url, "--executor", "ray", "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert marker.exists()
    store = RunStore(url)
    (info,) = store.list_runs()
    assert info.status == "finished" and store.count(info.id) == 6
    pool = _pool(store, info.id)
    assert pool["lost_workers"] == 1 and pool["retried"] >= 1 and pool["lost_twice"] == 0
    pids = {t["output"]["pid"] for t in _trials(store, info.id).values()}
    assert len(pids) <= 2  # the first worker's, and its replacement's
