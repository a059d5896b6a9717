"""Shared fixtures: small suites (for the dataset tests and, with tests.run.toy_agent, for
the runner tests) written into a temporary folder, and a run store."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from caseforge.store.db import RunStore
from tests.helpers import write_toy_suite
from tests.postgres import Cluster, fresh_database, start_cluster
from tests.raycluster import RayCluster, start_ray

ORACLES = """
from caseforge.oracle import oracle

PRICES = {"C1": 10.0, "C2": 25.5}


@oracle("price")
def price(input, *, times=1):
    return PRICES.get(input["customer"], 0.0) * times
"""

GOOD_CASE = """\
id: {id}
input:
  ticket: {ticket}
  customer: C1
expect:
  category: {{mode: exact, value: {category}}}
  amount: {{mode: number, value: 20.0, tolerance: 0.01, oracle: price, args: {{times: 2}}}}
  reply: {{must_include: ["20"], must_not_include: [全额]}}
  tool_calls: {{must_call: [lookup], must_not_call: []}}
  wording: {{mode: ignore, reason: wording varies}}
tags: [t]
source: manual
"""

SuiteFactory = Callable[..., Path]


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture
def make_suite(tmp_path: Path) -> SuiteFactory:
    """Write a suite: ``make_suite({"a.yaml": "..."}, config="...")`` returns its folder."""

    def make(
        files: dict[str, str] | None = None,
        config: str = "name: demo\noracles: oracles.py\n",
        oracles: str = ORACLES,
    ) -> Path:
        root = tmp_path / "suite"
        (root / "cases").mkdir(parents=True, exist_ok=True)
        (root / "caseforge.yaml").write_text(config, encoding="utf-8")
        (root / "oracles.py").write_text(oracles, encoding="utf-8")
        for name, text in (files or {}).items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return root

    return make


def good_case(case_id: str, ticket: str = "我想问一下退款", category: str = "refund") -> str:
    """A valid case file whose oracle-backed amount is right."""
    return GOOD_CASE.format(id=case_id, ticket=ticket, category=category)


MakeToySuite = Callable[..., Path]
TOY_EXPECT = {"category": {"mode": "exact", "value": "refund"}}


@pytest.fixture
def toy_suite(tmp_path: Path) -> MakeToySuite:
    """``toy_suite([{"id": ..., "input": {...}, "expect": {...}}, ...], config=...)``."""

    def make(cases: list[dict[str, Any]], **config: Any) -> Path:
        settings = {
            "name": "toy",
            "agent": {"callable": "tests.run.toy_agent:run"},
            "trials": 1,
            "concurrency": 4,
            "timeout_s": 120,  # generous: only tests about timeouts set a short one
            **config,
        }
        return write_toy_suite(tmp_path / "toy", cases, settings, expect=TOY_EXPECT)

    return make


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(f"sqlite:///{tmp_path / 'store.db'}")


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[RayCluster]:
    """One throw-away Ray cluster for the session (see tests/raycluster.py)."""
    yield from start_ray()


@pytest.fixture
def ray_env(ray_cluster: RayCluster, monkeypatch: pytest.MonkeyPatch) -> RayCluster:
    """RAY_ADDRESS (and its token) set, for `--executor ray` in this process or a child."""
    for key, value in ray_cluster.env.items():
        monkeypatch.setenv(key, value)
    return ray_cluster


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One throw-away PostgreSQL server for the session (see tests/postgres.py)."""
    yield from start_cluster()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """The URL of a new, empty PostgreSQL database."""
    return fresh_database(pg_cluster)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new store's URL, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("pg_url"))


def report_json(store: RunStore, run_id: str) -> dict[str, Any]:
    """A stored run's report as the JSON document ``caseforge report --format json`` prints."""
    import json

    from caseforge.report.build import build_report
    from caseforge.report.render import to_json

    data: dict[str, Any] = json.loads(to_json(build_report(store, run_id)))
    return data
