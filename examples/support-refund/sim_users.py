"""Simulated customers for the suite's multi-turn cases (``conversation.user.callable``).

A user is called with the conversation so far and returns its next message, or None when
it has nothing more to say. It opens with its instruction, gives its customer number when
asked, confirms a refund request when asked to, and is otherwise done."""

from __future__ import annotations

import re
from typing import Any

ASKS_ID = re.compile(r"客户编号|customer number", re.IGNORECASE)
ASKS_TO_CONFIRM = re.compile(r"确认提交吗|Shall I file it", re.IGNORECASE)


def customer(messages: list[dict[str, str]], instruction: str, facts: dict[str, Any]) -> Any:
    if not messages:
        return instruction
    last = messages[-1]["content"]
    english = not re.search(r"[\u4e00-\u9fff]", instruction)
    if ASKS_ID.search(last) and facts.get("customer_id"):
        cid = facts["customer_id"]
        return f"It's {cid}." if english else f"我的客户编号是 {cid}。"
    if ASKS_TO_CONFIRM.search(last) and facts.get("confirms", True):
        return "Yes, go ahead." if english else "确认，提交吧。"
    return None
