"""Stopping a run the way CI does: SIGTERM to a run a shell script started in the background
(with SIGINT ignored), SIGINT from a terminal, and a stop at every phase: while the agent's
module imports, while an in-process agent blocks the event loop, and with --trials in the
thousands. Each waits on an event (a marker file the agent writes), never on a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from caseforge.case.model import Case
from caseforge.run.cancel import Cancellation
from caseforge.run.plan import SHARD_COUNTED, RunHandle, RunPlan, Shard
from caseforge.store.db import RunStore
from tests.helpers import write_toy_suite

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
GENEROUS_S = 120  # how long a stop may take on a very busy machine; it takes well under 1 s


def _suite(root: Path, agent: str, cases: int = 2, jsonl: bool = False) -> Path:
    config = {"name": "sig", "agent": {"callable": agent}, "trials": 1, "timeout_s": 900}
    rows = [
        {"id": f"c{i:04d}", "input": {}, "expect": {"x": {"mode": "exact", "value": 1}}}
        for i in range(cases)
    ]
    if not jsonl:
        return write_toy_suite(root, rows, config)
    write_toy_suite(root, [], config)
    text = "".join(json.dumps(row) + "\n" for row in rows)
    (root / "cases" / "all.jsonl").write_text(text, encoding="utf-8")
    return root


def _agent(root: Path, source: str) -> None:
    (root / "agent.py").write_text(textwrap.dedent(source), encoding="utf-8")


def _wait_for(path: Path, proc: subprocess.Popen[str] | None = None) -> None:
    """Wait until the agent has written ``path`` (the event), failing if the run ended."""
    deadline = time.monotonic() + GENEROUS_S
    while not path.exists():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"caseforge ended first: {proc.communicate()}")
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def _start(suite: Path, url: str, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "caseforge", "run", str(suite), "--quiet", "--store", url, *flags],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


SLOW_AGENT = """
    import pathlib, time
    MARKER = pathlib.Path(__file__).with_name("started")

    def run(input, ctx):
        MARKER.touch()
        time.sleep(0.2)
        return {"output": {"x": 1}}
"""


def test_sigterm_stops_a_run_a_shell_script_started_in_the_background(tmp_path: Path) -> None:
    """The shape CI uses: `sh -c 'caseforge run … & P=$!; …; kill -TERM $P; wait $P'`. The
    shell starts the job with SIGINT ignored; SIGTERM must still stop it, with 143."""
    suite = _suite(tmp_path / "suite", "agent:run")
    _agent(suite, SLOW_AGENT)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    argv = ["run", str(suite), "--trials", "40", "--concurrency", "1", "--quiet", "--store", url]
    command = " ".join([sys.executable, "-m", "caseforge", *argv])
    marker = suite / "started"
    script = (
        f"{command} 2>{tmp_path / 'stderr'} &\n"
        "P=$!\n"
        f"while [ ! -e {marker} ]; do sleep 0.02; done\n"  # the agent has been called
        "grep -q '^SigIgn:.*[2367abef]$' /proc/$P/status && echo sigint-ignored\n"
        "kill -TERM $P\n"
        "wait $P\n"
        'echo "exit=$?"\n'
    )
    done = subprocess.run(
        ["sh", "-c", script], env=ENV, capture_output=True, text=True, timeout=GENEROUS_S
    )
    assert "sigint-ignored" in done.stdout  # the shell did ignore SIGINT in the job
    assert "exit=143" in done.stdout, (done.stdout, (tmp_path / "stderr").read_text())
    stderr = (tmp_path / "stderr").read_text()
    assert "interrupted (SIGTERM); the run is saved as stopped" in stderr
    assert "Traceback" not in stderr
    store = RunStore(url)
    [run] = store.list_runs()
    assert run.status == "stopped"
    assert store.count(run.id) < 80  # it stopped: not every case-trial ran


def test_sigint_from_a_terminal_stops_the_run_with_130(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite", "agent:run")
    _agent(suite, SLOW_AGENT)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    proc = _start(suite, url, "--trials", "40", "--concurrency", "1")
    _wait_for(suite / "started", proc)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=GENEROUS_S)
    assert proc.returncode == 130, stderr
    assert "interrupted (SIGINT); the run is saved as stopped: resume with --resume" in stderr
    [run] = RunStore(url).list_runs()
    assert run.status == "stopped"


def test_a_stop_while_the_agent_module_imports_records_nothing(tmp_path: Path) -> None:
    """Start-up and planning are stopped too: an agent module that takes for ever to import
    is interrupted, and no run was recorded yet."""
    suite = _suite(tmp_path / "suite", "agent:run")
    _agent(
        suite,
        """
        import pathlib, time
        pathlib.Path(__file__).with_name("started").touch()
        time.sleep(900)

        def run(input, ctx):
            return {"output": {"x": 1}}
        """,
    )
    url = f"sqlite:///{tmp_path / 'store.db'}"
    proc = _start(suite, url)
    _wait_for(suite / "started", proc)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=GENEROUS_S)
    assert proc.returncode == 143, stderr
    assert stderr.strip().splitlines()[-1] == "interrupted (SIGTERM)"
    assert RunStore(url).list_runs() == []


def test_a_stop_reaches_an_async_agent_that_blocks_the_event_loop(tmp_path: Path) -> None:
    """An `async def` agent that never awaits holds the event loop; the stop interrupts it,
    and no other case-trial starts after it."""
    suite = _suite(tmp_path / "suite", "agent:run", cases=6)
    _agent(
        suite,
        """
        import pathlib, time
        FOLDER = pathlib.Path(__file__).parent

        async def run(input, ctx):
            (FOLDER / "started").touch()
            (FOLDER / f"called-{ctx.case_id}").touch()
            time.sleep(900)
            return {"output": {"x": 1}}
        """,
    )
    url = f"sqlite:///{tmp_path / 'store.db'}"
    proc = _start(suite, url)
    _wait_for(suite / "started", proc)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=GENEROUS_S)
    assert proc.returncode == 143, stderr
    assert "the run is saved as stopped" in stderr
    [run] = RunStore(url).list_runs()
    assert run.status == "stopped"
    assert len(list(suite.glob("called-*"))) == 1  # nothing else entered the blocking agent


def test_ten_thousand_trials_start_at_once_and_stop_when_told(tmp_path: Path) -> None:
    """1,000 cases x 10,000 trials, the most one invocation may ask for: the first
    case-trial starts without planning all ten million, and SIGTERM stops the run."""
    suite = _suite(tmp_path / "suite", "agent:run", cases=1000, jsonl=True)
    _agent(suite, SLOW_AGENT)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    proc = _start(suite, url, "--trials", "10000", "--concurrency", "2")
    _wait_for(suite / "started", proc)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=GENEROUS_S)
    assert proc.returncode == 143, stderr
    [run] = RunStore(url).list_runs()
    assert run.status == "stopped" and run.trials == 10_000


def _plan(cases: int, trials: int, shard: Shard | None) -> RunPlan:
    case = Case.model_validate(
        {"id": "c", "input": {}, "expect": {"x": {"mode": "exact", "value": 1}}}
    )
    handle = RunHandle("r", None, {}, {f"c{i}": case for i in range(cases)})
    return RunPlan(suite=None, handles=[handle], trials=trials, clock="", shard=shard)  # type: ignore[arg-type]


def test_planning_is_linear_in_cases_not_in_case_trials(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int]] = []
    real = RunPlan.mine

    def counted(self: RunPlan, case_id: str, trial: int) -> bool:
        calls.append((case_id, trial))
        return real(self, case_id, trial)

    monkeypatch.setattr(RunPlan, "mine", counted)
    whole = _plan(1000, 10_000, None)
    assert whole.planned() == 10_000_000 and not whole.estimated and calls == []
    big = _plan(1000, 10_000, Shard(2, 4))
    assert big.estimated and big.planned() == 2_500_000 and calls == []  # estimated: ~
    small = _plan(10, 100, Shard(1, 3))
    assert SHARD_COUNTED >= 10 * 100 and not small.estimated  # counted, one by one
    exact = sum(Shard(1, 3).holds(f"c{i}", t) for i in range(10) for t in range(1, 101))
    assert small.planned() == exact and len(calls) == 1000


def test_a_cancellation_from_another_thread_stops_a_library_run(tmp_path: Path) -> None:
    """The library installs no signal handler: a caller (a notebook, pytest) stops a run by
    cancelling it; the run is stored as stopped and Interrupted is raised."""
    import asyncio

    from caseforge.errors import Interrupted
    from caseforge.run.runner import Runner, RunOptions

    suite = _suite(tmp_path / "suite", "agent:run")
    _agent(suite, SLOW_AGENT)
    store = RunStore(f"sqlite:///{tmp_path / 'store.db'}")
    cancel = Cancellation()
    runner = Runner(
        RunOptions(suite_dir=suite, trials=40, concurrency=1), store, cancellation=cancel
    )

    def stop_when_started() -> None:
        _wait_for(suite / "started")
        cancel.cancel()

    helper = threading.Thread(target=stop_when_started)
    helper.start()
    try:
        with pytest.raises(Interrupted, match=r"the run is saved as stopped"):
            asyncio.run(runner.run())
    finally:
        helper.join()
        sys.modules.pop("agent", None)
        sys.path[:] = [p for p in sys.path if p != str(suite.resolve())]
    [run] = store.list_runs()
    assert run.status == "stopped" and store.count(run.id) < 80


def test_a_stop_while_the_run_starts_or_closes_never_leaves_it_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two windows a review found: a signal while the progress display starts (before the
    drive) left the run `running`; one while the session stores its last rows for longer
    than the loop's grace was re-sent and cut the close short, leaving it `running` too."""
    import asyncio
    import os as _os

    from caseforge.cli.signals import SignalStop
    from caseforge.errors import Interrupted
    from caseforge.run.runner import Runner, RunOptions
    from caseforge.run.session import RunSession

    suite = _suite(tmp_path / "suite", "agent:run")
    _agent(suite, "def run(input, ctx):\n    return {'output': {'x': 1}}\n")
    store = RunStore(f"sqlite:///{tmp_path / 'store.db'}")

    def starting(*_: object) -> None:  # what the handler does outside the drive: raise
        raise Interrupted("SIGTERM")

    runner = Runner(RunOptions(suite_dir=suite), store, on_start=starting)
    with pytest.raises(Interrupted, match="the run is saved as stopped"):
        asyncio.run(runner.run())
    assert [r.status for r in store.list_runs()] == ["stopped"]

    stop = SignalStop()
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, stop._handle)
    flush = RunSession.flush
    finished_waiting = threading.Event()

    def slow_flush(self: RunSession) -> None:  # the signal lands, then storing takes long
        _os.kill(_os.getpid(), signal.SIGTERM)
        finished_waiting.wait(2)  # longer than the loop's 0.5 s grace: nothing sets it
        flush(self)

    monkeypatch.setattr(RunSession, "flush", slow_flush)
    try:
        cancel = Cancellation()
        runner = Runner(RunOptions(suite_dir=suite), store, cancellation=cancel)
        with stop.cancelling(cancel), pytest.raises(Interrupted, match="had finished"):
            asyncio.run(runner.run())
    finally:
        signal.signal(signal.SIGTERM, previous)
        sys.modules.pop("agent", None)
        sys.path[:] = [p for p in sys.path if p != str(suite.resolve())]
    latest = store.list_runs()[0]
    assert latest.status == "finished" and store.count(latest.id) == 2
