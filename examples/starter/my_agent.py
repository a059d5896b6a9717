"""A stand-in for the agent under test. Replace the body of ``run`` with a call into yours.

caseforge calls ``run(input, ctx)`` once per case and trial. ``input`` is the case's
``input:`` mapping as written; ``ctx`` carries the trial's ``seed``, the frozen clock
``ctx.now()``, the configuration ``ctx.config`` and a fresh ``ctx.workspace`` folder. Return
``{"output": {...}, "reply": "...", "tool_calls": [...], "usage": {...}}``: each key of a
case's ``expect:`` names a field of ``output`` (``reply`` and ``tool_calls`` are graded too).

An agent never reads the cases' expectations or the oracles: it has to find the answer.
"""

from __future__ import annotations

from typing import Any

MONTHLY_PRICE_USD = {"basic": 10.0, "pro": 30.0}


def lookup_plan(plan: str) -> dict[str, Any]:
    """What a real agent would get from a billing tool."""
    tier, _, billing = plan.partition("-")
    return {"tier": tier, "billing": billing, "monthly_usd": MONTHLY_PRICE_USD[tier]}


def run(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    message = str(input["message"]).lower()
    if "refund" in message or "money back" in message or "unused" in message:
        plan = lookup_plan(str(input["plan"]))
        months_left = 12 - int(input["months_used"]) if plan["billing"] == "yearly" else 0
        refund = months_left * plan["monthly_usd"]
        return {
            "output": {"category": "refund", "refund_usd": refund},
            "reply": f"We will refund ${refund:.2f} for the {months_left} unused months.",
            "tool_calls": [
                {"name": "lookup_plan", "args": {"plan": input["plan"]}, "result": plan}
            ],
        }
    # A weakness to find: the reply never says which order it is about.
    return {
        "output": {"category": "shipping"},
        "reply": "Thanks for writing. We are looking into your order and will get back to you.",
    }
