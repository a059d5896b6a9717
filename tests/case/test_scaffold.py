"""`caseforge init`: a starter suite that runs as is, and copies of the shipped examples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.case.scaffold import example_names, init_suite
from caseforge.case.validate import validate_suite
from caseforge.cli import app
from caseforge.errors import EnvError

runner = CliRunner()


def test_the_starter_runs_passing_one_case_and_failing_one_with_its_reason(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "My Agent Evals"
    made = runner.invoke(app, ["init", str(suite)])
    assert made.exit_code == 0, made.output
    assert "named 'my-agent-evals'" in made.output
    assert "name: my-agent-evals\n" in (suite / "caseforge.yaml").read_text(encoding="utf-8")
    report = validate_suite(suite)
    assert report.errors == [] and report.warnings == [] and report.cases == 2
    assert report.oracle_checks == 1

    store = f"sqlite:///{tmp_path / 'store.db'}"
    done = runner.invoke(app, ["run", str(suite), "--store", store, "--out", str(tmp_path / "o")])
    assert done.exit_code == 0, done.output
    data = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    outcome = {c["id"]: {t["status"] for t in c["trials"]} for c in data["cases"]}
    assert outcome == {"refund-yearly": {"pass"}, "order-status": {"fail"}}
    assert 'order-status #1: reply.must_include: does not include ["ORD-1042"]' in done.output

    shown = runner.invoke(app, ["show", "latest", "--store", store])
    assert shown.exit_code == 0, shown.output
    assert "[fail] reply.must_include (must_include)" in shown.output


def test_the_starter_writes_its_gitignore_and_pin_test(tmp_path: Path) -> None:
    init_suite(tmp_path / "s")
    ignored = (tmp_path / "s" / ".gitignore").read_text(encoding="utf-8").split()
    assert ".caseforge/" in ignored and "__pycache__/" in ignored
    assert (tmp_path / "s" / "tests" / "test_pins.py").is_file()
    config = (tmp_path / "s" / "caseforge.yaml").read_text(encoding="utf-8")
    assert config.count("\n#") >= 5, "the config explains itself in comments"


@pytest.mark.parametrize("example", ["ac-clarifier", "support-refund", "test-agent"])
def test_every_shipped_example_is_copied_whole_and_valid(tmp_path: Path, example: str) -> None:
    done = init_suite(tmp_path / example, example)
    assert done.name == example
    assert not list((tmp_path / example).rglob("__pycache__"))
    assert not list((tmp_path / example).rglob("*.db")), "built databases are not copied"
    report = validate_suite(tmp_path / example)
    assert report.errors == [], [p.format() for p in report.errors]


def test_the_examples_on_offer_are_the_shipped_suites() -> None:
    assert example_names() == [
        "ac-clarifier", "langgraph-orders", "starter", "support-refund", "test-agent"
    ]  # fmt: skip


def test_init_into_an_empty_folder_works(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert init_suite(tmp_path / "empty").files == 7


def test_a_failed_init_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = shutil.copy
    copied: list[str] = []

    def copy_then_fail(src: str, dst: str, **kw: object) -> object:
        if copied:
            raise OSError(28, "No space left on device", dst)
        copied.append(src)
        return real(src, dst)

    monkeypatch.setattr(shutil, "copy", copy_then_fail)
    with pytest.raises(EnvError, match="No space left on device"):
        init_suite(tmp_path / "new")
    assert copied, "the failure came after a file was written"
    assert list(tmp_path.iterdir()) == []
