"""Helpers for pinning a suite's own invariants in pytest (dataset as code).

Example::

    from caseforge.testing import load_case, check_of

    def test_flags_are_pinned_as_a_set():
        case = load_case("cases/ac-conflict-001.yaml")
        flags = check_of(case, "ac_flags")
        assert flags.mode == "exact_set"
        assert set(flags.values) == {"3:conflict", "3:mismatch", "4:unverifiable", "7:unverifiable"}
"""

from __future__ import annotations

from pathlib import Path

from caseforge.case.load import Suite, load_case, load_suite
from caseforge.case.model import Case
from caseforge.case.validate import ValidationReport, validate_suite
from caseforge.checks import Check

__all__ = ["Suite", "assert_valid", "check_of", "expected_of", "load_case", "load_suite"]


def check_of(case: Case, field: str) -> Check:
    """The check written under ``expect.<field>``; fails the test clearly if it is missing."""
    try:
        return case.expect[field]
    except KeyError:
        known = ", ".join(case.expect) or "none"
        raise AssertionError(f"case {case.id} has no expect.{field} (has: {known})") from None


def expected_of(case: Case, field: str) -> object:
    """The expected ``value`` or ``values`` of ``expect.<field>``."""
    check = check_of(case, field)
    for name in ("values", "value"):
        if hasattr(check, name):
            return getattr(check, name)
    raise AssertionError(f"expect.{field} of {case.id} is a {check.mode} check with no value")


def assert_valid(suite_dir: str | Path, strict: bool = False) -> ValidationReport:
    """Run ``caseforge validate`` on a suite and fail the test with every problem found."""
    report = validate_suite(suite_dir)
    problems = report.errors + (report.warnings if strict else [])
    if problems:
        raise AssertionError("\n".join(p.format() for p in problems))
    return report
