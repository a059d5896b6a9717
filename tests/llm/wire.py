"""Recorded OpenAI chat-completions responses (wire format), for replay with respx."""

from __future__ import annotations

import json
from typing import Any

import httpx

BASE = "http://llm.test/v1"
KEY = "sk-test-Zq8vN3xKp2LmR7wT9yB4cD6fH1jA5sE0"


def completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 120,
    completion_tokens: int = 30,
    model: str = "gpt-4.1-mini-2025-04-14",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-BXq2cR8dTtEeYyUu",
        "object": "chat.completion",
        "created": 1760260800,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
        "system_fingerprint": "fp_6f2eabb9a5",
    }


def ok(body: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json=body, headers={"x-request-id": "req_123"})


def error(status: int, message: str, code: str | None = None, **headers: str) -> httpx.Response:
    body = {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    }
    return httpx.Response(
        status, content=json.dumps(body), headers={"content-type": "application/json", **headers}
    )


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
