"""The fictional order book the agent's tool reads."""

from __future__ import annotations

ORDERS = {
    "ORD-2031": {"status": "shipped", "carrier": "Northwind Post", "eta": "2026-12-08"},
    "ORD-2044": {"status": "preparing", "carrier": None, "eta": "2026-12-11"},
    "ORD-2057": {"status": "delivered", "carrier": "Northwind Post", "eta": "2026-12-02"},
}


def lookup(order_id: str) -> dict[str, object]:
    """An order's status; an unknown id raises, as a real order service answers 404."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return {"order_id": order_id, **ORDERS[order_id]}
