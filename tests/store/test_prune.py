"""`caseforge store prune`: old runs go, with everything stored of them; an unfinished run
and a baseline's run never do; --dry-run removes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select, update
from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.compare.digest import save_digest
from caseforge.report.build import build_report
from caseforge.results import CheckResult, CheckStatus, TrialRecord, TrialStatus
from caseforge.store.db import RunStore, utcnow
from caseforge.store.schema import results, run_cases, run_digest_cases, run_digests, runs

runner = CliRunner()


def _run(store: RunStore, suite: Path, config: str, day: str, status: str = "finished") -> str:
    run_id = store.create_run(
        suite="prune-suite", suite_path=str(suite), agent="toy", config_name=config,
        trials=2, split="all", caseforge_version="test",
    )  # fmt: skip
    ids = ["case-a", "case-b", "case-c"]
    case = {"input": {"n": 1}, "expect": {"category": {"mode": "exact", "value": "x"}}}
    store.save_cases(run_id, [(i, json.dumps({"id": i, **case})) for i in ids])
    rows = []
    for case_id in ids:
        for trial in (1, 2):
            check = CheckResult("category", "exact", CheckStatus.PASS, "x", "x")
            record = TrialRecord(case_id=case_id, trial=trial, status=TrialStatus.PASS,
                                 checks=[check])  # fmt: skip
            rows.append(record.to_row(run_id, utcnow(), json.dumps({"output": {}})))
    store.write_results(rows)
    store.set_status(run_id, status)
    if status == "finished":
        save_digest(store, build_report(store, run_id))
    with store.engine.begin() as conn:  # started on that day
        conn.execute(
            update(runs).where(runs.c.id == run_id).values(created_at=f"{day}T09:00:00+00:00")
        )
    return run_id


@pytest.fixture
def made(tmp_path: Path) -> tuple[str, Path, dict[str, str]]:
    suite = tmp_path / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: prune-suite\n", encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = RunStore(url)
    ids = {
        "v1-oldest": _run(store, suite, "v1", "2026-01-01"),
        "v1-baseline": _run(store, suite, "v1", "2026-02-01"),
        "v1-stopped": _run(store, suite, "v1", "2026-02-15", status="stopped"),
        "v1-old": _run(store, suite, "v1", "2026-03-01"),
        "v1-new": _run(store, suite, "v1", "2026-04-01"),
        "v2-old": _run(store, suite, "v2", "2026-01-10"),
        "v2-new": _run(store, suite, "v2", "2026-04-10"),
    }
    store.close()
    done = runner.invoke(
        app,
        ["baseline", ids["v1-baseline"], "--store", url, "--write", str(suite / "baseline.json")],
    )
    assert done.exit_code == 0, done.output
    return url, suite, ids


def _left(url: str) -> dict[str, int]:
    store = RunStore(url)
    try:
        with store.engine.connect() as conn:
            ids = list(conn.execute(select(runs.c.id)).scalars())
            counts = {
                table.name: conn.execute(select(func.count()).select_from(table)).scalar_one()
                for table in (results, run_cases, run_digests, run_digest_cases)
            }
    finally:
        store.close()
    return {"runs": len(ids), **counts, **{i: 1 for i in ids}}


def test_keep_n_keeps_the_newest_of_each_config_the_baselines_run_and_unfinished_ones(
    made: tuple[str, Path, dict[str, str]],
) -> None:
    url, _, ids = made
    before = _left(url)
    dry = runner.invoke(app, ["store", "prune", "--keep", "1", "--dry-run", "--store", url])
    assert dry.exit_code == 0, dry.output
    assert "would remove 3 run(s), 18 case-trial(s)" in dry.output
    assert _left(url) == before  # a dry run removes nothing

    done = runner.invoke(app, ["store", "prune", "--keep", "1", "--store", url])
    assert done.exit_code == 0, done.output
    left = _left(url)
    gone = {"v1-oldest", "v1-old", "v2-old"}
    assert {k for k, v in ids.items() if v in left} == set(ids) - gone
    assert f"kept: {ids['v1-baseline']}, the run of the baseline" in done.output
    assert f"kept: {ids['v1-stopped']}, stopped" in done.output
    # Everything stored of the removed runs went with them, nothing of the others.
    assert left["results"] == before["results"] - 3 * 6
    assert left["run_cases"] == before["run_cases"] - 3 * 3
    assert left["run_digests"] == before["run_digests"] - 3
    assert left["run_digest_cases"] == before["run_digest_cases"] - 3 * 3
    again = runner.invoke(app, ["store", "prune", "--keep", "1", "--store", url])
    assert "removed 0 run(s)" in again.output


def test_older_than_removes_by_age_and_never_a_baseline_given_by_file(
    made: tuple[str, Path, dict[str, str]], tmp_path: Path
) -> None:
    url, suite, ids = made
    elsewhere = tmp_path / "kept-baseline.json"  # outside the suite: named on the command
    done = runner.invoke(
        app, ["baseline", ids["v2-old"], "--store", url, "--write", str(elsewhere)]
    )
    assert done.exit_code == 0, done.output
    (suite / "baseline.json").unlink()  # now only --baseline protects anything
    done = runner.invoke(
        app, ["store", "prune", "--older-than", "0", "--baseline", str(elsewhere), "--store", url]
    )
    assert done.exit_code == 0, done.output
    left = _left(url)
    assert {k for k, v in ids.items() if v in left} == {"v1-stopped", "v2-old"}


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "give one of --keep N or --older-than DAYS"),
        (["--keep", "1", "--older-than", "3"], "give one of --keep N or --older-than DAYS"),
        (["--keep", "-1"], "--keep must be 0 or more"),
    ],
)
def test_prune_needs_one_rule(
    made: tuple[str, Path, dict[str, str]], argv: list[str], says: str
) -> None:
    url, _, _ = made
    done = runner.invoke(app, ["store", "prune", *argv, "--store", url])
    assert done.exit_code == 2 and says in done.output
    assert _left(url)["runs"] == 7


def test_a_file_named_as_a_baseline_that_is_not_one_is_a_one_line_error(
    made: tuple[str, Path, dict[str, str]], tmp_path: Path
) -> None:
    url, _, _ = made
    bogus = tmp_path / "bogus.json"
    bogus.write_text("{}", encoding="utf-8")
    done = runner.invoke(
        app, ["store", "prune", "--keep", "0", "--baseline", str(bogus), "--store", url]
    )
    assert done.exit_code in (1, 2) and "bogus.json" in done.output
    assert "Traceback" not in done.output
    assert _left(url)["runs"] == 7
