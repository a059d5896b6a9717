"""A finished run's digest: stored by `caseforge run`, the same outcomes as the full report,
and dropped when the run is resumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.compare.digest import (
    CaseCells,
    MemoryCells,
    StoredCells,
    load_digest,
    outcomes_from_digest,
)
from caseforge.compare.outcomes import outcomes_from_report
from caseforge.report.build import build_report
from caseforge.store.db import CaseQuery, RunStore
from tests.conftest import MakeToySuite

runner = CliRunner()


def test_run_stores_a_digest_with_the_reports_outcomes(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    cases = [
        {
            "id": "a",
            "input": {"flags": ["x", "y"]},
            "expect": {"flags": {"mode": "exact_set", "values": ["x", "y"]}},
        },
        {"id": "b", "input": {"behaviour": "flip"}},
        {"id": "c", "input": {"behaviour": "crash"}},
    ]
    root = toy_suite(cases, trials=3)
    url = f"sqlite:///{tmp_path / 's.db'}"
    done = runner.invoke(app, ["run", str(root), "-q", "--store", url, "--max-error-rate", "1"])
    assert done.exit_code == 0, done.output
    store = RunStore(url)
    run_id = store.list_runs()[0].id
    digest = load_digest(store, run_id)
    assert digest is not None and digest.report.cases == []
    cells = StoredCells(store, run_id).all()
    assert [c.id for c in cells] == ["a", "b", "c"]
    assert cells[2].statuses == ["error"] * 3
    from_report = outcomes_from_report(build_report(store, run_id))
    from_digest = outcomes_from_digest(digest, cells)
    assert from_digest.cases == from_report.cases
    assert StoredCells(store, run_id).outcomes(digest) == from_digest  # straight from SQL
    assert from_digest.metrics == json.loads(json.dumps(from_report.metrics))

    store.set_status(run_id, "running")  # what --resume does first
    assert load_digest(store, run_id) is None
    assert StoredCells(store, run_id).all() == []  # its rows went with it


def _cells() -> list[CaseCells]:
    """Cases that tell the filters apart, with texts holding LIKE's wildcards."""
    shapes = [
        ("pass-only", ["pass", "pass"], ["a"], '{"t": "plain"}'),
        ("one-fail", ["pass", "fail"], ["a", "b"], '{"t": "50% off_now"}'),
        ("all-fail", ["fail", "fail"], ["b"], '{"t": "5x off now"}'),
        ("one-error", ["error", "pass"], ["ab"], '{"t": "hoàn tiền"}'),
        ("errors", ["error", "error"], [], '{"t": "退款"}'),
        ("incomplete", ["incomplete", "pass"], ['q"uote'], '{"t": "c_d"}'),
    ]
    return [
        CaseCells(i, "x", tags, None, None, statuses, text, {"c": (1, 2)}, {"f": (1, 0, 2)})
        for i, statuses, tags, text in shapes
    ]


@pytest.mark.parametrize("show", ["all", "failing", "errors", "flaky"])
@pytest.mark.parametrize("tag", ["", "a", "b", "ab", 'q"uote', "zz"])
@pytest.mark.parametrize("q", ["", "50%", "off_", "_", "%", "tiền", "one", "退"])
def test_sql_and_python_filters_pick_the_same_cases(
    stored: RunStore, show: str, tag: str, q: str
) -> None:
    cells = _cells()
    query = CaseQuery(show, tag, q)
    total, in_sql = StoredCells(stored, "r").page(query, 0, 100)
    total_py, in_python = MemoryCells(cells).page(query, 0, 100)
    assert [c.id for c in in_sql] == [c.id for c in in_python] and total == total_py


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    store = RunStore(f"sqlite:///{tmp_path_factory.mktemp('digest') / 's.db'}")
    store.save_digest("r", "{}", [c.row() for c in _cells()])
    return store


def test_rows_round_trip_and_pages_keep_the_run_order(stored: RunStore) -> None:
    cells = _cells()
    assert StoredCells(stored, "r").all() == cells
    total, second = StoredCells(stored, "r").page(CaseQuery(), 2, 2)
    assert total == 6 and [c.id for c in second] == ["all-fail", "one-error"]
    assert MemoryCells(cells).page(CaseQuery("failing"), 0, 100)[0] == 5
    assert MemoryCells(cells).page(CaseQuery("flaky"), 0, 100)[0] == 2
