"""Retiring moves a case into retired.yaml with its reason and date; the id stays taken."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from caseforge.case.retire import retire_case, retired_ids
from caseforge.case.validate import validate_suite
from caseforge.cli import app
from caseforge.errors import CaseforgeError
from tests.conftest import SuiteFactory, good_case

runner = CliRunner()


def test_retire_moves_the_case_with_reason_and_date(make_suite: SuiteFactory) -> None:
    text = "# reviewed by ops\n" + good_case("a")
    root = make_suite({"cases/a.yaml": text, "cases/b.yaml": good_case("b", "其它")})
    retire_case(root, "a", "expectation disputed", dt.date(2026, 11, 1))
    assert not (root / "cases/a.yaml").exists()
    entries = YAML(typ="safe").load((root / "retired.yaml").read_text())
    assert entries[0]["id"] == "a"
    assert entries[0]["reason"] == "expectation disputed"
    assert entries[0]["retired"] == dt.date(2026, 11, 1)
    assert entries[0]["case"]["expect"]["category"]["value"] == "refund"
    assert retired_ids(root) == {"a"}
    # A second retirement appends and keeps the first.
    retire_case(root, "b", "duplicate of c", dt.date(2026, 11, 2))
    assert retired_ids(root) == {"a", "b"}
    assert "Retired cases" in (root / "retired.yaml").read_text()


def test_retired_id_cannot_come_back(make_suite: SuiteFactory) -> None:
    root = make_suite({"cases/a.yaml": good_case("a")})
    retire_case(root, "a", "gone", dt.date(2026, 11, 1))
    (root / "cases/a2.yaml").write_text(good_case("a"), encoding="utf-8")
    report = validate_suite(root)
    assert [p.field for p in report.errors] == ["id"]
    with pytest.raises(CaseforgeError, match="already retired"):
        retire_case(root, "a", "again", dt.date(2026, 11, 1))


def test_retire_from_jsonl_removes_only_that_line(make_suite: SuiteFactory) -> None:
    rows = [
        {"id": f"j{i}", "input": {"t": str(i)}, "expect": {"a": {"mode": "exact", "value": i}}}
        for i in range(3)
    ]
    root = make_suite({"cases/bulk.jsonl": "".join(json.dumps(r) + "\n" for r in rows)})
    retire_case(root, "j1", "obsolete", dt.date(2026, 11, 1))
    left = (root / "cases/bulk.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in left] == ["j0", "j2"]
    assert retired_ids(root) == {"j1"}


def test_retire_needs_a_reason(make_suite: SuiteFactory) -> None:
    root = make_suite({"cases/a.yaml": good_case("a")})
    with pytest.raises(CaseforgeError, match="reason"):
        retire_case(root, "a", "  ", dt.date(2026, 11, 1))
    assert (root / "cases/a.yaml").exists()


def test_cli_retire(make_suite: SuiteFactory) -> None:
    root = make_suite({"cases/a.yaml": good_case("a")})
    result = runner.invoke(app, ["retire", str(root), "a", "--reason", "policy changed"])
    assert result.exit_code == 0, result.output
    assert retired_ids(root) == {"a"}


def test_malformed_retired_file_is_located(make_suite: SuiteFactory) -> None:
    root = make_suite(
        {"cases/a.yaml": good_case("a"), "retired.yaml": "- id: x\n  retired: 2026-01-01\n"}
    )
    report = validate_suite(root)
    assert len(report.errors) == 1
    assert report.errors[0].field == "[0].reason"
    assert report.errors[0].path.name == "retired.yaml"


def test_retired_file_stays_valid_yaml_with_colons_in_flow_lists(make_suite: SuiteFactory) -> None:
    text = good_case("a").replace("tags: [t]", 'tags: ["finding:F5", "kind:edge"]')
    root = make_suite({"cases/a.yaml": text, "cases/b.yaml": good_case("b", "别的工单")})
    retire_case(root, "a", "superseded", dt.date(2026, 11, 1))
    report = validate_suite(root)
    assert report.errors == [] and retired_ids(root) == {"a"}
    entries = YAML(typ="safe").load((root / "retired.yaml").read_text())
    assert entries[0]["case"]["tags"] == ["finding:F5", "kind:edge"]
