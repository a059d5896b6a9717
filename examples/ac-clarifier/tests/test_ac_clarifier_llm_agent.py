"""The model-backed reviewer (a configuration with a ``model``) against recorded answers.

No network: every chat-completions response is an OpenAI wire-format body replayed with
respx at ``http://llm.test/v1/chat/completions``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from caseforge.agent import AgentContext, parse_response
from caseforge.llm import ModelOutputError
from caseforge.testing import load_case

SUITE = Path(__file__).resolve().parents[1]
if str(SUITE) not in sys.path:
    sys.path.insert(0, str(SUITE))  # the runner puts the suite folder on sys.path too

from clarifier_agent import agent, entry, llm_agent  # noqa: E402

BASE = "http://llm.test/v1"
URL = f"{BASE}/chat/completions"
KEY = "sk-test-Hq3nV8cJx5LpT2wR7zD4mK9bF6gY1sA0"
CLOCK = datetime(2026, 10, 12, 10, 0, tzinfo=timezone(timedelta(hours=8)))
PRICE_IN, PRICE_OUT = 0.40, 1.60  # gpt-4.1-mini, USD per million tokens
CARD = load_case(SUITE / "cases" / "ac-conflict-001.yaml").input["card"]

ANSWER = {
    "goal": "結帳時可輸入部落客專屬優惠碼折抵 NT$150，且優惠碼要有使用次數限制，避免重複折抵。",
    "scope_in": ["結帳頁新增優惠碼輸入框", "套用後顯示折抵金額與折後總額", "優惠碼大小寫不分"],
    "scope_out": ["結帳頁效能（另開一張卡）", "門市 POS 使用同一組碼（明年）"],
    "ac_flags": ["3:conflict", "3:mismatch", "4:unverifiable", "7:unverifiable"],
}


def completion(content: str, prompt_tokens: int = 1500, completion_tokens: int = 160):
    body = {
        "id": "chatcmpl-CLdh2Vn8Kq4xTz7W",
        "object": "chat.completion",
        "created": 1760234400,
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
        "system_fingerprint": "fp_6f2eabb9a5",
    }
    return httpx.Response(200, json=body, headers={"x-request-id": "req_ac_clarifier"})


def answer(**changes: Any) -> httpx.Response:
    return completion(json.dumps({**ANSWER, **changes}, ensure_ascii=False))


@pytest.fixture(autouse=True)
def endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", BASE)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("CASEFORGE_MODEL", raising=False)


def review(tmp_path: Path, mode: str = "checklist", card: str = CARD, **config: Any) -> dict:
    ctx = AgentContext(
        case_id="ac-conflict-001",
        trial=2,
        seed=987654321,
        clock=CLOCK,
        config={"mode": mode, "model": "gpt-4.1-mini", **config},
        workspace_path=tmp_path / "ws",
    )

    async def go() -> dict[str, Any]:
        try:
            return await entry.run({"card": card}, ctx)
        finally:
            await ctx.aclose()

    return asyncio.run(go())


def bodies(route: respx.Route) -> list[dict[str, Any]]:
    return [json.loads(call.request.content) for call in route.calls]


@respx.mock
def test_the_structured_answer_becomes_the_output(tmp_path: Path) -> None:
    route = respx.post(URL).mock(return_value=answer())
    response = review(tmp_path)

    result = parse_response(response)
    assert result.output == ANSWER
    assert result.reply == "" and result.tool_calls == []
    assert result.usage.input_tokens == 1500 and result.usage.output_tokens == 160
    assert result.usage.cost_usd == pytest.approx((1500 * PRICE_IN + 160 * PRICE_OUT) / 1e6)
    assert route.call_count == 1

    (sent,) = bodies(route)
    assert sent["model"] == "gpt-4.1-mini" and sent["stream"] is False
    assert sent["seed"] == 987654321 and sent["temperature"] == 0.0
    assert "tools" not in sent
    fmt = sent["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["goal", "scope_in", "scope_out", "ac_flags"]
    assert schema["additionalProperties"] is False
    assert (
        schema["properties"]["ac_flags"]["items"]["pattern"]
        == r"^\d+:(conflict|unverifiable|mismatch)$"
    )
    system, user = sent["messages"]
    for word in ("goal", "scope_in", "scope_out", "ac_flags", "conflict", "unverifiable"):
        assert word in system["content"]
    assert "mismatch" in system["content"] and "需求釐清" in system["content"]
    assert CARD.strip() in user["content"] and "<card>" in user["content"]


@respx.mock
def test_the_mode_changes_the_instructions(tmp_path: Path) -> None:
    route = respx.post(URL).mock(return_value=answer())
    review(tmp_path / "c", "checklist")
    review(tmp_path / "h", "holistic")
    checklist, holistic = (body["messages"][0]["content"] for body in bodies(route))
    assert "逐條檢查" in checklist and "逐條檢查" not in holistic
    assert "整體閱讀" in holistic and "整體閱讀" not in checklist
    assert "仍然要再跟描述比對" in checklist


@respx.mock
def test_an_invalid_first_answer_gets_one_repair(tmp_path: Path) -> None:
    route = respx.post(URL).mock(
        side_effect=[
            answer(ac_flags=["AC3 conflict", "4:unverifiable"]),
            completion(
                "好的，修正如下：```json\n" + json.dumps(ANSWER, ensure_ascii=False) + "\n```",
                prompt_tokens=1900,
                completion_tokens=170,
            ),
        ]
    )
    response = review(tmp_path)

    assert response["output"] == ANSWER
    assert response["usage"]["input_tokens"] == 1500 + 1900
    assert response["usage"]["output_tokens"] == 160 + 170
    assert {"step": "model", "calls": 2, "repaired": True} in response["trace"]
    first, second = bodies(route)
    assert len(second["messages"]) == len(first["messages"]) + 2
    repair = second["messages"][-1]
    assert repair["role"] == "user"
    assert "'AC3 conflict'" in repair["content"] and "3:conflict" in repair["content"]
    assert second["response_format"] == first["response_format"]


@respx.mock
def test_a_flag_on_an_ac_the_card_does_not_have_is_repaired_then_fails(tmp_path: Path) -> None:
    route = respx.post(URL).mock(
        side_effect=[answer(ac_flags=["9:conflict"]), answer(ac_flags=["12:mismatch"])]
    )
    with pytest.raises(ModelOutputError, match="the card has no AC12"):
        review(tmp_path)
    assert route.call_count == 2
    assert "the card has no AC9" in bodies(route)[1]["messages"][-1]["content"]


@respx.mock
def test_duplicate_flags_and_blank_items_are_dropped(tmp_path: Path) -> None:
    respx.post(URL).mock(
        return_value=answer(
            scope_in=["結帳頁新增優惠碼輸入框", "  "],
            ac_flags=["3:conflict", "3:conflict", "4:unverifiable"],
        )
    )
    output = review(tmp_path)["output"]
    assert output["scope_in"] == ["結帳頁新增優惠碼輸入框"]
    assert output["ac_flags"] == ["3:conflict", "4:unverifiable"]


def test_unknown_mode_and_bad_input_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        review(tmp_path, mode="vibes")
    with pytest.raises(ValueError, match=r"input\.card"):
        review(tmp_path, card="  ")


@respx.mock
@pytest.mark.parametrize("mode", ["checklist", "holistic"])
def test_configs_without_a_model_run_the_offline_reviewer(tmp_path: Path, mode: str) -> None:
    route = respx.post(URL)
    ctx = AgentContext(
        case_id="ac-conflict-001",
        trial=1,
        seed=5,
        clock=CLOCK,
        config={"mode": mode},
        workspace_path=tmp_path,
    )
    through_entry = asyncio.run(entry.run({"card": CARD}, ctx))
    assert through_entry == agent.run({"card": CARD}, ctx)
    assert route.call_count == 0
    assert entry.uses_model({"mode": mode}) is False
    assert entry.uses_model({"mode": mode, "model": "gpt-4.1-mini"}) is True


def test_the_flag_pattern_is_the_schemas() -> None:
    pattern = llm_agent.answer_schema()["properties"]["ac_flags"]["items"]["pattern"]
    assert pattern == llm_agent.FLAG_PATTERN
    parse = llm_agent.parser(set(range(1, 8)))
    with pytest.raises(ValueError, match="must look like"):
        parse({**ANSWER, "ac_flags": ["3:typo"]})
    with pytest.raises(ValueError, match="goal"):
        parse({**ANSWER, "goal": ""})
    with pytest.raises(ValueError, match="scope_out must be a list of strings"):
        parse({**ANSWER, "scope_out": "結帳頁效能"})
