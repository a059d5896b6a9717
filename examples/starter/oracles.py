"""The suite's oracles: deterministic code that computes expectations from the business
rules, registered by name. A case's check names one (``oracle: refund_due``), and
``caseforge validate`` calls it again on every run, so a rule change that silently moves an
expectation is an error naming the case and both values."""

from __future__ import annotations

from typing import Any

from caseforge.oracle import oracle

MONTHLY_PRICE_USD = {"basic": 10.0, "pro": 30.0}


@oracle("refund_due")
def refund_due(input: dict[str, Any]) -> float:
    """Yearly plans get the unused whole months back; monthly plans get nothing."""
    tier, _, billing = str(input["plan"]).partition("-")
    if billing != "yearly":
        return 0.0
    return (12 - int(input["months_used"])) * MONTHLY_PRICE_USD[tier]
