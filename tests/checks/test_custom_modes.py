"""A check mode of the user's own, end to end: declared in the suite's ``checks.py``, it
validates cases, grades a run, shows in every report format, is in the suite's JSON schema,
and the criteria audit knows its strength and how its options loosen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.checks import BUILTIN_MODES, failed, passed
from caseforge.checks.custom import load_checks_file, mode_table
from caseforge.cli import app
from caseforge.errors import CaseforgeError
from tests.gitrepo import git
from tests.helpers import write_toy_suite

runner = CliRunner()

CHECKS = '''
from typing import Literal

from caseforge import CheckMode, OptionOrder, Verdict, failed, passed


class StartsWith(CheckMode):
    """The field is a string starting with ``prefix``."""

    strength = 55
    options = {"ignore_case": OptionOrder("true")}

    mode: Literal["starts_with"]
    prefix: str
    ignore_case: bool = False

    def grade(self, actual: object) -> Verdict:
        if not isinstance(actual, str):
            return failed(f"expected a string, got {actual!r}")
        text, prefix = actual, self.prefix
        if self.ignore_case:
            text, prefix = text.lower(), prefix.lower()
        if text.startswith(prefix):
            return passed()
        return failed(f"{actual!r} does not start with {self.prefix!r}")


class Explodes(CheckMode):
    strength = 40
    mode: Literal["explodes"]

    def grade(self, actual: object) -> Verdict:
        raise ValueError("the grader itself is broken")
'''


def write_suite(root: Path, cases: dict[str, dict[str, object]], checks: str = CHECKS) -> Path:
    config = {
        "name": "custom",
        "checks": "checks.py",
        "agent": {"callable": "tests.run.toy_agent:run"},
        "trials": 1,
        "configs": {"default": {"fail": ["wrong"]}},
    }
    written = [
        {"id": case_id, "input": {"ticket": "退款"}, "expect": expect}
        for case_id, expect in cases.items()
    ]
    return write_toy_suite(root, written, config, files={"checks.py": checks})


CASES: dict[str, dict[str, object]] = {
    "right": {"category": {"mode": "starts_with", "prefix": "ref"}},
    "wrong": {"category": {"mode": "starts_with", "prefix": "ref"}},
    "broken": {"category": {"mode": "explodes"}},
}


def test_a_custom_mode_validates_runs_grades_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_suite(tmp_path / "suite", CASES)
    monkeypatch.setenv("CASEFORGE_STORE", f"sqlite:///{tmp_path / 'store.db'}")

    valid = runner.invoke(app, ["validate", str(suite)])
    assert valid.exit_code == 0, valid.output

    ran = runner.invoke(app, ["run", str(suite), "--quiet", "--out", str(tmp_path / "out")])
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    cases = {case["id"]: case for case in report["cases"]}
    checks = {cid: cases[cid]["trials"][0]["checks"][0] for cid in cases}
    assert checks["right"]["status"] == "pass"
    assert checks["wrong"]["status"] == "fail"
    assert checks["wrong"]["reason"] == "'other' does not start with 'ref'"
    assert checks["broken"]["status"] == "error"
    assert "the grader itself is broken" in checks["broken"]["reason"]
    assert ran.exit_code in (0, 1), ran.output

    rendered = {
        fmt: runner.invoke(app, ["report", "latest", "--format", fmt]).output
        for fmt in ("text", "md", "junit", "html")
    }
    for fmt, text in rendered.items():
        assert "does not start with" in text, fmt
    assert "starts_with" in rendered["html"]
    assert "prefix" in rendered["html"]  # the expectation, as the mode's own fields
    stored = json.loads(runner.invoke(app, ["report", "latest", "--format", "json"]).output)
    assert stored["cases"] == report["cases"]


def test_the_suite_schema_names_the_custom_mode(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", CASES)
    out = runner.invoke(app, ["schema", "--suite", str(suite)])
    assert out.exit_code == 0, out.output
    schema = json.loads(out.output)
    assert "StartsWith" in json.dumps(schema)
    assert "starts_with" in json.dumps(schema)
    plain = json.loads(runner.invoke(app, ["schema"]).output)
    assert "starts_with" not in json.dumps(plain)


def test_a_case_that_misuses_a_custom_mode_is_one_line_naming_file_line_and_field(
    tmp_path: Path,
) -> None:
    suite = write_suite(
        tmp_path / "suite",
        {"a": {"category": {"mode": "starts_with", "prefx": "ref"}}},
    )
    out = runner.invoke(app, ["validate", str(suite)])
    assert out.exit_code == 1
    assert "a.yaml:1" in out.output
    assert "expect.category" in out.output
    assert "Traceback" not in out.output


def test_an_unknown_mode_lists_the_custom_ones_too(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", {"a": {"category": {"mode": "starts"}}})
    out = runner.invoke(app, ["validate", str(suite)])
    assert out.exit_code == 1
    assert "starts_with" in out.output


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('    mode: Literal["m"]\n    def grade(self, a): ...\n', "declare `strength`"),
        ("    strength = 5\n    def grade(self, a): ...\n", "mode: Literal"),
        ('    strength = 5\n    mode: Literal["exact"]\n    def grade(self, a): ...\n', "built in"),
        ('    strength = 500\n    mode: Literal["m"]\n    def grade(self, a): ...\n', "0 to 100"),
        ('    strength = 5\n    mode: Literal["m"]\n', "define `grade"),
        (
            '    strength = 5\n    mode: Literal["m"]\n    options = {"x": OptionOrder("higher")}\n'
            "    def grade(self, a): ...\n",
            "not a field",
        ),
    ],
)
def test_a_bad_declaration_is_one_line_naming_the_module_line_and_class(
    tmp_path: Path, body: str, message: str
) -> None:
    checks = (
        "from typing import Literal\nfrom caseforge import CheckMode, OptionOrder\n\n\n"
        f"class Mine(CheckMode):\n{body}"
    )
    suite = write_suite(tmp_path / "suite", {"a": {"x": {"mode": "exact", "value": 1}}}, checks)
    out = runner.invoke(app, ["validate", str(suite)])
    assert out.exit_code == 1, out.output
    line = out.output.strip().splitlines()[0]
    assert f"{suite / 'checks.py'}:5" in line
    assert "checks.Mine" in line
    assert message in line
    assert "Traceback" not in out.output


def test_a_checks_module_that_fails_to_import_names_its_line(tmp_path: Path) -> None:
    checks = "x = 1\nraise RuntimeError('oops')\n"
    suite = write_suite(tmp_path / "suite", {"a": {"x": {"mode": "exact", "value": 1}}}, checks)
    out = runner.invoke(app, ["validate", str(suite)])
    assert out.exit_code == 1
    assert f"{suite / 'checks.py'}:2" in out.output
    assert "RuntimeError: oops" in out.output


def test_the_audit_reads_a_custom_modes_strength_and_option_order(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    suite = write_suite(
        repo / "suite", {"a": {"category": {"mode": "starts_with", "prefix": "refund"}}}
    )
    (repo / "suite" / "cases" / "b.yaml").write_text(
        json.dumps(
            {"id": "b", "input": {}, "expect": {"category": {"mode": "exact", "value": "refund"}}}
        ),
        encoding="utf-8",
    )
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "add")
    loosened = {"mode": "starts_with", "prefix": "refund", "ignore_case": True}
    write_suite(repo / "suite", {"a": {"category": loosened}})
    (repo / "suite" / "cases" / "b.yaml").write_text(
        json.dumps(
            {"id": "b", "input": {}, "expect": {"category": {"mode": "starts_with", "prefix": "r"}}}
        ),
        encoding="utf-8",
    )
    git(repo, "commit", "-q", "-am", "loosen both")
    (tmp_path / "no-store").mkdir()
    out = runner.invoke(app, ["audit", str(suite), "--private", str(tmp_path / "no-store")])
    assert out.exit_code == 1, out.output
    assert "loosened a.category (option-loosened)" in out.output
    assert "loosened b.category (mode-weakened)" in out.output  # exact 70 → starts_with 55


def test_declare_and_the_table_in_the_library(tmp_path: Path) -> None:
    (tmp_path / "user_checks.py").write_text(CHECKS, encoding="utf-8")
    specs = load_checks_file(tmp_path / "user_checks.py", tmp_path / "caseforge.yaml")
    assert [spec.name for spec in specs] == ["starts_with", "explodes"]
    table = mode_table(specs)
    assert "starts_with" in table and "starts_with" not in BUILTIN_MODES
    assert table.strength("starts_with") == 55
    check = table["starts_with"].model.model_validate({"mode": "starts_with", "prefix": "a"})
    assert check.grade("abc") == passed()
    assert check.grade("xbc").status == failed("x").status
    with pytest.raises(CaseforgeError, match="declared twice"):
        mode_table([*specs, *specs])


def test_an_installed_package_can_expose_modes_by_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from caseforge.checks import custom

    package = tmp_path / "site"
    (package / "acme_checks").mkdir(parents=True)
    (package / "acme_checks" / "__init__.py").write_text(CHECKS, encoding="utf-8")
    dist = package / "acme_checks-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Name: acme-checks\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[caseforge.checks]\nacme = acme_checks\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(package))
    custom.entry_point_modes.cache_clear()
    try:
        names = [spec.name for spec in custom.entry_point_modes()]
        assert names == ["starts_with", "explodes"]
        assert "starts_with" in mode_table()
    finally:
        sys.modules.pop("acme_checks", None)
        monkeypatch.undo()
        custom.entry_point_modes.cache_clear()


def test_an_oracle_fills_the_field_a_mode_names_and_no_other(tmp_path: Path) -> None:
    checks = CHECKS.replace(
        "    strength = 55\n", '    strength = 55\n    expected_field = "prefix"\n'
    )
    oracle = {"mode": "starts_with", "prefix": "ref", "oracle": "prefix"}
    suite = write_suite(tmp_path / "suite", {"a": {"category": oracle}}, checks)
    config = json.loads((suite / "caseforge.yaml").read_text(encoding="utf-8"))
    (suite / "caseforge.yaml").write_text(
        json.dumps({**config, "oracles": "oracles.py"}), encoding="utf-8"
    )
    (suite / "oracles.py").write_text(
        "from caseforge.oracle import oracle\n\n@oracle('prefix')\ndef prefix(input):\n"
        "    return 'ref'\n",
        encoding="utf-8",
    )
    ok = runner.invoke(app, ["validate", str(suite)])
    assert ok.exit_code == 0, ok.output
    (suite / "cases" / "a.yaml").write_text(
        json.dumps({"id": "a", "input": {}, "expect": {"category": {**oracle, "prefix": "x"}}}),
        encoding="utf-8",
    )
    drift = runner.invoke(app, ["validate", str(suite)])
    assert drift.exit_code == 1
    assert "expect.category.prefix" in drift.output and "oracle drift" in drift.output
    (suite / "checks.py").write_text(CHECKS, encoding="utf-8")
    unfilled = runner.invoke(app, ["validate", str(suite)])
    assert unfilled.exit_code == 1
    assert "declares no expected_field" in unfilled.output


DOCS_PAGE = Path(__file__).parents[2] / "docs" / "how-to" / "custom-modes.md"


def _docs_example() -> str:
    page = DOCS_PAGE.read_text(encoding="utf-8")
    return page.split("```python\n# checks.py\n", 1)[1].split("```", 1)[0]


def test_the_docs_example_mode_loads_and_grades(tmp_path: Path) -> None:
    block = _docs_example()
    (tmp_path / "checks.py").write_text(block, encoding="utf-8")
    [spec] = load_checks_file(tmp_path / "checks.py", tmp_path / "caseforge.yaml")
    check = spec.model.model_validate({"mode": "starts_with", "prefix": "Ref", "ignore_case": True})
    assert check.grade("refund") == passed()
    assert check.grade("other").reason == "'other' does not start with 'Ref'"
    assert check.expected == "Ref"
    assert spec.options["ignore_case"].loosens(False, True)


def test_the_docs_follow_along_writes_the_mode_the_page_shows() -> None:
    page = DOCS_PAGE.read_text(encoding="utf-8")
    heredoc = page.split("cat > my-suite/checks.py <<'EOF'\n", 1)[1].split("    EOF\n", 1)[0]
    written = "\n".join(row.removeprefix("    ") for row in heredoc.splitlines()) + "\n"
    assert written == "# checks.py\n" + _docs_example()


def test_every_check_renders_in_one_line_and_the_reports_show_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks = CHECKS.replace(
        "    def grade(self, actual: object) -> Verdict:\n        if not isinstance",
        "    def render(self) -> str:\n        return f'begins with {self.prefix}'\n\n"
        "    def grade(self, actual: object) -> Verdict:\n        if not isinstance",
    )
    expect = {
        "category": {"mode": "starts_with", "prefix": "ref"},
        "amount": {"mode": "number", "value": 20, "tolerance": 0.5},
        "reply": {"must_include": ["20"], "must_not_include": ["全额"]},
        "tool_calls": {"must_call": ["lookup"], "order": ["lookup", "refund"]},
        "wording": {"mode": "ignore", "reason": "varies"},
    }
    suite = write_suite(tmp_path / "suite", {"a": expect}, checks)
    monkeypatch.setenv("CASEFORGE_STORE", f"sqlite:///{tmp_path / 'store.db'}")
    runner.invoke(app, ["run", str(suite), "--quiet", "--out", str(tmp_path / "out")])
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["cases"][0]["expect"] == {
        "category": "begins with ref",
        "amount": "number 20 ± 0.5",
        "reply.must_include": 'must_include ["20"]',
        "reply.must_not_include": 'must_not_include ["全额"]',
        "tool_calls": "tool_calls: call lookup; in order lookup, refund",
        "wording": "ignore (varies)",
    }
    html = runner.invoke(app, ["report", "latest", "--format", "html"]).output
    assert "<small>begins with ref</small>" in html
    assert "<small>number 20 ± 0.5</small>" in html
