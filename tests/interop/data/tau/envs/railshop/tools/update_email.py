"""Change a user's email: a write."""

from tau_bench.envs.tool import Tool


class UpdateEmail(Tool):
    @staticmethod
    def invoke(data, user_id, email):
        user = data["users"].get(user_id)
        if user is None:
            return "Error: user not found"
        user["email"] = email
        return f"email of {user_id} is now {email}"

    @staticmethod
    def get_info():
        return {
            "type": "function",
            "function": {
                "name": "update_email",
                "description": "Change the email address of a user.",
                "parameters": {
                    "type": "object",
                    "properties": {"user_id": {"type": "string"}, "email": {"type": "string"}},
                    "required": ["user_id", "email"],
                },
            },
        }
