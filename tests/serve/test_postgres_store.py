"""The web app over a shared PostgreSQL store: the runs list, a run, its filtered grid (the
SQL filters), a trial and the suite screen read the same as over SQLite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.cli import app

pytest.importorskip("fastapi")

REPO = Path(__file__).resolve().parents[2]


def test_the_web_app_reads_a_postgresql_store(pg_url: str, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from caseforge.serve import Catalog, create_app

    suite = tmp_path / "support-refund"
    shutil.copytree(REPO / "examples" / "support-refund", suite,
                    ignore=shutil.ignore_patterns("__pycache__", "*.db"))  # fmt: skip
    done = CliRunner().invoke(
        app,
        ["run", str(suite), "--config", "v1", "--trials", "1", "--no-judge", "-q",
         "--store", pg_url, "--out", str(tmp_path / "out")],
    )  # fmt: skip
    assert done.exit_code in (0, 1), done.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    run_id = report["run_id"]
    failing = sum(1 for c in report["cases"] if any(t["status"] != "pass" for t in c["trials"]))
    web_app = create_app(Catalog.open([suite], pg_url, reviewer="r"))
    api = TestClient(web_app, base_url="http://127.0.0.1:8471")
    runs = api.get("/api/runs").json()["runs"]
    assert [r["id"] for r in runs] == [run_id] and runs[0]["case_trials_done"] == 86
    grid = api.get(f"/api/runs/{run_id}/grid", params={"show": "failing"}).json()
    assert grid["total_cases"] == failing > 0  # the SQL filter, on PostgreSQL
    found = api.get(f"/api/runs/{run_id}/grid", params={"q": "c023"}).json()
    ids = [row["id"] for row in found["rows"]]
    assert "mt-ask-id-cancel-c023" in ids and len(ids) < 86  # searched in SQL, not all
    for page in (f"/runs/{run_id}", f"/runs/{run_id}/cases/mt-ask-id-cancel-c023/trials/1",
                 "/suites/0"):  # fmt: skip
        assert api.get(page).status_code == 200, page
