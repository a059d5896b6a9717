"""Pins on the ac-clarifier dataset: loosening a pinned cell turns these red first.

A change to one of these cells is a dataset change and needs a commit that says why.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from caseforge.testing import load_case

CASES = Path(__file__).resolve().parent.parent / "cases"
ORIGINAL = CASES / "ac-conflict-001.yaml"
COURSE = CASES / "ac-conflict-001-course.yaml"

ORIGINAL_FLAGS = {"3:conflict", "3:mismatch", "4:unverifiable", "7:unverifiable"}
# The course card's other side of the conflicting pair: AC5 (review before publishing)
# agrees with the description, so it carries no flag; AC8 carries conflict + mismatch.
COURSE_CONFLICT_PARTNER = 5

AC_HEADING = re.compile(r"^AC(\d+)\b", re.MULTILINE)


def _ac_numbers(card: str) -> list[int]:
    return [int(n) for n in AC_HEADING.findall(card)]


def _flags(values: list[str]) -> list[tuple[int, str]]:
    parsed = []
    for flag in values:
        number, kind = flag.split(":")
        parsed.append((int(number), kind))
    return parsed


def test_ac_conflict_001_pins_the_four_flags_as_a_set() -> None:
    case = load_case(ORIGINAL)
    check = case.expect["ac_flags"]
    assert check.mode == "exact_set"
    assert set(check.values) == ORIGINAL_FLAGS
    # The set, not the count: four right flags and four wrong ones are told apart.
    assert len(check.values) == 4
    assert len(set(check.values)) == 4


def test_ac_conflict_001_keeps_the_ungradable_cells_written_down() -> None:
    case = load_case(ORIGINAL)
    for field in ("comment_wording", "tool_calls", "goal_wording"):
        check = case.expect[field]
        assert check.mode == "ignore", f"{field} must stay written down as ignore"
        assert check.reason.strip(), f"{field} needs a reason"


def test_ac_conflict_001_scope_out_is_must_include_not_exact_set() -> None:
    # 「結帳頁效能」 must still pass against 「結帳頁效能問題」; tightening it is a dataset change.
    case = load_case(ORIGINAL)
    assert case.expect["scope_out"].mode == "must_include"


def test_ac_conflict_001_card_has_seven_acs() -> None:
    case = load_case(ORIGINAL)
    assert _ac_numbers(case.input["card"]) == list(range(1, 8))


def test_course_variant_keeps_the_structure() -> None:
    case = load_case(COURSE)
    numbers = _ac_numbers(case.input["card"])
    assert numbers == list(range(1, 13)), "the course card has 12 numbered ACs"

    check = case.expect["ac_flags"]
    assert check.mode == "exact_set"
    assert len(check.values) == 4
    assert len(set(check.values)) == 4

    flags = _flags(check.values)
    per_ac = Counter(number for number, _ in flags)
    doubled = [number for number, count in per_ac.items() if count == 2]
    assert len(doubled) == 1, "exactly one AC is double-flagged"
    assert all(count <= 2 for count in per_ac.values())
    double = doubled[0]
    assert {kind for number, kind in flags if number == double} == {"conflict", "mismatch"}
    assert sorted(kind for number, kind in flags if number != double) == [
        "unverifiable",
        "unverifiable",
    ]

    # The conflicting pair is hidden apart in the middle: not adjacent, neither first nor last.
    partner = COURSE_CONFLICT_PARTNER
    assert partner in numbers
    assert partner not in per_ac, "the side the description backs carries no flag"
    assert abs(double - partner) > 1
    assert min(numbers) < min(double, partner)
    assert max(double, partner) < max(numbers)
