"""A fictional retail agent, in the shape of a public agent benchmark's tasks: a JSON
database of users, orders and products, tools that read and write it, and an end state.
The ``good`` variant does what the task asks; ``faulty`` skips the second of two writes
and files the first with the wrong reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATABASE = {
    "users": {"mia_lin_41": {"name": "Mia Lin", "orders": ["#W1001", "#W1002"]}},
    "orders": {
        "#W1001": {"status": "pending", "items": [{"product": "Camera", "price": 1093.34}]},
        "#W1002": {"status": "pending", "items": [{"product": "Tripod", "price": 58.0}]},
    },
}


def prepare(workspace: Path, case: Any = None) -> None:
    Path(workspace).mkdir(parents=True, exist_ok=True)
    (Path(workspace) / "db.json").write_text(json.dumps(DATABASE), encoding="utf-8")


def probe(workspace: Path, result: Any = None, case: Any = None) -> dict[str, Any]:
    data = json.loads((Path(workspace) / "db.json").read_text(encoding="utf-8"))
    return {"orders": {oid: order["status"] for oid, order in data["orders"].items()}}


def _cancel(db: Path, order_id: str, reason: str) -> dict[str, Any]:
    data = json.loads(db.read_text(encoding="utf-8"))
    data["orders"][order_id]["status"] = "cancelled"
    db.write_text(json.dumps(data), encoding="utf-8")
    return {"order_id": order_id, "status": "cancelled", "reason": reason}


def run(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    db = ctx.workspace / "db.json"
    faulty = ctx.config.get("variant") == "faulty"
    calls: list[dict[str, Any]] = [{"name": "get_user", "args": {"user_id": input["user_id"]}}]
    data = json.loads(db.read_text(encoding="utf-8"))
    orders = data["users"][input["user_id"]]["orders"]
    total = 0.0
    for order_id in orders[:1] if faulty else orders:
        reason = "ordered by mistake" if faulty else "no longer needed"
        result = _cancel(db, order_id, reason)
        calls.append(
            {"name": "cancel_pending_order", "args": {"order_id": order_id, "reason": reason},
             "result": result}
        )  # fmt: skip
        total += sum(item["price"] for item in data["orders"][order_id]["items"])
    first = data["orders"][orders[0]]["items"][0]["product"].upper()
    reply = f"Done. Your {first} order is cancelled; a refund of {total:,.2f} is on its way."
    return {"reply": reply, "tool_calls": calls}  # state and a reply: no `output`
