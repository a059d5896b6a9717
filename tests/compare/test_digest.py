"""A finished run's digest: stored by `caseforge run`, the same outcomes as the full report,
and dropped when the run is resumed."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.compare.digest import load_digest, outcomes_from_digest
from caseforge.compare.outcomes import outcomes_from_report
from caseforge.report.build import build_report
from caseforge.store.db import RunStore
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
    assert [c.id for c in digest.cases] == ["a", "b", "c"]
    assert digest.cases[2].statuses == ["error"] * 3
    from_report = outcomes_from_report(build_report(store, run_id))
    from_digest = outcomes_from_digest(digest)
    assert from_digest.cases == from_report.cases
    assert from_digest.metrics == json.loads(json.dumps(from_report.metrics))

    store.set_status(run_id, "running")  # what --resume does first
    assert load_digest(store, run_id) is None
