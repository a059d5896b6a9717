"""Read one order (tau-bench's tool shape: a class with invoke and get_info)."""

import json

from tau_bench.envs.tool import Tool


class GetOrderDetails(Tool):
    @staticmethod
    def invoke(data, order_id):
        order = data["orders"].get(order_id)
        return json.dumps(order) if order else "Error: order not found"

    @staticmethod
    def get_info():
        return {
            "type": "function",
            "function": {
                "name": "get_order_details",
                "description": "The status, item and price of an order.",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                },
            },
        }
