"""The model client (OpenAI-compatible endpoints), its disk cache, limiter and cost table."""

from caseforge.llm.cache import LLMCache, cache_key
from caseforge.llm.client import (
    CallStats,
    ChatResult,
    ModelAuthError,
    ModelClient,
    ModelError,
    ModelNotFoundError,
    ModelOutputError,
    ModelUnavailableError,
    ToolRequest,
    parse_json_loose,
    redact,
)
from caseforge.llm.limiter import RateLimiter
from caseforge.llm.prices import Price, PriceTable

__all__ = [
    "CallStats",
    "ChatResult",
    "LLMCache",
    "ModelAuthError",
    "ModelClient",
    "ModelError",
    "ModelNotFoundError",
    "ModelOutputError",
    "ModelUnavailableError",
    "Price",
    "PriceTable",
    "RateLimiter",
    "ToolRequest",
    "cache_key",
    "parse_json_loose",
    "redact",
]
