"""Oracles of the support-refund suite: CloudLedger's refund policy as code.

The policy (what a supervisor would approve):

1. A duplicate charge (two paid invoices of one customer with the same issue date and the
   same amount) is refunded in full: the duplicate invoice, i.e. the one with the later id;
   refunding the other one of the pair is equally right.
2. A pro or enterprise plan paid yearly and cancelled mid-period is refunded for the whole
   billing months left; the current billing month and the months already used are not
   refunded. The refund is filed against the latest paid invoice.
3. Basic yearly and every monthly plan: no refund; the service runs to the period end.
4. No refund when the current period's invoice is not paid (nothing was paid to refund),
   when the customer is unknown, or when there is no duplicate charge.

The business data comes from ``data/seed.py``, built once per process into an in-memory
SQLite database and read into plain tuples (so the oracles are safe to call from threads).
"""

from __future__ import annotations

import functools
import importlib.util
import sqlite3
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

from caseforge.oracle import AnyOf, oracle

SUITE_DIR = Path(__file__).resolve().parent
SCENARIOS = ("duplicate", "cancel")


@dataclass(frozen=True)
class Subscription:
    customer_id: str
    plan: str
    billing_cycle: str
    seats: int
    status: str
    current_period_start: date
    current_period_end: date


@dataclass(frozen=True)
class Invoice:
    id: str
    customer_id: str
    amount_cents: int
    status: str
    issued_at: date
    period_start: date
    period_end: date


@dataclass(frozen=True)
class Ledger:
    """A read-only snapshot of the seeded database."""

    today: date
    prices: dict[str, int]
    subscriptions: dict[str, Subscription]
    invoices: dict[str, tuple[Invoice, ...]]  # by customer id, sorted by invoice id


def _load_seed() -> ModuleType:
    """Import ``data/seed.py`` by path, under a name no other suite uses."""
    name = "caseforge_example_support_refund_seed"
    if name in sys.modules:
        return sys.modules[name]
    path = SUITE_DIR / "data" / "seed.py"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file runs
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@functools.cache
def ledger() -> Ledger:
    """Seed an in-memory database once per process and snapshot it."""
    seed = _load_seed()
    conn = sqlite3.connect(":memory:")
    try:
        seed.build(conn)
        subs = {
            row[0]: Subscription(*row[:5], *map(date.fromisoformat, row[5:]))
            for row in conn.execute(
                "SELECT customer_id, plan, billing_cycle, seats, status,"
                " current_period_start, current_period_end FROM subscriptions"
            )
        }
        invoices: dict[str, list[Invoice]] = {}
        for row in conn.execute(
            "SELECT id, customer_id, amount_cents, status, issued_at, period_start, period_end"
            " FROM invoices ORDER BY id"
        ):
            inv = Invoice(*row[:4], *map(date.fromisoformat, row[4:]))
            invoices.setdefault(inv.customer_id, []).append(inv)
    finally:
        conn.close()
    return Ledger(
        today=seed.TODAY,
        prices=dict(seed.PLAN_PRICES),
        subscriptions=subs,
        invoices={cid: tuple(invs) for cid, invs in invoices.items()},
    )


def full_months(start: date, end: date) -> int:
    """Whole months from ``start`` to ``end`` (0 when ``end`` is not later)."""
    months = (end.year - start.year) * 12 + (end.month - start.month)
    if end.day < start.day:
        months -= 1
    return max(months, 0)


def refundable_months(today: date, period_end: date) -> int:
    """Whole billing months left after the current billing month.

    The billing month runs from the period's anchor day; the one ``today`` falls in is not
    refunded. Counting whole months from ``today`` already drops the part-used month,
    except when ``today`` is an anchor day itself: then that new billing month is the
    current one, so one more month goes.
    """
    months = full_months(today, period_end)
    if today.day == period_end.day:
        months -= 1
    return max(months, 0)


def _yuan(cents: int) -> float:
    return round(cents / 100, 2)


def find_duplicate(invoices: tuple[Invoice, ...]) -> tuple[Invoice, Invoice] | None:
    """The first (earlier id, later id) pair of paid invoices with the same date and amount."""
    seen: dict[tuple[date, int], Invoice] = {}
    for inv in invoices:  # sorted by id
        if inv.status != "paid":
            continue
        key = (inv.issued_at, inv.amount_cents)
        if key in seen:
            return seen[key], inv
        seen[key] = inv
    return None


def _duplicate(book: Ledger, customer_id: str) -> AnyOf | None:
    pair = find_duplicate(book.invoices.get(customer_id, ()))
    if pair is None:
        return None
    first, second = pair
    amount = _yuan(second.amount_cents)
    # Either of the two is a right one to refund; the later one is the usual answer.
    return AnyOf(
        {"invoice_id": second.id, "amount_yuan": amount},
        [{"invoice_id": first.id, "amount_yuan": amount}],
    )


def _cancel(book: Ledger, customer_id: str) -> dict[str, Any] | None:
    sub = book.subscriptions[customer_id]
    if sub.billing_cycle != "yearly" or sub.plan == "basic":
        return None  # monthly plans and basic yearly run to the period end, no refund
    invoices = book.invoices.get(customer_id, ())
    current = [inv for inv in invoices if inv.period_start == sub.current_period_start]
    if not current or any(inv.status != "paid" for inv in current):
        return None  # this period was not paid: nothing to refund
    months = refundable_months(book.today, sub.current_period_end)
    if months <= 0:
        return None
    paid = [inv for inv in invoices if inv.status == "paid"]
    latest = max(paid, key=lambda inv: (inv.issued_at, inv.id))
    amount = book.prices[sub.plan] * sub.seats * months
    return {"invoice_id": latest.id, "amount_yuan": _yuan(amount)}


@oracle("refund_policy")
def refund_policy(
    input: dict[str, Any], *, scenario: str, customer_id: str | None = None
) -> dict[str, Any] | AnyOf | None:
    """The refund request a correct agent files for this ticket, or ``None`` for none.

    ``scenario`` is ``duplicate`` (the customer reports a double charge) or ``cancel``
    (the customer cancels and asks for the rest of the money back). ``customer_id`` names
    the customer of a conversation who gives their number only when asked (else it is
    the input's).
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; expected one of {SCENARIOS}")
    book = ledger()
    customer_id = customer_id or input.get("customer_id")
    if not isinstance(customer_id, str) or customer_id not in book.subscriptions:
        return None
    if scenario == "duplicate":
        return _duplicate(book, customer_id)
    return _cancel(book, customer_id)


@oracle("needs_approval")
def needs_approval(input: dict[str, Any], *, scenario: str, customer_id: str | None = None) -> bool:
    """Whether the ticket ends with a refund request waiting for a supervisor."""
    return refund_policy(input, scenario=scenario, customer_id=customer_id) is not None
