"""Pins on the CloudLedger seed data and the refund oracle of the support-refund suite.

These facts are what the cases' refund expectations are computed from; a change here is a
dataset change and needs a commit that says why.
"""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from pathlib import Path
from types import ModuleType

import pytest

from caseforge.oracle import AnyOf

SUITE = Path(__file__).resolve().parent.parent


def _import(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


seed = _import("support_refund_test_seed", SUITE / "data" / "seed.py")
oracles = _import("support_refund_test_oracles", SUITE / "oracles.py")


def _refund(customer_id: str, scenario: str) -> dict | None:
    return oracles.refund_policy({"customer_id": customer_id}, scenario=scenario)


def _build() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    seed.build(conn)
    return conn


def _dump(conn: sqlite3.Connection) -> list[str]:
    return list(conn.iterdump())


# --- the oracle -------------------------------------------------------------------------


def test_c007_duplicate_refunds_the_later_invoice_with_the_earlier_as_alternative() -> None:
    assert _refund("C007", "duplicate") == AnyOf(
        {"invoice_id": "INV-2026-0123", "amount_yuan": 2392.00},
        [{"invoice_id": "INV-2026-0026", "amount_yuan": 2392.00}],
    )


def test_c023_cancel_refunds_eleven_whole_billing_months() -> None:
    assert _refund("C023", "cancel") == {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.00}


@pytest.mark.parametrize("customer_id", ["C009", "C013", "C002"])
@pytest.mark.parametrize("scenario", ["cancel", "duplicate"])
def test_no_refund_for_basic_yearly_unpaid_period_and_basic_monthly(
    customer_id: str, scenario: str
) -> None:
    assert _refund(customer_id, scenario) is None


def test_c012_has_paid_invoices_but_no_duplicate() -> None:
    assert _refund("C012", "duplicate") is None


def test_unknown_or_missing_customer_gets_no_refund() -> None:
    assert _refund("C999", "cancel") is None
    assert _refund("C999", "duplicate") is None
    assert oracles.refund_policy({}, scenario="cancel") is None


def test_unknown_scenario_is_an_error() -> None:
    with pytest.raises(ValueError):
        oracles.refund_policy({"customer_id": "C023"}, scenario="downgrade")


def test_needs_approval_follows_the_refund() -> None:
    assert oracles.needs_approval({"customer_id": "C023"}, scenario="cancel") is True
    assert oracles.needs_approval({"customer_id": "C007"}, scenario="duplicate") is True
    assert oracles.needs_approval({"customer_id": "C009"}, scenario="cancel") is False
    assert oracles.needs_approval({"customer_id": "C012"}, scenario="duplicate") is False


@pytest.mark.parametrize(
    ("today", "end", "months"),
    [
        ("2026-10-12", "2027-10-09", 11),  # C023: the billing month from Oct 9 is not refunded
        ("2026-10-12", "2027-10-12", 11),  # renewed today: today's billing month is current
        ("2026-10-12", "2026-12-12", 1),
        ("2026-10-12", "2026-11-03", 0),  # less than one whole month left
        ("2026-10-12", "2027-02-20", 4),
    ],
)
def test_refundable_months(today: str, end: str, months: int) -> None:
    from datetime import date

    got = oracles.refundable_months(date.fromisoformat(today), date.fromisoformat(end))
    assert got == months


def test_oracles_are_registered_under_their_names() -> None:
    from caseforge.oracle import load_oracles

    found = load_oracles(SUITE / "oracles.py")
    assert {"refund_policy", "needs_approval"} <= set(found)


# --- the seed data ----------------------------------------------------------------------


def test_seeding_is_deterministic() -> None:
    assert _dump(_build()) == _dump(_build())


def test_only_c007_has_a_duplicate_charge() -> None:
    rows = (
        _build()
        .execute(
            "SELECT customer_id, issued_at, amount_cents, group_concat(id) FROM invoices"
            " WHERE status = 'paid' GROUP BY customer_id, issued_at, amount_cents"
            " HAVING count(*) > 1"
        )
        .fetchall()
    )
    assert len(rows) == 1
    customer_id, issued_at, amount, ids = rows[0]
    assert (customer_id, issued_at, amount) == ("C007", "2026-10-08", 239200)
    assert sorted(ids.split(",")) == ["INV-2026-0026", "INV-2026-0123"]
    for n in range(1, 31):
        expected = _refund("C007", "duplicate") if n == 7 else None
        assert _refund(f"C{n:03d}", "duplicate") == expected


def test_pinned_subscriptions_and_invoices() -> None:
    conn = _build()
    sub = conn.execute(
        "SELECT plan, billing_cycle, seats, current_period_start, current_period_end"
        " FROM subscriptions WHERE customer_id = ?",
        ("C023",),
    ).fetchone()
    assert sub == ("enterprise", "yearly", 2, "2026-10-09", "2027-10-09")
    invoices = dict(
        ((row[0]), row[1:])
        for row in conn.execute("SELECT id, customer_id, amount_cents, status FROM invoices")
    )
    assert invoices["INV-2026-0091"] == ("C023", 717600, "paid")
    assert invoices["INV-2026-0026"] == ("C007", 239200, "paid")
    assert invoices["INV-2026-0123"] == ("C007", 239200, "paid")
    assert invoices["INV-2026-0050"] == ("C013", 356400, "open")
    assert invoices["INV-2026-0051"] == ("C013", 356400, "paid")
    # The open one is the current period: ids are not in date order.
    periods = dict(
        conn.execute(
            "SELECT id, period_start FROM invoices WHERE id IN ('INV-2026-0050', 'INV-2026-0051')"
        ).fetchall()
    )
    assert periods == {"INV-2026-0050": "2026-10-01", "INV-2026-0051": "2025-10-01"}
    plans = dict(
        conn.execute("SELECT customer_id, plan || '/' || billing_cycle FROM subscriptions")
    )
    assert plans["C009"] == "basic/yearly"
    assert plans["C013"] == "pro/yearly"
    assert plans["C002"] == "basic/monthly"
    assert plans["C007"] == "enterprise/monthly"
    paid_c012 = conn.execute(
        "SELECT count(*) FROM invoices WHERE customer_id = 'C012' AND status = 'paid'"
    ).fetchone()[0]
    assert paid_c012 >= 3


def test_shape_of_the_database() -> None:
    conn = _build()
    customers = [row[0] for row in conn.execute("SELECT id FROM customers ORDER BY id")]
    assert customers == [f"C{n:03d}" for n in range(1, 31)]
    emails = [row[0] for row in conn.execute("SELECT email FROM customers")]
    assert all(
        e.endswith((".example.com", ".example.net", ".example.org", ".test")) for e in emails
    )
    assert conn.execute("SELECT count(*) FROM refund_requests").fetchone() == (0,)
    ids = [row[0] for row in conn.execute("SELECT id FROM invoices ORDER BY id")]
    assert ids == [f"INV-2026-{n:04d}" for n in range(1, len(ids) + 1)]
    statuses = {row[0] for row in conn.execute("SELECT DISTINCT status FROM subscriptions")}
    assert "past_due" in statuses
    # Every invoice is price × seats (× 12 for yearly), except C015's pro-rata upgrade charge.
    prices = seed.PLAN_PRICES
    for cid, amount, start, end in conn.execute(
        "SELECT customer_id, amount_cents, period_start, period_end FROM invoices"
    ):
        months = 12 if end[:4] != start[:4] and end[5:] == start[5:] else 1
        assert any(amount == prices[p] * s * months for p in prices for s in range(1, 41)) or (
            cid == "C015"
        ), (cid, amount)


def test_main_writes_a_database_file(tmp_path: Path) -> None:
    out = tmp_path / "out.db"
    seed.main([str(out)])
    conn = sqlite3.connect(out)
    try:
        assert _dump(conn) == _dump(_build())
    finally:
        conn.close()
