"""Executors by name: ``--executor NAME`` finds a built-in executor (``local``, ``ray``) or
one an installed package registers under the ``caseforge.executors`` entry points, and the
runner drives any of them through the same calls, never asking which it is. An unknown
name is a one-line usage error listing the known ones."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.errors import UsageError
from caseforge.run import executor as executors
from caseforge.run.executor import (
    ExecutorSettings,
    LocalExecutor,
    build_executor,
    check_executor_name,
    executor_names,
)
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite

runner = CliRunner()

# An installed package's executor: it runs each case-trial through a call of its own
# (``connect``), counts them, and says what it did (``report``).
FAKE = """
from caseforge.run.executor import ExecutorSettings, LocalExecutor

CALLS = []


class Counting:
    def __init__(self, runner):
        self.runner = runner
        self.trials = 0

    async def __call__(self, task):
        self.trials += 1
        return await self.runner(task)

    async def aclose(self):
        CALLS.append("aclose")
        await self.runner.agent.aclose()
        await self.runner.aclose()


class FakeExecutor(LocalExecutor):
    def __init__(self, settings: ExecutorSettings) -> None:
        super().__init__(settings.concurrency)
        CALLS.append(("built", settings.name, settings.concurrency, settings.workers))
        self.call = None

    def prepare(self):
        CALLS.append("prepare")

    def release(self):
        CALLS.append("release")

    def connect(self, setup, handles, fixtures, frozen_clock):
        CALLS.append("connect")
        self.call = Counting(setup.trial_runner(fixtures=fixtures))
        return self.call

    def report(self):
        return {"name": "fake", "trials": self.call.trials if self.call else 0}
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """A package on sys.path whose metadata registers ``fake`` under caseforge.executors;
    yields the list its executor appends its calls to."""
    site = tmp_path / "site"
    (site / "acme_executors").mkdir(parents=True)
    (site / "acme_executors" / "__init__.py").write_text(FAKE, encoding="utf-8")
    dist = site / "acme_executors-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Name: acme-executors\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[caseforge.executors]\nfake = acme_executors:FakeExecutor\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    try:
        import acme_executors  # type: ignore[import-not-found]

        calls: list[object] = acme_executors.CALLS
        yield calls
    finally:
        sys.modules.pop("acme_executors", None)


def test_an_installed_executor_runs_the_suite_by_its_name(
    installed: list[object],
    toy_suite: MakeToySuite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    suite = toy_suite([{"id": f"c{i}", "input": {}} for i in range(5)], trials=2)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.setenv("CASEFORGE_STORE", url)
    assert executor_names() == ["local", "ray", "fake"]

    argv = ["run", str(suite), "--executor", "fake", "--concurrency", "3", "-q"]
    done = runner.invoke(app, [*argv, "--run-id", "r1"])
    assert done.exit_code == 0, done.output
    assert installed == [("built", "fake", 3, None), "prepare", "connect", "aclose"]
    store = RunStore(url)
    info = store.get_run("r1")
    assert info.status == "finished" and store.count("r1") == 10
    assert info.options["executor"] == {"name": "fake", "trials": 10}

    # A run that fails after the executor was prepared, before it drives: released.
    installed.clear()
    again = runner.invoke(app, [*argv, "--run-id", "r1"])
    assert again.exit_code == 2 and "the store has that run already" in again.output
    assert installed == [("built", "fake", 3, None), "prepare", "release"]


def test_an_unknown_executor_is_a_one_line_usage_error_naming_the_known_ones(
    installed: list[object], toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    suite = toy_suite([{"id": "c1", "input": {}}])
    done = runner.invoke(
        app,
        ["run", str(suite), "--executor", "dask", "--store", f"sqlite:///{tmp_path / 's.db'}"],
    )
    assert done.exit_code == 2
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert lines == ["--executor must be local, ray or fake, not 'dask'"], done.output
    assert installed == []  # nothing was built
    with pytest.raises(UsageError, match="must be local, ray or fake, not 'nope'"):
        check_executor_name("nope")


def test_a_built_in_name_reads_no_entry_point_and_local_imports_no_ray(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(**_: object) -> None:
        raise AssertionError("entry points read for a built-in name")

    monkeypatch.setattr(executors, "entry_points", refuse)
    check_executor_name("ray")
    built = build_executor(ExecutorSettings("local", 3))
    assert isinstance(built, LocalExecutor) and built.concurrency == 3
    with pytest.raises(UsageError, match="--workers is for an executor with workers"):
        build_executor(ExecutorSettings("local", 3, workers=2))
    # In a fresh process, the local executor loads neither Ray nor its executor's module.
    code = (
        "import sys\n"
        "from caseforge.run.executor import ExecutorSettings, build_executor\n"
        "build_executor(ExecutorSettings('local', 2))\n"
        "print(sorted(m for m in ('ray', 'caseforge.run.ray_executor') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
