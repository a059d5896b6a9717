"""Cancel a pending order: a write."""

from tau_bench.envs.tool import Tool


class CancelPendingOrder(Tool):
    @staticmethod
    def invoke(data, order_id, reason):
        order = data["orders"].get(order_id)
        if order is None or order["status"] != "pending":
            return "Error: only a pending order can be cancelled"
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        return f"cancelled {order_id}; refund {order['price']:.2f}"

    @staticmethod
    def get_info():
        return {
            "type": "function",
            "function": {
                "name": "cancel_pending_order",
                "description": "Cancel a pending order and refund it.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "order_id": {"type": "string"},
                        "reason": {
                            "type": "string",
                            "enum": ["no longer needed", "ordered by mistake"],
                        },
                    },
                    "required": ["order_id", "reason"],
                },
            },
        }
