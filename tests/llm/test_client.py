"""The model client against recorded wire-format responses: no network."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import respx

from caseforge.case.suite import ModelSettings
from caseforge.llm import (
    LLMCache,
    ModelAuthError,
    ModelClient,
    ModelNotFoundError,
    ModelOutputError,
    ModelUnavailableError,
    RateLimiter,
    parse_json_loose,
    redact,
)
from tests.llm.wire import BASE, KEY, completion, error, ok, tool_call

URL = f"{BASE}/chat/completions"


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def client(sleep: Sleeps | None = None, **kwargs: Any) -> ModelClient:
    return ModelClient(
        model="gpt-4.1-mini", api_key=KEY, base_url=BASE, sleep=sleep or Sleeps(), **kwargs
    )


def ask(c: ModelClient, **kwargs: Any) -> Any:
    return asyncio.run(c.chat([{"role": "user", "content": "hi"}], **kwargs))


@respx.mock
def test_a_plain_answer_with_usage_and_cost() -> None:
    route = respx.post(URL).mock(
        return_value=ok(completion("hello", prompt_tokens=1000, completion_tokens=500))
    )
    c = client()
    result = ask(c)
    assert result.text == "hello" and not result.cached
    assert result.cost_usd == pytest.approx(
        (1000 * 0.40 + 500 * 1.60) / 1e6
    )  # the dated name is priced
    sent = json.loads(route.calls[0].request.content)
    assert sent["stream"] is False and sent["temperature"] == 0.0
    assert route.calls[0].request.headers["authorization"] == f"Bearer {KEY}"
    assert c.stats.calls == 1 and c.stats.cost_usd == result.cost_usd


@respx.mock
def test_429_honours_retry_after_then_succeeds() -> None:
    respx.post(URL).mock(
        side_effect=[
            error(429, "Rate limit reached", "rate_limit_exceeded", **{"retry-after": "7"}),
            ok(completion("fine")),
        ]
    )
    sleeps = Sleeps()
    result = ask(client(sleeps))
    assert result.text == "fine"
    assert sleeps.waits == [7.0]


@respx.mock
def test_retry_after_ms_and_backoff_without_a_hint() -> None:
    respx.post(URL).mock(
        side_effect=[
            error(429, "slow down", **{"retry-after-ms": "250"}),
            error(500, "oops"),
            error(503, "overloaded"),
            ok(completion("ok")),
        ]
    )
    sleeps = Sleeps()
    c = client(sleeps, backoff_s=0.5)
    assert ask(c).text == "ok"
    assert sleeps.waits == [0.25, 1.0, 2.0]  # hint, then 0.5·2^1, 0.5·2^2
    assert c.stats.retries == 3


@respx.mock
def test_500_until_attempts_run_out() -> None:
    respx.post(URL).mock(return_value=error(500, "The server had an error"))
    with pytest.raises(ModelUnavailableError, match="still failing after 4 attempts"):
        ask(client())


@respx.mock
def test_auth_error_fails_fast_and_never_shows_the_key() -> None:
    echoed = (
        f"Incorrect API key provided: {KEY[:8]}****{KEY[-4:]}. You can find your API key at ..."
    )
    route = respx.post(URL).mock(return_value=error(401, echoed, "invalid_api_key"))
    with pytest.raises(ModelAuthError) as info:
        ask(client())
    assert route.call_count == 1  # no retry
    text = str(info.value)
    assert "check OPENAI_API_KEY" in text and KEY not in text and KEY[:8] not in text


@respx.mock
def test_unknown_model_fails_fast() -> None:
    respx.post(URL).mock(
        return_value=error(404, "The model `gpt-9` does not exist", "model_not_found")
    )
    with pytest.raises(ModelNotFoundError, match=r"model 'gpt-4\.1-mini' not found"):
        ask(client())


def test_other_errors_are_redacted() -> None:
    assert redact(f"boom {KEY} and {KEY[:12]}…", [KEY]) == "boom *** and ***…"


@respx.mock
def test_structured_output_and_fallback_when_unsupported() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    route = respx.post(URL).mock(
        side_effect=[
            error(400, "response_format json_schema is not supported by this model"),
            ok(completion('Sure! ```json\n{"x": 3,}\n```')),
        ]
    )
    c = client()
    value, results = asyncio.run(
        c.chat_json([{"role": "user", "content": "x?"}], schema, lambda d: d["x"])
    )
    assert value == 3 and len(results) == 1
    first, second = (json.loads(call.request.content) for call in route.calls)
    assert first["response_format"]["type"] == "json_schema"
    assert "response_format" not in second
    assert "JSON schema" in second["messages"][-1]["content"]


@respx.mock
def test_malformed_json_gets_one_repair_then_gives_up() -> None:
    def parse(data: Any) -> str:
        if data.get("verdict") not in ("pass", "fail"):
            raise ValueError("verdict must be pass or fail")
        return str(data["verdict"])

    schema = {"type": "object"}
    respx.post(URL).mock(
        side_effect=[ok(completion("The answer is pass.")), ok(completion('{"verdict": "pass"}'))]
    )
    value, results = asyncio.run(
        client().chat_json([{"role": "user", "content": "?"}], schema, parse)
    )
    assert value == "pass" and len(results) == 2

    respx.post(URL).mock(
        side_effect=[ok(completion("nope")), ok(completion('{"verdict": "maybe"}'))]
    )
    with pytest.raises(ModelOutputError, match="stayed invalid after one repair"):
        asyncio.run(client().chat_json([{"role": "user", "content": "?"}], schema, parse))


@respx.mock
def test_a_tool_calling_conversation() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_subscription",
                "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}}},
            },
        }
    ]
    route = respx.post(URL).mock(
        side_effect=[
            ok(
                completion(None, [tool_call("call_1", "get_subscription", {"customer_id": "C023"})])
            ),
            ok(completion("Your plan is enterprise yearly.")),
        ]
    )
    c = client()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "my plan?"}]
    first = asyncio.run(c.chat(messages, tools=tools))
    assert first.finish_reason == "tool_calls"
    assert [(t.name, t.parsed_arguments()) for t in first.tool_calls] == [
        ("get_subscription", {"customer_id": "C023"})
    ]
    messages += [
        first.assistant_message(),
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps({"plan": "enterprise"})},
    ]
    final = asyncio.run(c.chat(messages, tools=tools))
    assert final.text == "Your plan is enterprise yearly."
    sent = json.loads(route.calls[1].request.content)
    assert sent["messages"][1]["tool_calls"][0]["function"]["name"] == "get_subscription"
    assert sent["tools"][0]["function"]["name"] == "get_subscription"


@respx.mock
def test_cache_hits_and_trial_scope(tmp_path: Path) -> None:
    route = respx.post(URL).mock(return_value=ok(completion("cached")))
    cache = LLMCache(tmp_path / "llm.db")
    c = client(cache=cache)
    ask(c, scope={"trial": 1, "seed": 5})
    again = ask(c, scope={"trial": 1, "seed": 5})
    assert again.cached and again.cost_usd == 0.0 and route.call_count == 1
    ask(c, scope={"trial": 2, "seed": 6})  # another trial is another sample
    assert route.call_count == 2 and c.stats.cache_hits == 1 and c.stats.saved_usd > 0
    reuse = client(cache=cache, reuse_trials=True)
    ask(reuse, scope={"trial": 9, "seed": 1})
    ask(reuse, scope={"trial": 10, "seed": 2})
    assert route.call_count == 3  # with --reuse-trials the scope no longer splits the cache


def test_rate_limiter_waits_for_the_window() -> None:
    now = [0.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(rpm=2, tpm=1000, clock=lambda: now[0], sleep=sleep)

    async def go() -> None:
        await limiter.acquire(100)
        await limiter.acquire(100)
        await limiter.acquire(100)  # third request in the same minute waits
        now[0] += 61
        await limiter.acquire(950)
        await limiter.acquire(100)  # 950 + 100 > 1000 tokens per minute

    asyncio.run(go())
    assert waits == [60.0, 60.0]


def test_from_settings_needs_an_endpoint() -> None:
    settings = ModelSettings(model="gpt-4.1-mini", rpm=30)  # extra keys are client options
    assert ModelClient.from_settings(settings, env={}) is None
    local = ModelClient.from_settings(
        settings, env={"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}
    )
    assert local is not None and local.endpoint.startswith("http://127.0.0.1") and local.rpm == 30
    override = ModelClient.from_settings(
        settings, env={"OPENAI_API_KEY": "k", "CASEFORGE_MODEL": "gpt-4o"}
    )
    assert override is not None and override.model == "gpt-4o"


def test_parse_json_loose() -> None:
    assert parse_json_loose('noise {"a": [1, 2,], "b": "}"} tail') == {"a": [1, 2], "b": "}"}
    with pytest.raises(ValueError):
        parse_json_loose("no json here")


@respx.mock
def test_the_cache_key_includes_the_endpoint(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "llm.db")
    respx.post(URL).mock(return_value=ok(completion("from the first server")))
    respx.post("http://other.test/v1/chat/completions").mock(return_value=ok(completion("second")))
    assert ask(client(cache=cache)).text == "from the first server"
    other = ModelClient(
        model="gpt-4.1-mini", api_key=KEY, base_url="http://other.test/v1", cache=cache
    )
    assert ask(other).text == "second"  # same model name, another server: not a cache hit


@respx.mock
def test_after_the_fallback_every_call_carries_the_schema_in_the_prompt() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    route = respx.post(URL).mock(
        side_effect=[
            error(400, "response_format json_schema is not supported"),
            ok(completion('{"x": 1}')),
            ok(completion('{"x": 2}')),
        ]
    )
    c = client()
    for expected in (1, 2):
        value, _ = asyncio.run(
            c.chat_json([{"role": "user", "content": "x?"}], schema, lambda d: d["x"])
        )
        assert value == expected
    last = json.loads(route.calls[-1].request.content)
    assert "response_format" not in last and "JSON schema" in last["messages"][-1]["content"]


@respx.mock
def test_an_unrelated_400_does_not_switch_structured_output_off() -> None:
    respx.post(URL).mock(
        return_value=error(400, "This model's maximum context length is 8192 tokens")
    )
    c = client()
    with pytest.raises(Exception, match="rejected the request"):
        asyncio.run(c.chat([{"role": "user", "content": "x"}], json_schema={"type": "object"}))
    assert c._structured_ok


def test_the_key_is_not_in_the_repr() -> None:
    assert KEY not in repr(client())
