"""Facts from the business data for `caseforge synth write` (the `synth.facts` hook): what the
model may cite when it writes a ticket for a tuple, read from the seeded database."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from cloudledger_agent.tools import CloudLedgerTools
from cloudledger_agent.workspace import template_db

TODAY = dt.datetime(2026, 10, 12, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=8)))


def describe(case_input: dict[str, Any]) -> str:
    """The customer's plan and their latest invoices, as short JSON the prompt can quote."""
    customer = str(case_input.get("customer_id", ""))
    tools = CloudLedgerTools(template_db(), TODAY)
    subscription = tools.get_subscription(customer)
    invoices = tools.list_invoices(customer)
    latest = (invoices.get("invoices") or [])[:3] if isinstance(invoices, dict) else []
    return json.dumps(
        {"customer_id": customer, "subscription": subscription, "latest_invoices": latest},
        ensure_ascii=False,
        default=str,
    )
