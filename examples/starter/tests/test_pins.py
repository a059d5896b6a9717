"""Pins on this suite's dataset: loosening a pinned check turns these red in the same change.

Run them with ``pytest`` from the suite folder (or from the repo holding it).
"""

from __future__ import annotations

from pathlib import Path

from caseforge.testing import assert_valid, check_of, load_case

SUITE = Path(__file__).resolve().parents[1]


def test_the_suite_is_valid() -> None:
    assert_valid(SUITE)  # fails listing every file:line:col problem, oracle drift included


def test_the_refund_amount_is_exact_and_computed_by_the_oracle() -> None:
    check = check_of(load_case(SUITE / "cases" / "refund-yearly.yaml"), "refund_usd")
    assert check.mode == "number"
    assert check.oracle == "refund_due"
    assert getattr(check, "tolerance", 0) == 0, "a refund is exact to the cent"


def test_the_order_reply_must_name_the_order() -> None:
    check = check_of(load_case(SUITE / "cases" / "order-status.yaml"), "reply")
    assert "ORD-1042" in getattr(check, "must_include", [])
