"""A small suite for the runner tests, using tests.run.toy_agent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from caseforge.store.db import RunStore

MakeToySuite = Callable[..., Path]


@pytest.fixture
def toy_suite(tmp_path: Path) -> MakeToySuite:
    """``toy_suite([{"id": ..., "input": {...}, "expect": {...}}, ...], config=...)``."""

    def make(cases: list[dict[str, Any]], **config: Any) -> Path:
        root = tmp_path / "toy"
        (root / "cases").mkdir(parents=True, exist_ok=True)
        settings = {
            "name": "toy",
            "agent": {"callable": "tests.run.toy_agent:run"},
            "trials": 1,
            "concurrency": 4,
            "timeout_s": 5,
            **config,
        }
        (root / "caseforge.yaml").write_text(json.dumps(settings), encoding="utf-8")
        for case in cases:
            case.setdefault("expect", {"category": {"mode": "exact", "value": "refund"}})
            (root / "cases" / f"{case['id']}.yaml").write_text(
                json.dumps(case, ensure_ascii=False), encoding="utf-8"
            )
        return root

    return make


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(f"sqlite:///{tmp_path / 'store.db'}")
