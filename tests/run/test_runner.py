"""The runner: transports, timeouts, crashes, bad output, retries, seeds, clocks, fixtures,
budgets, matrices, and resuming after a kill."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from caseforge.agent.fixtures import FixtureMode
from caseforge.run.runner import Runner, RunOptions, RunOutcome
from caseforge.run.trial import RetryPolicy
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite, report_json
from tests.helpers import caseforge_process

FAST_RETRY = RetryPolicy(attempts=3, backoff_s=0.001)
REPO = Path(__file__).resolve().parents[2]


def run(store: RunStore, **options: Any) -> RunOutcome:
    options.setdefault("retry", FAST_RETRY)
    return asyncio.run(Runner(RunOptions(**options), store).run())


def trials_of(store: RunStore, outcome: RunOutcome, index: int = 0) -> dict[tuple[str, int], Any]:
    report = report_json(store, outcome.runs[index].run_id)
    return {(c["id"], t["trial"]): t for c in report["cases"] for t in c["trials"]}


def test_async_and_sync_callables_pass(toy_suite: MakeToySuite, store: RunStore) -> None:
    root = toy_suite([{"id": "a", "input": {}}, {"id": "b", "input": {}}])
    outcome = run(store, suite_dir=root, trials=2)
    assert outcome.status == "finished" and outcome.executed == 4
    assert {t["status"] for t in trials_of(store, outcome).values()} == {"pass"}
    sync = run(store, suite_dir=root, agent="tests.run.toy_agent:run_sync")
    assert {t["status"] for t in trials_of(store, sync).values()} == {"pass"}


@pytest.mark.parametrize(
    ("behaviour", "fragment"),
    [
        ("hang", "timed out after 0.2 s"),
        ("crash", "RuntimeError: the agent fell over"),
        ("bad_output", "no `output`, and expect.category reads it"),
        ("not_a_dict", "expected an object (with `output`"),
    ],
)
def test_agent_failures_are_errors_not_crashes(
    toy_suite: MakeToySuite, store: RunStore, behaviour: str, fragment: str
) -> None:
    root = toy_suite([{"id": "bad", "input": {"behaviour": behaviour}}, {"id": "ok", "input": {}}])
    outcome = run(store, suite_dir=root, timeout_s=0.2)
    trials = trials_of(store, outcome)
    assert trials[("ok", 1)]["status"] == "pass"
    assert trials[("bad", 1)]["status"] == "error"
    assert fragment in trials[("bad", 1)]["error"]
    summary = report_json(store, outcome.runs[0].run_id)["summary"]
    assert (summary["errors"], summary["passed"], summary["pass_rate"]) == (1, 1, 0.5)


def test_transient_failures_are_retried(toy_suite: MakeToySuite, store: RunStore) -> None:
    root = toy_suite(
        [
            {"id": "flaky", "input": {"behaviour": "transient", "fail_times": 3}},
            {"id": "down", "input": {"behaviour": "always_transient"}},
        ]
    )
    outcome = run(store, suite_dir=root)
    trials = trials_of(store, outcome)
    assert trials[("flaky", 1)]["status"] == "pass"  # third attempt succeeded
    assert trials[("down", 1)]["status"] == "error"
    assert "connection reset" in trials[("down", 1)]["error"]


def test_seeds_are_deterministic_per_case_and_trial(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    root = toy_suite([{"id": "a", "input": {}}, {"id": "b", "input": {}}])
    first = trials_of(store, run(store, suite_dir=root, trials=3))
    second = trials_of(store, run(store, suite_dir=root, trials=3))
    seeds = {k: v["reply"].split()[1] for k, v in first.items()}
    assert seeds == {k: v["reply"].split()[1] for k, v in second.items()}
    assert len(set(seeds.values())) == 6  # distinct across cases and trials


def test_case_clock_is_handed_to_the_agent_and_frozen(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    clock = "2026-10-12T10:00:00+08:00"
    root = toy_suite([{"id": "a", "input": {"behaviour": "clock"}, "clock": clock}])
    outcome = run(store, suite_dir=root)
    response = json.loads(next(store.results(outcome.runs[0].run_id))["response_json"])
    assert response["reply"].endswith("clock 2026-10-12T10:00:00+08:00")
    # One clock for the whole run: the process clock is frozen for the in-process agent.
    assert response["output"]["wall"] == dt.datetime.fromisoformat(clock).timestamp()


def test_several_clocks_are_not_frozen_process_wide(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    root = toy_suite(
        [
            {"id": "a", "input": {"behaviour": "clock"}, "clock": "2026-10-12T10:00:00+08:00"},
            {"id": "b", "input": {"behaviour": "clock"}, "clock": "2025-01-01T00:00:00+00:00"},
        ]
    )
    outcome = run(store, suite_dir=root)
    for row in store.results(outcome.runs[0].run_id):
        wall = json.loads(row["response_json"])["output"]["wall"]
        assert abs(wall - time.time()) < 600  # the real clock; ctx.now() carries the case's


def test_fixtures_record_replay_and_miss(toy_suite: MakeToySuite, store: RunStore) -> None:
    root = toy_suite([{"id": "w", "input": {"behaviour": "external", "city": "Hà Nội"}}])
    recorded = trials_of(store, run(store, suite_dir=root, fixtures=FixtureMode.RECORD))
    fixture = json.loads((root / "fixtures" / "w.json").read_text(encoding="utf-8"))
    assert fixture["recordings"][0]["request"] == {"city": "Hà Nội"}
    temp = fixture["recordings"][0]["responses"][0]["temp"]
    assert recorded[("w", 1)]["status"] == "pass"
    # Replay is the default once fixtures exist: the same response, no live call.
    replayed = run(store, suite_dir=root, trials=3)
    for row in store.results(replayed.runs[0].run_id):
        assert json.loads(row["response_json"])["output"]["temp"] == temp
    # A request never recorded is an error naming the case and the request.
    case_file = root / "cases" / "w.yaml"
    case_file.write_text(case_file.read_text().replace("Hà Nội", "Huế"), encoding="utf-8")
    missed = trials_of(store, run(store, suite_dir=root))
    assert missed[("w", 1)]["status"] == "error"
    assert "case w: no recorded response" in missed[("w", 1)]["error"]
    assert "Huế" in missed[("w", 1)]["error"]


def test_max_cost_stops_cleanly_and_resume_finishes(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    cases = [{"id": f"c{i}", "input": {"cost": 0.01}} for i in range(12)]
    root = toy_suite(cases, concurrency=1)
    stopped = run(store, suite_dir=root, max_cost=0.035)
    assert stopped.status == "stopped" and "--max-cost" in (stopped.stop_reason or "")
    done = store.count(stopped.runs[0].run_id)
    assert done == 3  # $0.03 spent; a fourth case-trial would take it past $0.035
    resumed = run(store, suite_dir=root, resume="latest")
    assert resumed.runs[0].run_id == stopped.runs[0].run_id
    assert resumed.skipped == done and resumed.executed == 12 - done
    assert store.count(stopped.runs[0].run_id) == 12
    assert store.get_run(stopped.runs[0].run_id).status == "finished"


def test_matrix_runs_each_config_as_its_own_run(toy_suite: MakeToySuite, store: RunStore) -> None:
    cases = [{"id": f"c{i}", "input": {"behaviour": "flip"}} for i in range(4)]
    root = toy_suite(cases, configs={"a": {"mode": "x"}, "b": {"mode": "y"}}, trials=3)
    outcome = run(store, suite_dir=root, configs=["a", "b"])
    assert [h.config_name for h in outcome.runs] == ["a", "b"]
    assert outcome.executed == 24
    groups = {store.get_run(h.run_id).group_id for h in outcome.runs}
    assert len(groups) == 1
    with pytest.raises(Exception, match="unknown config c"):
        run(store, suite_dir=root, configs=["c"])


def test_kill_9_then_resume_runs_only_what_was_not_stored(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    cases = [{"id": f"c{i:02d}", "input": {"behaviour": "slow", "sleep": 0.05}} for i in range(40)]
    root = toy_suite(cases, concurrency=2)
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc, store = _run_until_stored(root, url, env, at_least=6)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    run_id = store.list_runs()[0].id
    before = store.count(run_id)
    assert 6 <= before < 40
    assert store.get_run(run_id).status == "running"  # killed: never marked finished
    resumed = caseforge_process("run", str(root), "--store", url, "--resume", "latest")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed: {before} case-trials were already stored" in resumed.stdout
    assert store.count(run_id) == 40
    keys = [(r["case_id"], r["trial"]) for r in store.results(run_id)]
    assert len(keys) == len(set(keys)) == 40


def test_several_clocks_are_frozen_per_call_at_concurrency_1(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    clocks = {"a": "2026-10-12T10:00:00+08:00", "b": "2025-01-01T00:00:00+00:00"}
    root = toy_suite(
        [{"id": cid, "input": {"behaviour": "clock"}, "clock": c} for cid, c in clocks.items()],
        concurrency=1,
    )
    outcome = run(store, suite_dir=root)
    for row in store.results(outcome.runs[0].run_id):
        wall = json.loads(row["response_json"])["output"]["wall"]
        assert wall == dt.datetime.fromisoformat(clocks[row["case_id"]]).timestamp()


def test_workspace_hook_failure_is_an_error_and_retries_start_clean(
    toy_suite: MakeToySuite, store: RunStore, tmp_path: Path
) -> None:
    hooks = tmp_path / "toy_hooks_ws.py"
    hooks.write_text(
        "import pathlib\n"
        "def prepare(ws, case):\n"
        "    if case.id == 'broken':\n"
        "        raise FileNotFoundError('seed.db missing')\n"
        "    (ws / 'marker').write_text('x') if not (ws / 'marker').exists() else None\n"
        "    (ws / 'count').write_text(str(len(list(ws.iterdir()))))\n"
        "def probe(ws, result, case):\n"
        "    return {'files': sorted(p.name for p in ws.iterdir())}\n"
    )
    cases = [
        {"id": "broken", "input": {}},
        {
            "id": "flaky",
            "input": {"behaviour": "transient", "fail_times": 2},
            "expect": {"files": {"mode": "outcome", "value": ["count", "marker"]}},
        },
    ]
    root = toy_suite(
        cases, workspace_setup="toy_hooks_ws:prepare", outcome_probe="toy_hooks_ws:probe"
    )
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        outcome = run(store, suite_dir=root)
    finally:
        sys.path.remove(str(tmp_path))
    trials = trials_of(store, outcome)
    assert trials[("broken", 1)]["status"] == "error"
    assert (
        "workspace_setup failed: FileNotFoundError: seed.db missing"
        in trials[("broken", 1)]["error"]
    )
    assert trials[("flaky", 1)]["status"] == "pass"  # the retry saw a fresh workspace


def test_a_corrupt_fixtures_file_is_a_one_line_error(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    root = toy_suite([{"id": "w", "input": {"behaviour": "external", "city": "Huế"}}])
    (root / "fixtures").mkdir()
    (root / "fixtures" / "w.json").write_text("{not json", encoding="utf-8")
    outcome = run(store, suite_dir=root)
    error = trials_of(store, outcome)[("w", 1)]["error"]
    assert "w.json: not a fixtures file" in error and "--fixtures record" in error


def test_sigterm_saves_the_run_as_stopped_kills_command_agents_and_resume_finishes_it(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    markers = tmp_path / "grandchildren"
    markers.mkdir()
    agent = tmp_path / "slow_agent.sh"
    # A shell wrapper whose child outlives it unless its whole process group is killed.
    agent.write_text(
        f"#!/bin/sh\nsleep 30 >/dev/null 2>&1 </dev/null &\necho $! > {markers}/$$\n"
        f"exec {sys.executable} -c 'import sys, time, json; json.load(sys.stdin); time.sleep(0.2);"
        ' print(json.dumps({"output": {"category": "refund"}}))\'\n',
        encoding="utf-8",
    )
    agent.chmod(0o755)
    cases = [{"id": f"c{i:02d}", "input": {}} for i in range(30)]
    root = toy_suite(cases, concurrency=2, agent={"command": ["sh", str(agent)]})
    url = f"sqlite:///{tmp_path / 'term.db'}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc, store = _run_until_stored(root, url, env, at_least=3)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "interrupted (SIGTERM)" in stderr and "Traceback" not in stderr
    run_id = store.list_runs()[0].id
    assert store.get_run(run_id).status == "stopped"
    time.sleep(0.2)
    grandchildren = [int(p.read_text()) for p in markers.iterdir() if p.read_text().strip()]
    assert grandchildren and not any(_alive(pid) for pid in grandchildren)  # gone with groups
    resumed = caseforge_process("run", str(root), "--store", url, "--resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert store.count(run_id) == 30
    assert store.get_run(run_id).status == "finished"


def test_kill_9_of_caseforge_still_kills_its_command_agents_and_their_children(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    markers = tmp_path / "grandchildren"
    markers.mkdir()
    agent = tmp_path / "stuck_agent.sh"
    # A shell wrapper that leaves a child behind and then never answers.
    agent.write_text(
        f"#!/bin/sh\nsleep 300 >/dev/null 2>&1 </dev/null &\necho $! > {markers}/$$\nsleep 300\n",
        encoding="utf-8",
    )
    cases = [{"id": "fast", "input": {}}] + [{"id": f"s{i}", "input": {}} for i in range(2)]
    fast = tmp_path / "fast_agent.py"
    fast.write_text(
        "import json, sys, os, subprocess\n"
        "req = json.load(sys.stdin)\n"
        f"if req['case_id'] != 'fast': os.execvp('sh', ['sh', {str(agent)!r}])\n"
        "print(json.dumps({'output': {'category': 'refund'}}))\n",
        encoding="utf-8",
    )
    root = toy_suite(
        cases, concurrency=3, timeout_s=600, agent={"command": [sys.executable, str(fast)]}
    )
    url = f"sqlite:///{tmp_path / 'kill9.db'}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc, _ = _run_until_stored(root, url, env, at_least=1)
    deadline = time.monotonic() + 30
    while len(list(markers.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    wrappers = [int(p.name) for p in markers.iterdir()]
    children = [int(p.read_text()) for p in markers.iterdir()]
    assert len(children) == 2 and all(_alive(pid) for pid in wrappers + children)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    try:
        while any(_alive(pid) for pid in wrappers + children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in wrappers + children), "orphans outlived caseforge"
    finally:
        for pid in wrappers + children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Running, not gone and not a zombie nobody has reaped yet."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def test_a_hung_sync_agent_does_not_keep_caseforge_alive(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    cases = [{"id": "hangs", "input": {"behaviour": "hang"}}, {"id": "fine", "input": {}}]
    root = toy_suite(cases, agent={"callable": "tests.run.toy_agent:run_sync"}, timeout_s=1)
    url = f"sqlite:///{tmp_path / 'hang.db'}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "caseforge",
            "run",
            str(root),
            "--store",
            url,
            "-q",
            "--max-error-rate",
            "0.5",
        ],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Ending within the timeout at all is the point: the agent's call sleeps 600 s.
    assert done.returncode == 0, done.stderr
    store = RunStore(url)
    run = store.list_runs()[0]
    assert run.status == "finished" and store.count(run.id) == 2
    statuses = {cid: status for cid, _, status in store.statuses(run.id)}
    assert statuses == {"hangs": "error", "fine": "pass"}


def _run_until_stored(
    root: Path, url: str, env: dict[str, str], at_least: int
) -> tuple[subprocess.Popen[str], RunStore]:
    """`caseforge run` in a child process, returned once it has stored ``at_least`` results."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "caseforge", "run", str(root), "--store", url, "-q"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = RunStore(url)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        runs = store.list_runs()
        if runs and store.count(runs[0].id) >= at_least:
            break
        time.sleep(0.05)
    return proc, store


def test_output_may_be_left_out_when_no_check_reads_it(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    reply_only = {"reply": {"must_include": ["no output"]}}
    root = toy_suite(
        [
            {"id": "replies", "input": {"behaviour": "bad_output"}, "expect": reply_only},
            {"id": "graded", "input": {"behaviour": "bad_output"}},  # checks output.category
        ]
    )
    trials = trials_of(store, run(store, suite_dir=root))
    assert trials[("replies", 1)]["status"] == "pass"
    assert trials[("graded", 1)]["status"] == "error"


def test_finished_trials_are_written_in_batches_off_the_event_loop(
    toy_suite: MakeToySuite, store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from caseforge.run import session

    monkeypatch.setattr(session, "FLUSH_ROWS", 3)
    writes: list[tuple[bool, int]] = []  # (on the event loop's thread, rows)
    write = store.write_results

    def spy(rows: Any) -> None:
        writes.append((threading.current_thread() is threading.main_thread(), len(rows)))
        write(rows)

    monkeypatch.setattr(store, "write_results", spy)
    cases = [{"id": f"c{i:02d}", "input": {"behaviour": "slow", "sleep": 0.02}} for i in range(12)]
    outcome = run(store, suite_dir=toy_suite(cases, concurrency=2))
    assert outcome.status == "finished"
    assert store.count(outcome.runs[0].run_id) == 12
    off_loop = [n for on_loop, n in writes if not on_loop]
    assert len(off_loop) >= 2, writes  # batches of 3 landed while the run went on
    assert sum(n for _, n in writes) == 12


def test_a_store_that_refuses_a_write_stops_the_run_in_one_line_and_resume_finishes(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    import sqlite3

    root = toy_suite([{"id": f"c{i}", "input": {}} for i in range(5)])
    db = tmp_path / "refusing.db"
    RunStore(f"sqlite:///{db}").close()
    with sqlite3.connect(db) as conn:  # a real refusal from SQLite itself, on every insert
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON results "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    argv = ["run", str(root), "--store", f"sqlite:///{db}"]
    refused = caseforge_process(*argv)
    assert refused.returncode == 5, refused.stderr
    assert "Traceback" not in refused.stderr
    lines = [line for line in refused.stderr.splitlines() if "cannot store" in line]
    assert len(lines) == 1 and "database or disk is full" in lines[0]
    assert "--resume" in lines[0]
    store = RunStore(f"sqlite:///{db}")
    run_id = store.list_runs()[0].id
    assert store.get_run(run_id).status == "stopped" and store.count(run_id) == 0
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER refuse")
    resumed = caseforge_process(*argv, "--resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert store.count(run_id) == 5 and store.get_run(run_id).status == "finished"


def test_a_resume_keeps_the_runs_judge_setting(toy_suite: MakeToySuite, store: RunStore) -> None:
    """A run started with --no-judge and resumed without it grades the rest as it began: a
    resumed half `not judged` would report a pass rate nobody measured."""
    from caseforge.errors import UsageError

    judged = {"facts": {"mode": "judge", "values": ["the order is on its way"]}}
    cases = [{"id": f"c{i}", "input": {"cost": 0.01}, "expect": judged} for i in range(6)]
    root = toy_suite(cases, concurrency=1)
    stopped = run(store, suite_dir=root, max_cost=0.025, judge="off")
    assert stopped.status == "stopped"
    before = store.count(stopped.runs[0].run_id)
    resumed = run(store, suite_dir=root, resume="latest")  # the default judge: "auto"
    assert resumed.status == "finished"
    assert (resumed.skipped, resumed.executed) == (before, 6 - before)
    statuses = {row["status"] for row in store.results(stopped.runs[0].run_id)}
    assert statuses == {"pass"}, statuses  # judge checks skipped on purpose, never `incomplete`

    started_judged = run(store, suite_dir=root, max_cost=0.025)
    assert started_judged.status == "stopped"
    with pytest.raises(UsageError, match="started with its judge"):
        run(store, suite_dir=root, resume=started_judged.runs[0].run_id, judge="off")
