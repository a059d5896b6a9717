"""The model client (OpenAI-compatible endpoints), its disk cache, limiter and cost table.

Names are imported on first use, so importing the cache or the price table does not load
the ``openai`` SDK.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "LLMCache": "cache",
    "cache_key": "cache",
    "CallStats": "client",
    "ChatResult": "client",
    "ModelAuthError": "client",
    "ModelClient": "client",
    "ModelError": "client",
    "ModelNotFoundError": "client",
    "ModelOutputError": "client",
    "ModelUnavailableError": "client",
    "ToolRequest": "client",
    "parse_json_loose": "client",
    "redact": "client",
    "RateLimiter": "limiter",
    "Price": "prices",
    "PriceTable": "prices",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'caseforge.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"caseforge.llm.{_WHERE[name]}"), name)
