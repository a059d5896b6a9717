"""`caseforge export inspect` and `caseforge export table`, on a real run of a small
fictional suite (conftest.py): the Inspect log read back with inspect-ai's own reader, its
sample summaries listed (what Inspect View lists), and the tables read back as pandas'
users would read them (csv, pyarrow)."""

from __future__ import annotations

import csv
import json
import os
import zipfile
from pathlib import Path

import pytest

from tests.interop.conftest import StoredRun
from tests.interop.helpers import cli


def export(run: StoredRun, fmt: str, out: Path, *more: str) -> str:
    done = cli("export", fmt, run.run_id, "--store", run.store, "--out", out, *more)
    assert done.exit_code == 0, done.output
    return done.output


def test_inspect_log_reads_back_with_every_case_trial(
    stored_run: StoredRun, tmp_path: Path
) -> None:
    from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

    out = tmp_path / "rail.eval"
    printed = export(stored_run, "inspect", out)
    assert f"wrote {out}: run {stored_run.run_id}, 8 samples (case-trials)" in printed
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # as shareable as any export
    log = read_eval_log(str(out))
    assert log.status == "success"
    assert log.eval.task == "rail" and log.eval.model == "fictional-1"
    assert log.eval.config.epochs == 2
    assert log.eval.metadata["caseforge"]["config"] == "v1"  # type: ignore[index]
    assert log.eval.metadata["caseforge"]["agent"] == "rail_agent:run"  # type: ignore[index]
    assert log.eval.metadata["caseforge"]["run_id"] == stored_run.run_id  # type: ignore[index]
    samples = {(s.id, s.epoch): s for s in log.samples or []}
    assert set(samples) == {
        (case, trial)
        for case in ("chat-route", "crash", "route-r12", "route-r40")
        for trial in (1, 2)
    }
    # Inspect View lists the samples from the summaries.
    assert "summaries.json" in zipfile.ZipFile(out).namelist()
    summaries = read_eval_log_sample_summaries(str(out))
    assert {(s.id, s.epoch) for s in summaries} == set(samples)
    by_id = {(s.id, s.epoch): s for s in summaries}
    assert by_id[("route-r12", 1)].scores["caseforge"].value == "C"  # type: ignore[index]
    assert by_id[("route-r40", 1)].scores["caseforge"].value == "I"  # type: ignore[index]


def test_inspect_sample_messages_and_scores(stored_run: StoredRun, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    out = tmp_path / "rail.eval"
    export(stored_run, "inspect", out)
    samples = {(s.id, s.epoch): s for s in read_eval_log(str(out)).samples or []}
    r12 = samples[("route-r12", 1)]
    roles = [m.role for m in r12.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "assistant"]
    assert json.loads(r12.messages[0].text) == {"route": "R-12"}
    call = r12.messages[1].tool_calls[0]  # type: ignore[union-attr]
    assert (call.function, call.arguments) == ("timetable", {"route": "R-12"})
    assert json.loads(r12.messages[2].text) == {"first": "08:15"}
    assert r12.messages[3].text == "Route R-12 leaves Lumenport at 08:15."
    assert '"route": "R-12"' in r12.messages[4].text  # the structured output
    assert r12.output.completion == "Route R-12 leaves Lumenport at 08:15."
    assert set(r12.scores or {}) == {"caseforge", "intent", "reply.must_include", "tool_calls"}
    assert r12.scores["intent"].metadata["mode"] == "exact"  # type: ignore[index]
    failed = samples[("route-r40", 2)].scores["reply.must_include"]  # type: ignore[index]
    assert failed.value == "I" and "09:30" in (failed.explanation or "")
    chat = samples[("chat-route", 1)]
    assert [m.text for m in chat.messages if m.role == "user"] == [
        "When does the first train leave?",
        "It's R-12.",
    ]
    crash = samples[("crash", 1)]
    assert crash.error is not None and "timetable service is down" in crash.error.message
    assert crash.metadata["status"] == "error"


def test_inspect_log_results_hold_the_pass_rate(stored_run: StoredRun, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    out = tmp_path / "rail.eval"
    export(stored_run, "inspect", out)
    results = read_eval_log(str(out), header_only=True).results
    assert results is not None and results.total_samples == 8
    trial = next(s for s in results.scores if s.name == "caseforge")
    assert trial.metrics["accuracy"].value == pytest.approx(stored_run.report.summary.pass_rate)


def test_table_csv_one_row_per_case_trial(stored_run: StoredRun, tmp_path: Path) -> None:
    out = tmp_path / "rail.csv"
    assert "8 rows (case-trials)" in export(stored_run, "table", out)
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert len(rows) == 8
    row = next(r for r in rows if r["case_id"] == "route-r12" and r["trial"] == "1")
    assert row["status"] == "pass" and row["config"] == "v1" and row["tags"] == "timetable"
    assert row["checks_passed"] == "3" and row["checks_failed"] == "0"
    assert json.loads(row["output"]) == {"intent": "timetable", "route": "R-12"}
    assert json.loads(row["tool_calls"])[0]["name"] == "timetable"
    crash = next(r for r in rows if r["case_id"] == "crash")
    assert crash["status"] == "error" and "timetable service is down" in crash["error"]


def test_table_checks_and_parquet(stored_run: StoredRun, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "checks.parquet"
    assert "rows (checks)" in export(stored_run, "table", out, "--checks")
    table = pq.read_table(out)
    rows = table.to_pylist()
    expected = sum(len(t.checks) for c in stored_run.report.cases for t in c.trials)
    assert len(rows) == expected
    assert str(table.schema.field("trial").type) == "int64"
    failing = [r for r in rows if r["case_id"] == "route-r40"]
    assert {r["status"] for r in failing} == {"fail"} and failing[0][
        "check"
    ] == "reply.must_include"
    trials = pq.read_table(export_path(stored_run, tmp_path / "trials.parquet")).to_pylist()
    assert len(trials) == 8 and isinstance(trials[0]["latency_s"], float)


def export_path(run: StoredRun, out: Path) -> Path:
    export(run, "table", out)
    return out


def test_export_mistakes(stored_run: StoredRun, tmp_path: Path) -> None:
    done = cli("export", "table", stored_run.run_id, "--store", stored_run.store,
               "--out", tmp_path / "rail.xlsx")  # fmt: skip
    assert done.exit_code == 2 and "a .csv or a .parquet file" in done.output
    done = cli("export", "inspect", stored_run.run_id, "--store", stored_run.store,
               "--out", tmp_path / "rail.txt")  # fmt: skip
    assert done.exit_code == 2 and ".eval" in done.output
    done = cli("export", "inspect", "no-such-run", "--store", stored_run.store,
               "--out", tmp_path / "rail.eval")  # fmt: skip
    assert done.exit_code == 2 and not (tmp_path / "rail.eval").exists()
    (tmp_path / "folder.csv").mkdir()
    done = cli("export", "table", stored_run.run_id, "--store", stored_run.store,
               "--out", tmp_path / "folder.csv")  # fmt: skip
    assert done.exit_code == 2 and "is a folder" in done.output


def test_a_missing_extra_names_it(
    stored_run: StoredRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    done = cli("export", "table", stored_run.run_id, "--store", stored_run.store,
               "--out", tmp_path / "t.parquet")  # fmt: skip
    assert done.exit_code == 5
    assert "pip install 'caseforge[tables]'" in done.output
    done = cli("export", "inspect", stored_run.run_id, "--store", stored_run.store,
               "--out", tmp_path / "t.eval")  # fmt: skip
    assert done.exit_code == 5 and "pip install 'caseforge[inspect]'" in done.output
    assert not (tmp_path / "t.parquet").exists() and not (tmp_path / "t.eval").exists()


def test_a_case_imported_from_inspect_is_the_sample_of_its_original_id(tmp_path: Path) -> None:
    """A case `import inspect` made keeps its sample's id in ``provenance``: the exported log
    uses it (a team joins it with its other Inspect logs), the case id in the metadata; an
    original id two cases share, or one another case's id already is, stays the case id."""
    from inspect_ai.log import read_eval_log

    from caseforge.api import run_suite
    from tests.helpers import write_toy_suite

    def imported(original: object) -> dict[str, object]:
        mark = {"format": "inspect", "source": "qa.jsonl", "id": original, "where": "line 1"}
        return {"imported_from": mark}

    suite = write_toy_suite(
        tmp_path / "suite",
        [
            {"id": "qa-q-1", "input": {}, "provenance": imported("Q_1")},
            {"id": "qa-7", "input": {}, "provenance": imported(7)},
            {"id": "b-7", "input": {}, "provenance": imported(7)},  # 7 twice: not used
            {"id": "mine", "input": {}, "provenance": {"imported_from": {"format": "csv"}}},
        ],
        {"name": "qa", "agent": {"callable": "tests.run.toy_agent:run"}, "trials": 1},
        expect={"reply": {"mode": "ignore", "reason": "only the ids matter here"}},
    )
    store = f"sqlite:///{tmp_path / 's.db'}"
    [report] = run_suite(suite, store=store)
    out = tmp_path / "qa.eval"
    done = cli("export", "inspect", report.run_id, "--store", store, "--out", str(out))
    assert done.exit_code == 0, done.output
    log = read_eval_log(str(out))
    by_case = {s.metadata["case_id"]: s.id for s in log.samples or []}
    assert by_case == {"qa-q-1": "Q_1", "qa-7": "qa-7", "b-7": "b-7", "mine": "mine"}
    assert sorted(map(str, log.eval.dataset.sample_ids or [])) == ["Q_1", "b-7", "mine", "qa-7"]


def test_a_csv_cell_a_spreadsheet_would_run_as_a_formula_is_written_as_text(
    stored_run: StoredRun, tmp_path: Path
) -> None:
    from caseforge.interop.table_export import export_table

    report = stored_run.report.model_copy(deep=True)
    trials = [t for c in report.cases for t in c.trials]
    replies = ['=HYPERLINK("http://example.invalid","x")', "+1+1", "@SUM(A1)", "-2+3",
               "- a list item", "-", "plain", "\ttab"]  # fmt: skip
    for trial, reply in zip(trials, replies, strict=True):
        trial.reply = reply
    out = tmp_path / "run.csv"
    export_table(report, out)
    written = [r["reply"] for r in csv.DictReader(out.read_text(encoding="utf-8").splitlines())]
    assert written == ["'" + r for r in replies[:4]] + ["- a list item", "'-", "plain", "'\ttab"]
    # Parquet keeps the text as it is.
    import pyarrow.parquet as pq

    export_table(report, tmp_path / "run.parquet")
    assert [r["reply"] for r in pq.read_table(tmp_path / "run.parquet").to_pylist()] == replies
