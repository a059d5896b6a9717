"""`caseforge show`: one case-trial whole, by default the first that did not pass; the
agent's own traceback is kept in the store and shown in full."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from caseforge.cli import app
from tests.conftest import MakeToySuite

runner = CliRunner()


def test_show_prints_the_first_failing_trial_with_its_traceback(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    cases = [
        {"id": "a-ok", "input": {"want": "refund"}},
        {"id": "b-crash", "input": {"behaviour": "crash", "ticket": "first line\nsecond line"}},
    ]
    root = toy_suite(cases, trials=2)
    store = ["--store", f"sqlite:///{tmp_path / 's.db'}"]
    ran = runner.invoke(app, ["run", str(root), "-q", *store, "--max-error-rate", "1"])
    assert ran.exit_code == 0, ran.output

    shown = runner.invoke(app, ["show", "latest", *store])
    assert shown.exit_code == 0, shown.output
    first = shown.output.splitlines()[0]
    assert first.startswith("b-crash #1 · error · run ")
    assert "RuntimeError: the agent fell over" in shown.output
    assert "  ticket:\n    first line\n    second line" in shown.output  # text stays text
    assert 'toy_agent.py", line' in shown.output  # the agent's own frame, not just its message

    passing = runner.invoke(app, ["show", "latest", "a-ok", "--trial", "2", "--json", *store])
    view = json.loads(passing.output)
    assert (view["case_id"], view["trial"], view["status"]) == ("a-ok", 2, "pass")
    assert view["output"]["category"] == "refund" and view["input"] == {"want": "refund"}
    assert [c["name"] for c in view["checks"]] == ["category"]

    report = json.loads(runner.invoke(app, ["report", "latest", "--format", "json", *store]).output)
    crash = next(c for c in report["cases"] if c["id"] == "b-crash")
    text = runner.invoke(app, ["report", "latest", *store]).output
    assert "b-crash #1: RuntimeError: the agent fell over" in text  # one line in the summary
    assert "Traceback" in crash["trials"][0]["error"]

    missing = runner.invoke(app, ["show", "latest", "nope", *store])
    assert missing.exit_code == 2 and "has no stored result for case 'nope'" in missing.output


def test_an_unfinished_run_says_so_in_every_format(toy_suite: MakeToySuite, tmp_path: Path) -> None:
    from caseforge.store.db import RunStore

    root = toy_suite([{"id": f"c{i}", "input": {}} for i in range(4)], trials=2)
    url = f"sqlite:///{tmp_path / 's.db'}"
    runner.invoke(app, ["run", str(root), "-q", "--store", url])
    store = RunStore(url)
    [run] = store.list_runs()
    with store.engine.begin() as conn:  # as a kill -9 leaves it: some rows, still running
        from sqlalchemy import text

        conn.execute(text("DELETE FROM results WHERE case_id = 'c3'"))
    store.set_status(run.id, "stopped")
    for fmt in ("text", "md", "html", "junit"):
        out = runner.invoke(app, ["report", run.id, "--format", fmt, "--store", url]).output
        assert "UNFINISHED" in out, fmt
        assert f"--resume {run.id}" in out, fmt
    text_out = runner.invoke(app, ["report", run.id, "--store", url]).output
    assert "4 × 2 = 8, 6 stored" in text_out


def test_show_lists_the_fixtures_a_trial_replayed_recorded_and_missed(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    cases = [
        {"id": "w", "input": {"behaviour": "external", "city": "Huế"}},
        {"id": "x", "input": {"want": "refund"}},  # no request through the fixtures
    ]
    root = toy_suite(cases)
    store = ["--store", f"sqlite:///{tmp_path / 's.db'}"]
    recorded = runner.invoke(app, ["run", str(root), "-q", *store, "--fixtures", "record"])
    assert recorded.exit_code == 0, recorded.output
    view = json.loads(runner.invoke(app, ["show", "latest", "w", "--json", *store]).output)
    assert view["fixtures"]["mode"] == "record"
    assert view["fixtures"]["recorded"] == ['weather {"city": "Huế"} (call #1)']
    plain = json.loads(runner.invoke(app, ["show", "latest", "x", "--json", *store]).output)
    assert plain["fixtures"] is None

    replayed = runner.invoke(app, ["run", str(root), "-q", *store])  # replay: recordings exist
    assert replayed.exit_code == 0, replayed.output
    shown = runner.invoke(app, ["show", "latest", "w", *store]).output
    assert "fixtures (replay): 1 replayed" in shown
    assert '  replayed: weather {"city": "Huế"} (call #1)' in shown

    case_file = root / "cases" / "w.yaml"
    case_file.write_text(case_file.read_text().replace("Huế", "Hà Nội"), encoding="utf-8")
    missed = runner.invoke(app, ["run", str(root), "-q", *store, "--max-error-rate", "1"])
    assert missed.exit_code == 0, missed.output
    shown = runner.invoke(app, ["show", "latest", *store]).output
    assert "fixtures (replay): 1 missing" in shown
    assert "  missing: case w: no recorded response for weather" in shown


def test_report_json_carries_tool_call_arguments_and_the_raw_output_on_request(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    root = toy_suite([{"id": "t", "input": {"behaviour": "tools"}}])
    store = ["--store", f"sqlite:///{tmp_path / 's.db'}"]
    out = tmp_path / "out"
    ran = runner.invoke(app, ["run", str(root), "-q", *store, "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    (trial,) = json.loads((out / "report.json").read_text())["cases"][0]["trials"]
    assert trial["tool_calls"] == [{"name": "get_invoice", "args": {"id": "INV-7"}, "result": None}]
    assert trial["output"] is None

    raw = runner.invoke(app, ["report", "latest", "--format", "json", "--raw", *store])
    (trial,) = json.loads(raw.output)["cases"][0]["trials"]
    assert trial["tool_calls"][0]["result"] == {"amount": 12.5}
    assert trial["output"] == {"category": "refund", "flags": []}

    ran = runner.invoke(app, ["run", str(root), "-q", *store, "--out", str(out), "--raw"])
    (trial,) = json.loads((out / "report.json").read_text())["cases"][0]["trials"]
    assert trial["output"] == {"category": "refund", "flags": []}


def test_an_answer_that_breaks_the_protocol_shows_one_line_not_caseforges_traceback(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    root = toy_suite([{"id": "n", "input": {"behaviour": "not_a_dict"}}])
    store = ["--store", f"sqlite:///{tmp_path / 's.db'}"]
    runner.invoke(app, ["run", str(root), "-q", *store, "--max-error-rate", "1"])
    view = json.loads(runner.invoke(app, ["show", "latest", "--json", *store]).output)
    assert view["status"] == "error" and "Traceback" not in view["error"]
    assert "\n" not in view["error"] and view["error"]
