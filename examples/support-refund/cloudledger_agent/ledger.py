"""The agent's working knowledge: the public price list, month arithmetic, and helpers
that read the tools' results (invoices, subscription) into plain values.

This is what a support agent knows from the help center and sees in the tool output; it
never reads the suite's cases or its policy code.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

# Public price list: per seat per month, in cents.
PRICE_CENTS = {"basic": 4900, "pro": 9900, "enterprise": 29900}
PLAN_ZH = {"basic": "基础版", "pro": "专业版", "enterprise": "企业版"}
PLAN_EN = {"basic": "Basic", "pro": "Pro", "enterprise": "Enterprise"}
CYCLE_ZH = {"monthly": "月付", "yearly": "年付"}
CYCLE_EN = {"monthly": "monthly", "yearly": "annual"}


@dataclass(frozen=True)
class Invoice:
    id: str
    cents: int
    status: str
    issued: dt.date
    period_start: dt.date
    period_end: dt.date

    @property
    def paid(self) -> bool:
        return self.status == "paid"

    @property
    def days(self) -> int:
        return (self.period_end - self.period_start).days


@dataclass(frozen=True)
class Subscription:
    customer_id: str
    plan: str
    cycle: str
    seats: int
    status: str
    start: dt.date
    end: dt.date

    @property
    def seat_price(self) -> int:
        return PRICE_CENTS.get(self.plan, 0)

    @property
    def monthly_cents(self) -> int:
        return self.seat_price * self.seats


def subscription_from(result: Any) -> Subscription | None:
    if not isinstance(result, dict) or "error" in result:
        return None
    try:
        return Subscription(
            customer_id=str(result["customer_id"]),
            plan=str(result["plan"]),
            cycle=str(result["billing_cycle"]),
            seats=int(result["seats"]),
            status=str(result["status"]),
            start=dt.date.fromisoformat(str(result["current_period_start"])),
            end=dt.date.fromisoformat(str(result["current_period_end"])),
        )
    except (KeyError, TypeError, ValueError):
        return None


def invoices_from(result: Any) -> list[Invoice] | None:
    if not isinstance(result, dict) or "error" in result:
        return None
    out = []
    for row in result.get("invoices", []):
        try:
            out.append(
                Invoice(
                    id=str(row["invoice_id"]),
                    cents=round(float(row["amount_yuan"]) * 100),
                    status=str(row["status"]),
                    issued=dt.date.fromisoformat(str(row["issued_at"])),
                    period_start=dt.date.fromisoformat(str(row["period_start"])),
                    period_end=dt.date.fromisoformat(str(row["period_end"])),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
    return sorted(out, key=lambda inv: (inv.issued, inv.id))


def whole_months(start: dt.date, end: dt.date) -> int:
    """Whole calendar months from ``start`` to ``end`` (0 when ``end`` is not later)."""
    months = (end.year - start.year) * 12 + (end.month - start.month)
    if end.day < start.day:
        months -= 1
    return max(months, 0)


def months_left_after_current(today: dt.date, period_end: dt.date) -> int:
    """Whole billing months left after the billing month ``today`` falls in.

    Help-center rule: the current billing month (it starts on the period's anchor day) and
    the months already used are not refunded. On the anchor day itself a new billing month
    has just started, and it counts as the current one.
    """
    months = whole_months(today, period_end)
    if today.day == period_end.day:
        months -= 1
    return max(months, 0)


def latest_paid(invoices: list[Invoice], exclude: set[str] | None = None) -> Invoice | None:
    paid = [inv for inv in invoices if inv.paid and inv.id not in (exclude or set())]
    return max(paid, key=lambda inv: (inv.issued, inv.id)) if paid else None


def duplicate_pair(invoices: list[Invoice]) -> tuple[Invoice, Invoice] | None:
    """Two paid invoices with the same issue date and amount: (earlier id, later id)."""
    seen: dict[tuple[dt.date, int], Invoice] = {}
    for inv in sorted(invoices, key=lambda i: i.id):
        if not inv.paid:
            continue
        key = (inv.issued, inv.cents)
        if key in seen:
            return seen[key], inv
        seen[key] = inv
    return None


def is_proration(inv: Invoice, cycle: str) -> bool:
    """An invoice for part of a billing period (an upgrade's pro-rata difference)."""
    full = 365 if cycle == "yearly" else 28
    return inv.days < full


def regular(invoices: list[Invoice], cycle: str) -> list[Invoice]:
    return [inv for inv in invoices if not is_proration(inv, cycle)]


def plan_for_seat_price(cents: int) -> str | None:
    for plan, price in PRICE_CENTS.items():
        if price == cents:
            return plan
    return None


def yuan(cents: int) -> str:
    """An amount in yuan without thousands separators: ``6578`` or ``280.50``."""
    return str(cents // 100) if cents % 100 == 0 else f"{cents / 100:.2f}"


def zh_date(d: dt.date, today: dt.date) -> str:
    return f"{d.month}月{d.day}日" if d.year == today.year else f"{d.year}年{d.month}月{d.day}日"


def en_date(d: dt.date, today: dt.date) -> str:
    text = f"{d:%b} {d.day}"
    return text if d.year == today.year else f"{text}, {d.year}"
