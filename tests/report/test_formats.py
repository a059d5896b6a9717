"""report.json keys (docs/reference/report.md), and the text, Markdown, JUnit and HTML
renderings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.report.build import SCHEMA_VERSION, build_report
from caseforge.report.model import RunReport, schema_text
from caseforge.report.render import to_html, to_json, to_junit, to_markdown, to_text
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite

SCRIPT = "<script>alert('x')</script>"


@pytest.fixture
def report(toy_suite: MakeToySuite, store: RunStore) -> RunReport:
    root = toy_suite(
        [
            {"id": "good", "input": {"ticket": "hello"}},
            {"id": "evil", "input": {"ticket": SCRIPT, "want": SCRIPT}},
            {"id": "broken", "input": {"behaviour": "crash"}},
        ],
        trials=2,
    )
    outcome = asyncio.run(Runner(RunOptions(suite_dir=root), store).run())
    return build_report(store, outcome.runs[0].run_id)


def test_json_keys_match_the_design(report: RunReport) -> None:
    report = json.loads(to_json(report))  # the contract is the JSON document
    for key in ("run_id", "suite", "dataset_commit", "dataset_dirty", "agent", "config", "trials"):
        assert key in report
    assert report["schema_version"] == SCHEMA_VERSION
    summary = report["summary"]
    assert isinstance(summary, dict)
    for key in (
        "cases",
        "pass_rate",
        "pass_rate_ci",
        "pass_rate_se",
        "pass_hat_k",
        "pass_at_k",
        "errors",
        "cost_usd",
        "cost_per_run",
        "latency_p50_s",
        "latency_p95_s",
        "items",
        "false_positive_rate",
    ):
        assert key in summary, key
    assert summary["cases"] == 3 and summary["errors"] == 2
    assert set(summary["pass_hat_k"]) == {"1", "2"}
    checks = report["checks"]
    assert isinstance(checks, dict) and set(checks["category"]) >= {"pass", "fail", "error"}
    cases = {c["id"]: c for c in report["cases"]}  # type: ignore[union-attr]
    assert [t["status"] for t in cases["good"]["trials"]] == ["pass", "pass"]
    assert cases["evil"]["trials"][0]["checks"][0]["actual"] == SCRIPT
    assert RunReport.model_validate(report) is not None  # and it reads back


def test_report_json_round_trips_through_the_typed_model(report: RunReport) -> None:
    again = RunReport.model_validate_json(to_json(report))
    assert again == report
    assert to_json(again) == to_json(report)


def test_html_escapes_user_strings_and_is_self_contained(report: RunReport) -> None:
    page = to_html(report)
    assert SCRIPT not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "<script" not in page and "http://" not in page and "https://" not in page


def test_junit_has_one_testcase_per_case(report: RunReport) -> None:
    root = ET.fromstring(to_junit(report))
    suite = root.find("testsuite")
    assert suite is not None
    cases = {tc.get("name"): tc for tc in suite.findall("testcase")}
    assert set(cases) == {"good", "evil", "broken"}
    assert cases["good"].find("failure") is None and cases["good"].find("error") is None
    assert cases["evil"].find("failure") is not None
    assert cases["broken"].find("error") is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")


def test_markdown_and_text(report: RunReport) -> None:
    md = to_markdown(report)
    assert md.startswith("### caseforge: toy") and "| pass rate |" in md
    assert SCRIPT not in md and "4 case-trials not passing" in md
    text = to_text(report)
    assert "pass rate" in text and "evil #1" in text and "broken #1" in text


def test_cli_run_out_and_report_formats(toy_suite: MakeToySuite, tmp_path: Path) -> None:
    root = toy_suite([{"id": "good", "input": {}}])
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(root), "--store", url, "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("run ")
    run_id = first.split()[1]
    saved = json.loads((tmp_path / "o" / "report.json").read_text())
    assert saved["run_id"] == run_id
    for fmt in ("text", "json", "md", "junit", "html"):
        out = runner.invoke(app, ["report", run_id, "--format", fmt, "--store", url])
        assert out.exit_code == 0 and out.stdout.strip(), fmt
    from_file = runner.invoke(
        app, ["report", str(tmp_path / "o" / "report.json"), "--format", "md"]
    )
    assert from_file.exit_code == 0 and "caseforge: toy" in from_file.stdout
    listed = runner.invoke(app, ["runs", "--store", url])
    assert listed.exit_code == 0 and run_id in listed.stdout and "finished" in listed.stdout
    bad = runner.invoke(app, ["report", "nope", "--store", url])
    assert bad.exit_code == 2 and "no run 'nope'" in bad.output


def test_report_validates_against_the_shipped_schema(report: RunReport) -> None:
    import jsonschema

    from caseforge.report.build import report_schema

    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads(to_json(report)), schema)
    broken = json.loads(to_json(report))
    broken["summary"]["pass_rate"] = 1.5
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_the_shipped_schema_is_the_one_generated_from_the_model() -> None:
    shipped = Path(__file__).parents[2] / "src" / "caseforge" / "report" / "report.schema.json"
    assert shipped.read_text(encoding="utf-8") == schema_text(), (
        "report.schema.json is stale: run `make schema`"
    )


def test_a_report_file_with_a_wrong_field_is_a_one_line_error(
    report: RunReport, tmp_path: Path
) -> None:
    from caseforge.errors import CaseforgeError
    from caseforge.report.build import load_report

    data = json.loads(to_json(report))
    data["cases"][0]["trials"][0]["status"] = "sort of"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CaseforgeError) as raised:
        load_report(str(path))
    message = str(raised.value)
    assert message.startswith(f"{path}: not a valid caseforge report: cases.0.trials.0.status")
    assert "\n" not in message
    data["schema_version"] = 3
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CaseforgeError, match="schema_version 3"):
        load_report(str(path))
