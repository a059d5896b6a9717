"""A toy support agent for multi-turn cases: it asks for the customer id when the
conversation lacks one, asks for a confirmation before filing, then files the refund.
``sloppy`` files without asking."""

from __future__ import annotations

import re
from typing import Any


def run(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    messages = ctx.messages or []
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    found = re.search(r"C\d{3}", said)
    sloppy = ctx.config.get("variant") == "sloppy"
    if not found and not sloppy:
        return {"reply": "请提供您的客户编号。", "done": False}
    customer = found.group(0) if found else "C000"
    if not sloppy and "确认" not in said:
        return {"reply": f"将为 {customer} 申请退款 6,578.00 元，确认吗？", "done": False}
    call = {"name": "create_refund_request", "args": {"customer_id": customer}, "result": "ok"}
    return {
        "output": {"category": "refund"},
        "reply": f"已为 {customer} 提交退款申请，待主管审批。",
        "tool_calls": [call],
        "done": True,
    }


def customer(messages: list[dict[str, str]], instruction: str, facts: dict[str, Any]) -> Any:
    """A simulated customer: opens with the instruction, reveals the id when asked,
    confirms when asked, and stops once the agent has filed."""
    if not messages:
        return instruction
    last = messages[-1]["content"]
    if "客户编号" in last:
        return f"我的客户编号是 {facts['customer_id']}。"
    if "确认" in last:
        return "确认。"
    return None


def chatterbox(messages: list[dict[str, str]], instruction: str, facts: dict[str, Any]) -> str:
    """A user who never stops talking: the conversation runs into max_turns."""
    return "还有一个问题……"


async def asks_the_weather(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The same request to an outside service every turn; its answer differs by turn."""
    turn = ctx.turn
    answer = await ctx.external("weather", {"city": "Huế"}, lambda: {"sky": f"sky {turn}"})
    return {"reply": f"turn {turn}: {answer['sky']}", "done": False}
