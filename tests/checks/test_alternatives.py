"""Explicit alternatives (`any_of`), strict equality, and path-by-path differences."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from caseforge.checks import ExactCheck, NumberCheck, OutcomeCheck
from caseforge.cli import app
from caseforge.values import differences

runner = CliRunner()


def status(check: object, actual: object) -> str:
    return check.grade(actual).status.value  # type: ignore[attr-defined]


def test_any_of_on_outcome_exact_and_number() -> None:
    refund = OutcomeCheck(
        mode="outcome",
        value={"invoice_id": "INV-2", "amount_yuan": 2392.0},
        any_of=[{"invoice_id": "INV-1", "amount_yuan": 2392.0}],
    )
    assert status(refund, {"invoice_id": "INV-2", "amount_yuan": 2392}) == "pass"
    assert status(refund, {"invoice_id": "INV-1", "amount_yuan": 2392.0}) == "pass"
    wrong = refund.grade({"invoice_id": "INV-3", "amount_yuan": 2000.0})
    assert wrong.reason == (
        'the run left: invoice_id: expected "INV-2", got "INV-3"; amount_yuan: expected 2392.0, '
        'got 2000.0 (or any of [{"invoice_id": "INV-1", "amount_yuan": 2392.0}])'
    )
    # An alternative is a whole value: {alt_ids: [...]} is a value like any other now.
    plain = ExactCheck(mode="exact", value="refund", any_of=["billing"])
    assert status(plain, "billing") == "pass" and status(plain, "other") == "fail"
    near = NumberCheck(mode="number", value=10, tolerance=0.5, any_of=[20])
    assert status(near, 20.4) == "pass" and status(near, 15) == "fail"


def test_the_old_alt_keys_get_an_error_naming_the_new_form() -> None:
    with pytest.raises(ValidationError, match=r"`alt_invoice_ids` in an outcome value no longer"):
        OutcomeCheck.model_validate(
            {"mode": "outcome", "value": {"invoice_id": "A", "alt_invoice_ids": ["B"]}}
        )
    same_as_itself = ExactCheck(mode="exact", value={"alt_ids": [1, 2]})
    assert status(same_as_itself, {"alt_ids": [1, 2]}) == "pass"  # no magic in exact


def test_strict_types() -> None:
    loose = ExactCheck(mode="exact", value=1)
    strict = ExactCheck(mode="exact", value=1, strict_types=True)
    assert status(loose, 1.0) == "pass" and status(strict, 1.0) == "fail"
    assert status(strict, "1") == "fail" and status(strict, 1) == "pass"
    sum_ = ExactCheck(mode="exact", value=0.3, strict_types=True)
    assert status(ExactCheck(mode="exact", value=0.3), 0.1 + 0.2) == "pass"
    assert status(sum_, 0.1 + 0.2) == "fail"
    nested = ExactCheck(mode="exact", value={"a": [1, True]}, strict_types=True)
    assert status(nested, {"a": [1, True]}) == "pass"
    assert status(nested, {"a": [1.0, True]}) == "fail"


def test_differences_path_by_path_and_reasons_kept_whole() -> None:
    expected = {"refund": {"amount": 6578.0, "ids": ["a", "b"]}, "note": "x"}
    actual = {"refund": {"amount": 6000, "ids": ["a"]}, "extra": 1}
    assert differences(expected, actual) == [
        "refund.amount: expected 6578.0, got 6000",
        "refund.ids: 1 items, expected 2",
        'note: missing (expected "x")',
        "extra: unexpected 1",
    ]
    long = "x" * 300
    reason = ExactCheck(mode="exact", value=long).grade(long + "y").reason
    assert long + 'y"' in reason  # not cut at 80 characters any more


def test_validate_names_the_file_and_line_of_an_old_alternative(tmp_path: Path) -> None:
    suite = tmp_path / "s"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: s\nagent: {callable: 'a:run'}\n")
    (suite / "cases" / "c.yaml").write_text(
        "id: c\ninput: {}\nexpect:\n  refund:\n    mode: outcome\n"
        "    value: {invoice_id: A, alt_invoice_ids: [B]}\nsource: manual\n"
    )
    result = runner.invoke(app, ["validate", str(suite)])
    assert result.exit_code == 1
    assert "c.yaml:5:5: expect.refund: `alt_invoice_ids`" in result.output
    assert "any_of" in result.output
    assert "Traceback" not in result.output
