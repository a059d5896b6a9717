"""`caseforge audit` on a real git history: a loosening without a reason fails, with one passes."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from caseforge.cli import app
from tests.gitrepo import git

runner = CliRunner()
CASE = """id: c1
input: {card: "AC1 優惠碼只能用一次"}
expect:
  ac_flags: {mode: %s, values: ["3:conflict", "3:mismatch"]}
"""


def test_audit_cli_flags_a_loosening_until_it_carries_a_reason(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    suite = repo / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: audited\n")
    git(repo, "init", "-q")
    (suite / "cases" / "c1.yaml").write_text(CASE % "exact_set", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "add c1")
    (suite / "cases" / "c1.yaml").write_text(CASE % "must_include", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "relax c1")
    (tmp_path / "no-store").mkdir()
    private = ["--private", str(tmp_path / "no-store")]
    failed = runner.invoke(app, ["audit", str(suite), *private])
    assert failed.exit_code == 1
    assert "loosened c1.ac_flags (mode-weakened)" in failed.output
    assert '"exact_set" → "must_include"' in failed.output
    git(
        repo,
        "commit",
        "-q",
        "--amend",
        "-m",
        "relax c1\n\nCriteria-change: the flags are graded by the judge now",
    )
    passed = runner.invoke(app, ["audit", str(suite), *private])
    assert passed.exit_code == 0, passed.output
    assert "0 loosening(s) without a Criteria-change reason, 1 with one" in passed.output
