"""The model client (OpenAI-compatible endpoints), its disk cache, limiter and cost table.

Names are imported on first use, so importing the cache or the price table does not load
the ``openai`` SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.llm.cache import LLMCache as LLMCache
    from caseforge.llm.cache import cache_key as cache_key
    from caseforge.llm.client import CallStats as CallStats
    from caseforge.llm.client import ChatResult as ChatResult
    from caseforge.llm.client import ModelAuthError as ModelAuthError
    from caseforge.llm.client import ModelClient as ModelClient
    from caseforge.llm.client import ModelError as ModelError
    from caseforge.llm.client import ModelNotFoundError as ModelNotFoundError
    from caseforge.llm.client import ModelOutputError as ModelOutputError
    from caseforge.llm.client import ModelUnavailableError as ModelUnavailableError
    from caseforge.llm.client import ToolRequest as ToolRequest
    from caseforge.llm.client import parse_json_loose as parse_json_loose
    from caseforge.llm.client import redact as redact
    from caseforge.llm.limiter import RateLimiter as RateLimiter
    from caseforge.llm.prices import Price as Price
    from caseforge.llm.prices import PriceTable as PriceTable

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


__getattr__ = lazy_names(
    "caseforge.llm", {name: f"caseforge.llm.{module}" for name, module in _WHERE.items()}
)
