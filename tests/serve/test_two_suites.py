"""Two suites served at once, each with its own `baseline.json`: the compare page gates a
run against the baseline of the run's own suite, names it, and refuses another suite's, as
`caseforge gate` does. The other suite (the starter, served first so that its file is the
one a search through every served suite would find) has its own store; support-refund is
the shared world's."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from caseforge.cli import app as cli
from caseforge.serve import Catalog, create_app
from tests.serve.conftest import Served

runner = CliRunner()


@dataclass
class Two:
    web: TestClient
    refund: Path  # support-refund, the world's
    starter: Path
    starter_store: str
    starter_runs: list[str]


@pytest.fixture(scope="module")
def two(world: Served, tmp_path_factory: pytest.TempPathFactory) -> Two:
    tmp = tmp_path_factory.mktemp("two-suites")
    starter = tmp / "starter"
    made = runner.invoke(cli, ["init", str(starter)])
    assert made.exit_code == 0, made.output
    store = f"sqlite:///{tmp / 'starter.db'}"
    runs = []
    for n in range(2):
        out = tmp / f"out{n}"
        done = runner.invoke(
            cli, ["run", str(starter), "-q", "--trials", "1", "--store", store, "--out", str(out)]
        )
        assert done.exit_code == 0, done.output
        runs.append(json.loads((out / "report.json").read_text())["run_id"])
    wrote = runner.invoke(
        cli,
        ["baseline", str(tmp / "out0" / "report.json"), "--write", str(starter / "baseline.json")],
    )
    assert wrote.exit_code == 0, wrote.output
    shutil.copy(starter / "baseline.json", starter / "only-here.json")
    refund = world.suites["support-refund"].resolve()
    shutil.copy(refund / "baseline.json", starter / "foreign.json")  # another suite's, copied in
    catalog = Catalog(
        store_urls=[store, world.store], suites=[starter.resolve(), refund], reviewer="x"
    )
    web = TestClient(create_app(catalog), base_url="http://127.0.0.1:8471")
    return Two(web, refund, starter.resolve(), store, runs)


def test_a_run_is_gated_against_its_own_suite_s_baseline(two: Two, world: Served) -> None:
    v2, v1 = world.runs["v2"], world.runs["v1"]
    query = {"a": v2, "b": v1, "baseline": "baseline.json"}
    page = two.web.get("/api/compare", params=query).json()
    assert page["gate_error"] is None
    assert page["gate"]["baseline_run_id"] == v2  # support-refund's baseline, not the starter's
    assert page["gate"]["verdict"] == "regression"
    assert page["baseline_file"] == str(two.refund / "baseline.json")
    html = two.web.get("/compare", params=query).text
    assert "gate: regression" in html
    assert (
        f'<span class="mono">{two.refund / "baseline.json"}</span> (run <span class="mono">{v2}'
        in html
    )
    assert html.count('<option value="baseline.json"') == 1  # B's suite's files, each once
    assert '<option value="only-here.json"' not in html

    first, second = two.starter_runs
    query = {"a": first, "b": second, "baseline": "baseline.json"}
    page = two.web.get("/api/compare", params=query).json()
    assert page["gate_error"] is None and page["gate"]["baseline_run_id"] == first
    assert page["baseline_file"] == str(two.starter / "baseline.json")


def test_a_baseline_file_only_another_suite_has_is_refused(two: Two, world: Served) -> None:
    query = {"a": world.runs["v2"], "b": world.runs["v1"], "baseline": "only-here.json"}
    refused = two.web.get("/api/compare", params=query)
    assert refused.status_code == 400
    assert "'only-here.json' is not a baseline file in suite 'support-refund'" in refused.text
    page = two.web.get("/compare", params=query)
    assert page.status_code == 400 and "is not a baseline file in suite" in page.text


def test_another_suite_s_baseline_copied_into_the_suite_is_refused_like_the_cli(
    two: Two,
) -> None:
    first, second = two.starter_runs
    cli_gate = runner.invoke(
        cli,
        ["gate", second, "--baseline", str(two.starter / "foreign.json"),
         "--store", two.starter_store],
    )  # fmt: skip
    assert cli_gate.exit_code == 2 and "they are different suites" in cli_gate.output
    query = {"a": first, "b": second, "baseline": "foreign.json"}
    page = two.web.get("/api/compare", params=query).json()
    assert page["gate"] is None and "they are different suites" in page["gate_error"]
    assert page["baseline_file"] == str(two.starter / "foreign.json")
    html = two.web.get("/compare", params=query).text
    assert "they are different suites" in html and "gate: " not in html


def test_the_same_suite_checked_out_elsewhere_gives_the_baseline(
    world: Served, tmp_path: Path
) -> None:
    """A shared store holds runs made in other folders (a CI runner's): the run's suite is
    the served suite with its identity."""
    elsewhere = tmp_path / "support-refund"
    shutil.copytree(world.suites["support-refund"], elsewhere)
    catalog = Catalog.open([elsewhere], world.store, reviewer="x")
    web = TestClient(create_app(catalog), base_url="http://127.0.0.1:8471")
    query = {"a": world.runs["v2"], "b": world.runs["v1"], "baseline": "baseline.json"}
    page = web.get("/api/compare", params=query).json()
    assert page["baseline_file"] == str((elsewhere / "baseline.json").resolve())
    assert page["gate"]["verdict"] == "regression"
    query["b"] = world.runs["xss"]  # the starter is not served here
    query["a"] = world.runs["xss"]
    refused = web.get("/api/compare", params=query)
    assert refused.status_code == 400 and "which is not served" in refused.text
