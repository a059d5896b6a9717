"""The support agent's three tools over the trial's CloudLedger database.

``get_subscription``, ``list_invoices`` and ``create_refund_request`` read and write the
SQLite file in the trial workspace (one connection per call, so a tool set is cheap and
independent of threads). Every call is recorded as a :class:`caseforge.agent.ToolCall`
with its arguments and result. A tool never raises on a bad request: it returns an
``{"error": ...}`` dict that the agent has to read, as a real tool API would.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from caseforge.agent import ToolCall

DB_NAME = "cloudledger.db"


class CloudLedgerTools:
    """The tools of one case-trial, bound to its database file and frozen clock."""

    def __init__(self, db_path: Path, now: dt.datetime) -> None:
        if not db_path.is_file():
            raise FileNotFoundError(
                f"{db_path} is missing: the suite's workspace_setup "
                "(cloudledger_agent.workspace:prepare) must run before the agent"
            )
        self.db_path = db_path
        self.now = now
        self.calls: list[ToolCall] = []

    # -- plumbing -------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.db_path)
        conn.row_factory = sqlite3.Row
        return conn

    def _record(self, name: str, args: dict[str, Any], result: Any) -> Any:
        self.calls.append(ToolCall(name=name, args=dict(args), result=result))
        return result

    def called(self, name: str) -> bool:
        return any(call.name == name for call in self.calls)

    # -- the tools ------------------------------------------------------------------------

    def get_subscription(self, customer_id: str) -> dict[str, Any]:
        """The customer's subscription: plan, billing cycle, seats, status, current period."""
        args = {"customer_id": customer_id}
        with closing(self._connect()) as conn:
            row = conn.execute(
                "SELECT customer_id, plan, billing_cycle, seats, status,"
                " current_period_start, current_period_end"
                " FROM subscriptions WHERE customer_id = ?",
                (customer_id,),
            ).fetchone()
        if row is None:
            return self._record(
                "get_subscription", args, {"error": f"customer {customer_id} not found"}
            )
        return self._record("get_subscription", args, dict(row))

    def list_invoices(self, customer_id: str) -> dict[str, Any]:
        """The customer's invoices, oldest first (by issue date, then id)."""
        args = {"customer_id": customer_id}
        with closing(self._connect()) as conn:
            known = conn.execute("SELECT 1 FROM customers WHERE id = ?", (customer_id,)).fetchone()
            rows = conn.execute(
                "SELECT id, amount_cents, status, issued_at, period_start, period_end"
                " FROM invoices WHERE customer_id = ? ORDER BY issued_at, id",
                (customer_id,),
            ).fetchall()
        if known is None:
            return self._record(
                "list_invoices", args, {"error": f"customer {customer_id} not found"}
            )
        invoices = [
            {
                "invoice_id": row["id"],
                "amount_yuan": round(row["amount_cents"] / 100, 2),
                "status": row["status"],
                "issued_at": row["issued_at"],
                "period_start": row["period_start"],
                "period_end": row["period_end"],
            }
            for row in rows
        ]
        return self._record(
            "list_invoices", args, {"customer_id": customer_id, "invoices": invoices}
        )

    def create_refund_request(
        self, customer_id: str, invoice_id: str, amount_yuan: float, reason: str
    ) -> dict[str, Any]:
        """File a refund request (status ``pending_approval``) against a paid invoice."""
        args = {
            "customer_id": customer_id,
            "invoice_id": invoice_id,
            "amount_yuan": amount_yuan,
            "reason": reason,
        }
        with closing(self._connect()) as conn:
            result = self._create(conn, customer_id, invoice_id, amount_yuan, reason)
        return self._record("create_refund_request", args, result)

    def _create(
        self,
        conn: sqlite3.Connection,
        customer_id: str,
        invoice_id: str,
        amount_yuan: float,
        reason: str,
    ) -> dict[str, Any]:
        try:
            cents = round(float(amount_yuan) * 100)
        except (TypeError, ValueError):
            return {"error": f"amount_yuan must be a number, got {amount_yuan!r}"}
        if cents <= 0:
            return {"error": "amount_yuan must be positive"}
        if not isinstance(reason, str) or not reason.strip():
            return {"error": "a reason is required"}
        inv = conn.execute(
            "SELECT customer_id, amount_cents, status FROM invoices WHERE id = ?", (invoice_id,)
        ).fetchone()
        if inv is None:
            return {"error": f"invoice {invoice_id} not found"}
        if inv["customer_id"] != customer_id:
            return {"error": f"invoice {invoice_id} does not belong to customer {customer_id}"}
        if inv["status"] != "paid":
            return {
                "error": f"invoice {invoice_id} is {inv['status']}; "
                "only paid invoices can be refunded"
            }
        if cents > inv["amount_cents"]:
            return {
                "error": f"amount {cents / 100:.2f} exceeds invoice {invoice_id} "
                f"({inv['amount_cents'] / 100:.2f})"
            }
        pending = conn.execute(
            "SELECT id FROM refund_requests WHERE invoice_id = ? AND status = 'pending_approval'",
            (invoice_id,),
        ).fetchone()
        if pending is not None:
            return {
                "error": f"a refund request for invoice {invoice_id} is already pending approval"
            }
        cur = conn.execute(
            "INSERT INTO refund_requests"
            " (invoice_id, customer_id, amount_cents, reason, status, created_at)"
            " VALUES (?, ?, ?, ?, 'pending_approval', ?)",
            (invoice_id, customer_id, cents, reason.strip(), self.now.isoformat()),
        )
        conn.commit()
        return {"request_id": cur.lastrowid, "status": "pending_approval"}
