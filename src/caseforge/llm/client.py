"""One model client for any OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama,
llama.cpp server, a LiteLLM proxy), on the official ``openai`` SDK.

- configured by ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` and the suite's ``judge:`` /
  ``synth:`` settings (``CASEFORGE_MODEL`` overrides the model);
- retries 429 and 5xx responses and dropped connections with backoff, honouring
  ``Retry-After`` (and ``retry-after-ms``); fails fast, with a message saying what to fix,
  on a rejected key or an unknown model;
- a requests-per-minute and tokens-per-minute limiter;
- structured output (a JSON schema) where the endpoint supports it, else the schema in the
  prompt, a tolerant parser and one repair retry;
- a disk cache and a cost table; the API key never appears in an error, a log, the store or
  a report.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import json
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack
from urllib.parse import urlsplit

import httpx
import openai
from openai.types.chat import ChatCompletion
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from caseforge.errors import BudgetExceeded, CaseforgeError
from caseforge.jsontypes import JSONObject, JSONValue
from caseforge.llm.budget import SpendMeter
from caseforge.llm.cache import LLMCache, cache_key
from caseforge.llm.limiter import Limiter, RateLimiter
from caseforge.llm.prices import PriceTable
from caseforge.tracing import own

T = TypeVar("T")
DEFAULT_ENDPOINT = "https://api.openai.com/v1"


class ModelError(CaseforgeError):
    """A model call failed in a way the user has to fix or wait out."""


class ModelAuthError(ModelError):
    """The endpoint rejected the credentials."""


class ModelNotFoundError(ModelError):
    """The endpoint does not know the model."""


class ModelUnavailableError(ModelError):
    """Still rate-limited or failing after every retry."""


class ModelOutputError(ModelError):
    """The model's answer stayed invalid after one repair retry."""


class ModelReplayError(ModelError):
    """A replaying transport had no recorded answer for the request."""


def redact(text: str, secrets: list[str]) -> str:
    """Remove every secret (and any prefix of 8+ characters of one) from ``text``."""
    for secret in secrets:
        if not secret or len(secret) < 8:
            continue
        text = text.replace(secret, "***")
        # Endpoints echo a key partly ("sk-abc...wxyz"): drop long fragments of it too.
        for size in (16, 12, 8):
            for start in range(0, len(secret) - size + 1, size):
                fragment = secret[start : start + size]
                if fragment in text:
                    text = text.replace(fragment, "***")
    return text


def parse_json_loose(text: str) -> JSONValue:
    """JSON from a model's answer: code fences, prose around it, trailing commas tolerated."""
    stripped = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", stripped, re.S)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        whole: JSONValue = json.loads(stripped)
    except ValueError:
        pass
    else:
        return whole
    start = min((i for i in (stripped.find("{"), stripped.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ValueError("no JSON object in the answer")
    depth, in_string, escape = 0, False, False
    for index in range(start, len(stripped)):
        char = stripped[index]
        if in_string:
            if escape:
                escape = False
            elif char == "\\":
                escape = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                candidate = stripped[start : index + 1]
                candidate = re.sub(r",\s*([}\]])", r"\1", candidate)
                found: JSONValue = json.loads(candidate)
                return found
    raise ValueError("unbalanced JSON in the answer")


@dataclass
class ToolRequest:
    """A tool call the model asked for."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> JSONObject:
        try:
            value: JSONValue = json.loads(self.arguments or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass
class ChatResult:
    """One model answer with its usage and cost."""

    text: str
    tool_calls: list[ToolRequest]
    finish_reason: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    cached: bool
    response: JSONObject

    def assistant_message(self) -> JSONObject:
        """The answer as a message to append to the conversation."""
        message: JSONObject = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": t.id,
                    "type": "function",
                    "function": {"name": t.name, "arguments": t.arguments},
                }
                for t in self.tool_calls
            ]
        return message


@dataclass
class CallStats:
    """What a client has spent, and what its cache saved."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    saved_usd: float = 0.0
    unpriced_calls: int = 0

    def to_json(self) -> dict[str, int | float]:
        return dict(self.__dict__)


class ClientOptions(TypedDict, total=False):
    """The :class:`ModelClient` settings ``from_settings`` takes as overrides."""

    timeout_s: float
    max_attempts: int
    backoff_s: float
    max_retry_wait_s: float
    rpm: int | None
    tpm: int | None
    structured: str
    reuse_trials: bool
    default_scope: Mapping[str, object] | None
    sleep: Callable[[float], Awaitable[None]]
    stats: CallStats


class ChatOptions(TypedDict, total=False):
    """What :meth:`ModelClient.chat_json` passes on to :meth:`ModelClient.chat`."""

    tools: Sequence[Mapping[str, object]] | None
    tool_choice: object
    temperature: float
    seed: int | None
    max_tokens: int | None
    schema_name: str
    scope: Mapping[str, object] | None


def _object(value: JSONValue | None) -> JSONObject:
    return value if isinstance(value, dict) else {}


def _list(value: JSONValue | None) -> list[JSONValue]:
    return value if isinstance(value, list) else []


def _count(value: JSONValue | None) -> int:
    """A token count from a usage block (missing or null counts 0)."""
    if not value:
        return 0
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"not a token count: {value!r}")


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def _our_error(exc: BaseException) -> CaseforgeError | None:
    """The caseforge error an HTTP transport raised, which the SDK wrapped as a connection
    error: its message says what to do, the SDK's says only "Connection error."."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, CaseforgeError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIConnectionError | openai.RateLimitError):
        return True  # APITimeoutError is an APIConnectionError
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


class ModelOptions(TypedDict, total=False):
    """What ``ctx.llm(model, **options)`` passes on to its :class:`ModelClient` (besides
    ``prices`` and ``limiter``; the context sets the rest: the endpoint, the fixtures' HTTP
    client, the cache, the budget)."""

    timeout_s: float
    max_attempts: int
    backoff_s: float
    max_retry_wait_s: float
    rpm: int | None
    tpm: int | None
    structured: str  # auto | json_schema | off


@dataclass
class ModelClient:
    """Chat completions against one model on one endpoint."""

    model: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    timeout_s: float = 60.0
    max_attempts: int = 4
    backoff_s: float = 1.0
    max_retry_wait_s: float = 60.0
    rpm: int | None = None
    tpm: int | None = None
    cache: LLMCache | None = None
    prices: PriceTable = field(default_factory=PriceTable)
    http_client: httpx.AsyncClient | None = None
    structured: str = "auto"  # auto | json_schema | off
    reuse_trials: bool = False
    default_scope: Mapping[str, object] | None = None  # e.g. the case-trial a call belongs to
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    stats: CallStats = field(default_factory=CallStats)
    budget: SpendMeter | None = None  # a run's --max-cost: checked before each request
    budget_refused: bool = False  # the budget refused a request of this client
    limiter: Limiter | None = None  # shared by a run's clients (rate_limit:); else rpm/tpm

    def __post_init__(self) -> None:
        self._client = openai.AsyncOpenAI(
            api_key=self.api_key or "not-needed",
            base_url=self.base_url,
            timeout=self.timeout_s,
            max_retries=0,  # retries are ours, so Retry-After and the limiter are honoured
            http_client=self.http_client,
        )
        self._limiter: Limiter = self.limiter or RateLimiter(self.rpm, self.tpm, sleep=self.sleep)
        # The SDK imports its chat resource on first use, half a second in a new process: done
        # here, not between the limiter's grant and the request, where it would bunch them.
        self._completions = self._client.chat.completions
        self._structured_ok = self.structured != "off"

    @property
    def endpoint(self) -> str:
        return self.base_url or DEFAULT_ENDPOINT

    @classmethod
    def from_settings(
        cls,
        settings: object,
        *,
        cache_dir: Path | None = None,
        prices: Mapping[str, Mapping[str, float]] | None = None,
        http_client: httpx.AsyncClient | None = None,
        env: dict[str, str] | None = None,
        **overrides: Unpack[ClientOptions],
    ) -> ModelClient | None:
        """A client from ``judge:``/``synth:`` settings and the environment, or None when no
        endpoint is configured (no ``OPENAI_API_KEY`` and no ``OPENAI_BASE_URL``)."""
        env = dict(os.environ) if env is None else env
        api_key = env.get("OPENAI_API_KEY")
        base_url = env.get("OPENAI_BASE_URL")
        model = env.get("CASEFORGE_MODEL") or getattr(settings, "model", None)
        if not model or not (api_key or base_url):
            return None
        options = {
            key: getattr(settings, key)
            for key in ("timeout_s", "max_attempts", "rpm", "tpm", "structured")
            if getattr(settings, key, None) is not None
        }
        return cls(
            model=model,
            api_key=api_key,
            base_url=base_url,
            cache=LLMCache(cache_dir / "llm.db") if cache_dir else None,
            prices=PriceTable(prices),
            http_client=http_client,
            **{**options, **overrides},
        )

    def _secrets(self) -> list[str]:
        return [self.api_key] if self.api_key else []

    def _fail(self, exc: Exception) -> ModelError:
        status = getattr(exc, "status_code", None)
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return ModelAuthError(
                f"{self.endpoint} rejected the credentials for model {self.model!r} "
                f"(HTTP {status}): check OPENAI_API_KEY"
            )
        if isinstance(exc, openai.NotFoundError):
            return ModelNotFoundError(
                f"model {self.model!r} not found at {self.endpoint} (HTTP 404): check the model "
                "name (judge.model / synth.model in caseforge.yaml, or CASEFORGE_MODEL)"
            )
        detail = redact(str(exc), self._secrets())[:300]
        if _retryable(exc):
            return ModelUnavailableError(
                f"{self.endpoint} still failing after {self.max_attempts} attempts: {detail}"
            )
        return ModelError(f"{self.endpoint} rejected the request for {self.model!r}: {detail}")

    def _wait(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        hinted = _retry_after(exc) if exc is not None else None
        if hinted is not None:
            return min(hinted, self.max_retry_wait_s)
        attempt = int(retry_state.attempt_number)
        return float(min(self.backoff_s * 2.0 ** (attempt - 1), self.max_retry_wait_s))

    async def chat(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        tools: Sequence[Mapping[str, object]] | None = None,
        tool_choice: object = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
        json_schema: Mapping[str, object] | None = None,
        schema_name: str = "answer",
        scope: Mapping[str, object] | None = None,
    ) -> ChatResult:
        """One chat completion (never streamed); cached, limited, retried, priced. When
        caseforge exports its own spans, the call is a ``chat {model}`` span."""
        options: dict[str, Any] = {
            "tools": tools,
            "tool_choice": tool_choice,
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            "json_schema": json_schema,
            "schema_name": schema_name,
            "scope": scope,
        }
        if not own.enabled():
            return await self._chat(messages, **options)
        host = urlsplit(self.endpoint)
        attributes: dict[str, object] = {
            "gen_ai.operation.name": "chat",
            **own.provider_attribute("openai"),
            "gen_ai.request.model": self.model,
            "gen_ai.request.temperature": temperature,
            "gen_ai.request.seed": seed,
            "gen_ai.request.max_tokens": max_tokens,
            "server.address": host.hostname,
            "server.port": host.port,
        }
        with own.span(f"chat {self.model}", attributes, kind="client") as span:
            if span is not None:
                span.set_content("gen_ai.input.messages", list(messages))
            result = await self._chat(messages, **options)
            if span is not None:
                span.set(
                    {
                        "gen_ai.response.model": result.response.get("model"),
                        "gen_ai.response.finish_reasons": [result.finish_reason or ""],
                        "gen_ai.usage.input_tokens": result.input_tokens,
                        "gen_ai.usage.output_tokens": result.output_tokens,
                        "caseforge.cached": result.cached,
                        "caseforge.cost_usd": result.cost_usd,
                    }
                )
                span.set_content("gen_ai.output.messages", [result.assistant_message()])
            return result

    async def _chat(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        tools: Sequence[Mapping[str, object]] | None = None,
        tool_choice: object = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
        json_schema: Mapping[str, object] | None = None,
        schema_name: str = "answer",
        scope: Mapping[str, object] | None = None,
    ) -> ChatResult:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            "stream": False,
        }
        if tools:
            request["tools"] = tools
        if tool_choice is not None:
            request["tool_choice"] = tool_choice
        if seed is not None:
            request["seed"] = seed
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if json_schema is not None and self._structured_ok:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema, "strict": True},
            }
        elif json_schema is not None:  # no structured output here: the schema goes in the prompt
            request["messages"] = _with_schema_prompt(messages, json_schema)
        scope = scope if scope is not None else self.default_scope
        # The endpoint is part of the key: two servers may serve the same model name.
        key = cache_key(
            {**request, "endpoint": self.endpoint}, None if self.reuse_trials else scope
        )
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                result = self._result(hit, cached=True)
                self.stats.cache_hits += 1
                self.stats.saved_usd += (
                    self.prices.cost(self.model, result.input_tokens, result.output_tokens) or 0.0
                )
                return result
        if self.budget is not None:
            try:
                self.budget.before_model_call()
            except BudgetExceeded:
                self.budget_refused = True
                raise
        try:
            response = await self._create(request)
        except openai.BadRequestError as exc:
            unsupported = re.search(r"response_format|json_schema|structured", str(exc), re.I)
            if "response_format" in request and self.structured == "auto" and unsupported:
                # The endpoint has no structured output: from now on the schema goes in the
                # prompt of every call (other 400s, say a too-long context, are not this).
                self._structured_ok = False
                return await self._chat(
                    messages,
                    tools=tools,
                    tool_choice=tool_choice,
                    temperature=temperature,
                    seed=seed,
                    max_tokens=max_tokens,
                    json_schema=json_schema,
                    schema_name=schema_name,
                    scope=scope,
                )
            raise self._fail(exc) from None
        data: JSONObject = response.model_dump(mode="json")
        if self.cache is not None:
            self.cache.put(key, self.model, data)
        result = self._result(data, cached=False)
        self.stats.calls += 1
        self.stats.input_tokens += result.input_tokens
        self.stats.output_tokens += result.output_tokens
        self.stats.cost_usd += result.cost_usd
        if self.budget is not None:
            self.budget.charge_model_call(result.cost_usd)
        return result

    async def _create(self, request: dict[str, Any]) -> ChatCompletion:
        estimate = len(json.dumps(request["messages"], ensure_ascii=False)) // 4 + int(
            request.get("max_tokens") or 256
        )
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(lambda e: _retryable(e) and _our_error(e) is None),
            sleep=self.sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    if attempt.retry_state.attempt_number > 1:
                        self.stats.retries += 1
                    await self._limiter.acquire(estimate)
                    # ``stream`` is always False: the answer is one completion.
                    completion: ChatCompletion = await self._completions.create(**request)
                    return completion
        except openai.BadRequestError:
            raise
        except openai.APIError as exc:
            cause = _our_error(exc)
            if cause is not None:  # e.g. a replaying transport with no recording
                raise ModelReplayError(cause.text) from None
            raise self._fail(exc) from None
        raise ModelUnavailableError(f"{self.endpoint}: no attempt was made")  # unreachable

    def _result(self, data: JSONObject, cached: bool) -> ChatResult:
        choices = _list(data.get("choices"))
        choice = _object(choices[0] if choices else None)
        message = _object(choice.get("message"))
        usage = _object(data.get("usage"))
        input_tokens = _count(usage.get("prompt_tokens"))
        output_tokens = _count(usage.get("completion_tokens"))
        cost = self.prices.cost(self.model, input_tokens, output_tokens)
        if cost is None and not cached:
            self.stats.unpriced_calls += 1
        calls = [
            ToolRequest(
                id=str(call.get("id", "")),
                name=str(_object(call.get("function")).get("name", "")),
                arguments=str(_object(call.get("function")).get("arguments", "")),
            )
            for call in map(_object, _list(message.get("tool_calls")))
        ]
        finish_reason = choice.get("finish_reason")
        return ChatResult(
            text=str(message.get("content") or ""),
            tool_calls=calls,
            finish_reason=None if finish_reason is None else str(finish_reason),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=0.0 if cached else (cost or 0.0),
            cached=cached,
            response=data,
        )

    async def chat_json(
        self,
        messages: Sequence[Mapping[str, object]],
        schema: Mapping[str, object],
        parse: Callable[[JSONValue], T],
        **kwargs: Unpack[ChatOptions],
    ) -> tuple[T, list[ChatResult]]:
        """A JSON answer validated by ``parse`` (which raises ``ValueError`` if it is wrong);
        an invalid answer gets one repair retry, then :class:`ModelOutputError`."""
        results: list[ChatResult] = []
        conversation: list[Mapping[str, object]] = list(messages)
        problem = ""
        for attempt in range(2):
            result = await self.chat(conversation, json_schema=schema, **kwargs)
            results.append(result)
            try:
                return parse(parse_json_loose(result.text)), results
            except (ValueError, TypeError, KeyError) as exc:
                problem = str(exc)[:300]
            if attempt == 0:
                conversation = [
                    *conversation,
                    {"role": "assistant", "content": result.text},
                    {
                        "role": "user",
                        "content": "Your answer was not valid: "
                        f"{problem}. Reply again with only a JSON object matching this schema: "
                        + json.dumps(schema, ensure_ascii=False),
                    },
                ]
        raise ModelOutputError(
            f"the answer of {self.model!r} stayed invalid after one repair: {problem}"
        )

    async def aclose(self) -> None:
        await self._client.close()


def _with_schema_prompt(
    messages: Sequence[Mapping[str, object]], schema: Mapping[str, object]
) -> list[Mapping[str, object]]:
    note = {
        "role": "system",
        "content": "Answer with only a JSON object matching this JSON schema, no prose: "
        + json.dumps(schema, ensure_ascii=False),
    }
    return [*messages, note]
