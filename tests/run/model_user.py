"""A customer played by a model (the suite's `simulator:`), as recorded wire responses:
the case, and what the model answers to each agent turn. Shared by the runner's tests and
the web app's."""

from __future__ import annotations

from typing import Any

MODEL_USER = """\
id: refund-model-customer
input: {channel: chat}
conversation:
  max_turns: 5
  user:
    model: true
    instruction: 我想退掉年付剩下的钱。
    facts: {customer_id: C023}
expect:
  tool_calls:
    must_call: [{name: create_refund_request, args: {customer_id: C023}, count: 1}]
source: manual
"""


def customer_replies(request: Any) -> Any:
    """The model playing the customer, as recorded wire responses: it reads the agent's
    last message (its own `user` turn) and answers as the customer would."""
    import json

    import httpx

    from tests.llm.wire import completion

    body = json.loads(request.content)
    assert body["messages"][0]["role"] == "system" and "C023" in body["messages"][0]["content"]
    last = body["messages"][-1]["content"]
    if "客户编号" in last:
        text = "我的客户编号是 C023。"
    elif "确认" in last:
        text = "确认。"
    elif last.startswith("(The agent"):
        text = "我想退掉年付剩下的钱。"
    else:
        text = "###STOP###"
    return httpx.Response(200, json=completion(text, prompt_tokens=200, completion_tokens=12))
