"""Every screen on each of the three example suites, after a real run of each."""

from __future__ import annotations

import json
import shutil

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from caseforge.cli import app as cli
from caseforge.serve import Catalog, create_app
from tests.serve.conftest import REPO

runner = CliRunner()
EXAMPLES = ["support-refund", "ac-clarifier", "test-agent"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("examples")
    store = f"sqlite:///{tmp / 'store.db'}"
    suites, runs = [], {}
    for name in EXAMPLES:
        suite = tmp / name
        shutil.copytree(REPO / "examples" / name, suite, ignore=shutil.ignore_patterns("*.db"))
        out = tmp / f"{name}-out"
        done = runner.invoke(
            cli,
            ["run", str(suite), "--trials", "1", "--no-judge", "-q", "--store", store,
             "--out", str(out)],
        )  # fmt: skip
        assert done.exit_code in (0, 1), done.output  # 1: the example's gate-worthy failures
        runs[name] = json.loads((out / "report.json").read_text())["run_id"]
        suites.append(suite)
    catalog = Catalog.open(suites, store, reviewer="example-reviewer")
    return TestClient(create_app(catalog), base_url="http://127.0.0.1:8471"), runs


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_every_screen_opens_on_each_example(
    served: tuple[TestClient, dict[str, str]], index: int
) -> None:
    web, runs = served
    name = EXAMPLES[index]
    run = runs[name]
    assert run in web.get("/").text
    screen = web.get(f"/runs/{run}")
    assert screen.status_code == 200 and "Cases × trials" in screen.text
    grid = web.get(f"/api/runs/{run}/grid").json()
    first = grid["rows"][0]["id"]
    trial = web.get(f"/runs/{run}/cases/{first}/trials/1")
    assert trial.status_code == 200 and f"cases/{first}.yaml" in trial.text
    suite = web.get(f"/suites/{index}")
    assert suite.status_code == 200 and name in suite.text
    web.get(f"/api/suites/{index}")  # starts its validation, in the background
    assert web.app.state.catalog.suite_index(index).wait(120)  # type: ignore[attr-defined]
    validated = web.get(f"/api/suites/{index}").json()
    assert validated["validation"]["state"] == "done"
    assert validated["errors"] == []  # each example is valid
    review = web.get(f"/suites/{index}/review")
    assert review.status_code == 200
    queue = web.get(f"/api/suites/{index}/review").json()["counts"]["drafts"]
    assert (queue == 12) == (name == "support-refund")  # the one with a recorded queue
    if not queue:
        assert "No drafts yet" in review.text
    calibration = web.get(f"/api/suites/{index}/calibration").json()
    assert calibration["state"] == ("ready" if name == "support-refund" else "no_labels")
    assert web.get(f"/suites/{index}/calibration").status_code == 200
    assert web.get(f"/runs/{run}/label").status_code == 200
    compare = web.get("/compare", params={"a": run, "b": run})
    assert compare.status_code == 200 and "Newly failing (0)" in compare.text
