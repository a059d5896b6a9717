"""The review queue shipped with support-refund is rebuilt offline from its recordings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.synth.writer import load_queue

SUPPORT = Path(__file__).resolve().parents[2] / "examples" / "support-refund"
runner = CliRunner()


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CASEFORGE_MODEL"):
        monkeypatch.delenv(name, raising=False)  # offline: nothing to call but the recordings
    root = tmp_path / "support-refund"
    shutil.copytree(SUPPORT, root, ignore=shutil.ignore_patterns(".caseforge", "__pycache__"))
    return root


def test_replay_rebuilds_the_shipped_queue(suite: Path) -> None:
    shipped = load_queue(suite)
    assert len(shipped) == 12 and all(d.status == "pending" for d in shipped)
    (suite / "synth" / "queue.jsonl").unlink()
    result = runner.invoke(app, ["synth", "write", str(suite)])
    assert result.exit_code == 0, result.output
    assert "wrote 12 drafts (replayed, nothing spent)" in result.stdout
    assert "1 flagged as near-duplicates" in result.stdout
    rebuilt = load_queue(suite)
    assert [(d.tuple_id, d.text, d.expect) for d in rebuilt] == [
        (d.tuple_id, d.text, d.expect) for d in shipped
    ]
    assert [d.near_duplicates for d in rebuilt] == [d.near_duplicates for d in shipped]
    assert rebuilt[11].near_duplicates == ["syn-export-error-038"]
    assert all(d.model == "gpt-4.1-mini" for d in rebuilt)


def test_a_tuple_without_a_recording_is_one_line_naming_record(suite: Path) -> None:
    (suite / "synth" / "queue.jsonl").unlink()
    tuples = suite / "synth" / "tuples.jsonl"
    rows = [json.loads(line) for line in tuples.read_text(encoding="utf-8").splitlines()]
    rows[3]["tuple_id"] = "t7-099"  # another seed, so a request never recorded
    tuples.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    result = runner.invoke(app, ["synth", "write", str(suite)])
    assert result.exit_code == 1
    assert "no recorded response" in result.output
    assert "caseforge synth write --record" in result.output
    assert "Traceback" not in result.output
    assert not (suite / "synth" / "queue.jsonl").exists()  # nothing half-written


def test_record_and_live_exclude_each_other(suite: Path) -> None:
    result = runner.invoke(app, ["synth", "write", str(suite), "--record", "--live"])
    assert result.exit_code == 2 and "exclude each other" in result.output


def test_live_without_a_model_says_what_to_set(suite: Path) -> None:
    result = runner.invoke(app, ["synth", "write", str(suite), "--live"])
    assert result.exit_code == 5
    assert "synth write needs a model: set OPENAI_API_KEY" in result.output
