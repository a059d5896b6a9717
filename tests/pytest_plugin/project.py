"""A project to run pytest in, in a process of its own: a ``pytest.ini``, a toy suite beside
it, and a store of its own; and the run pytest left in that store."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caseforge.report.build import build_report
from caseforge.report.model import RunReport
from caseforge.store.db import RunStore
from tests.helpers import REPO_ROOT, TIMEOUT_S, write_toy_suite

EXPECT = {"category": {"mode": "exact", "value": "refund"}}
JUDGED = {**EXPECT, "facts": {"mode": "judge", "values": ["the refund is on its way"]}}
GATE = {"rules": [{"metric": "pass_rate", "no_significant_drop": True}]}

# Four cases: two pass, one fails its `category` check, one has a judge check nobody judges.
CASES: list[dict[str, Any]] = [
    {"id": "refund-a", "input": {}},
    {"id": "refund-b", "input": {}, "tags": ["must-pass"]},
    {"id": "wrong-c", "input": {"want": "other"}},
    {"id": "judged-d", "input": {}, "expect": JUDGED},
]


@dataclass
class Project:
    root: Path
    suite: Path

    @property
    def store_url(self) -> str:
        return f"sqlite:///{self.root / 'store.db'}"

    def pytest(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``python -m pytest --caseforge toy ARGS`` in the project, its output as text."""
        return run_pytest(
            self.root, "--caseforge", "toy", "--caseforge-store", self.store_url, *args
        )

    def caseforge(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "caseforge", *args],
            cwd=self.root,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )

    def runs(self) -> list[RunReport]:
        """Every run in the project's store, the newest first."""
        store = RunStore(self.store_url)
        try:
            return [build_report(store, info.id) for info in store.list_runs()]
        finally:
            store.close()

    def shards(self, run_id: str) -> list[dict[str, Any]]:
        store = RunStore(self.store_url)
        try:
            return [dict(row) for row in store.shards(run_id)]
        finally:
            store.close()


def make_project(
    root: Path,
    cases: list[dict[str, Any]] | None = None,
    files: dict[str, str] | None = None,
    **config: Any,
) -> Project:
    """``root/pytest.ini`` and the suite ``root/toy`` (the toy agent, 2 trials a case)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    settings = {
        "name": "toy",
        "agent": {"callable": "tests.run.toy_agent:run"},
        "trials": 2,
        "concurrency": 4,
        "timeout_s": 120,
        "gate": GATE,
        **config,
    }
    cases = [dict(case) for case in (CASES if cases is None else cases)]
    suite = write_toy_suite(root / "toy", cases, settings, expect=EXPECT, files=files)
    return Project(root, suite)


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", *args],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def _env() -> dict[str, str]:
    """This environment without the outer pytest's variables, a model or a store, and with
    the checkout importable (the toy agent is ``tests.run.toy_agent``)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "CASEFORGE", "OPENAI"))
    }
    env["PYTHONPATH"] = str(REPO_ROOT)
    return env
