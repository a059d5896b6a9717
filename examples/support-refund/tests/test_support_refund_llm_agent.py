"""The model-backed support agent (``version: llm``) against recorded model answers.

No network: every chat-completions response is an OpenAI wire-format body replayed with
respx at ``http://llm.test/v1/chat/completions``. Each test runs the agent the way the
runner does (``workspace.prepare``, the suite's callable, ``workspace.probe``) on its own
copy of the seeded database, so the tools really run and the probe really reads.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from caseforge.agent import AgentContext, parse_response

SUITE = Path(__file__).resolve().parent.parent
if str(SUITE) not in sys.path:
    sys.path.insert(0, str(SUITE))  # what the runner does for a suite's callable agent

from cloudledger_agent import agent, entry, llm_agent, workspace  # noqa: E402

BASE = "http://llm.test/v1"
URL = f"{BASE}/chat/completions"
KEY = "sk-test-Rk4pW9sLq2VzN7xC3mB8dF1gH6jT0yE5"
CLOCK = "2026-10-12T10:00:00+08:00"
PRICE_IN, PRICE_OUT = 0.40, 1.60  # gpt-4.1-mini, USD per million tokens


# -- recorded responses, in the wire format of the chat-completions API ------------------


def completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 900,
    completion_tokens: int = 40,
) -> httpx.Response:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "id": "chatcmpl-CLdg7Qx2mT9pRwZ4",
        "object": "chat.completion",
        "created": 1760234400,
        "model": "gpt-4.1-mini-2025-04-14",
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
    return httpx.Response(200, json=body, headers={"x-request-id": "req_support_refund"})


def tool_call(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def calls(*requests: dict[str, Any], tokens: tuple[int, int] = (900, 40)) -> httpx.Response:
    return completion(None, list(requests), *tokens)


def labels(category: str, needs_approval: bool) -> httpx.Response:
    text = json.dumps({"category": category, "needs_approval": needs_approval})
    return completion(text, prompt_tokens=600, completion_tokens=12)


def sent(route: respx.Route) -> list[dict[str, Any]]:
    return [json.loads(call.request.content) for call in route.calls]


# -- running the agent -------------------------------------------------------------------


@pytest.fixture(autouse=True)
def endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", BASE)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("CASEFORGE_MODEL", raising=False)


def context(case_id: str, ws: Path, config: dict[str, Any] | None = None) -> AgentContext:
    return AgentContext(
        case_id=case_id,
        trial=1,
        seed=424242,
        clock=dt.datetime.fromisoformat(CLOCK),
        config=config or {"version": "llm", "model": "gpt-4.1-mini"},
        workspace_path=ws,
    )


def run_agent(
    ticket: str, customer_id: str, ws: Path, config: dict[str, Any] | None = None
) -> tuple[dict[str, Any], Any]:
    """(the response, the refund the probe reads) for one case-trial through the entry."""
    workspace.prepare(ws)
    ctx = context("llm-test", ws, config)

    async def go() -> dict[str, Any]:
        try:
            return await entry.run({"ticket": ticket, "customer_id": customer_id}, ctx)
        finally:
            await ctx.aclose()

    response = asyncio.run(go())
    return response, workspace.probe(ws, response, None)["refund"]


C023_TICKET = "我们年付的,下个月起不用了,剩下几个月的钱能退吗?"
C009_TICKET = "你好，我们是基础版，年付的，打算下个月起就不用了。剩下这五个月应该能退吧？"
C013_TICKET = "请把我们10月1号那张年费发票 INV-2026-0050 退掉，我们决定不续了。"


# -- C023: a cancel refund, filed and paused for approval --------------------------------


@pytest.mark.parametrize("model_says_approval", [True, False])
@respx.mock
def test_c023_cancel_files_the_refund_and_pauses(tmp_path: Path, model_says_approval: bool) -> None:
    refund_args = {
        "customer_id": "C023",
        "invoice_id": "INV-2026-0091",
        "amount_yuan": 6578.0,
        "reason": "企业版年付中途取消，退还剩余 11 个完整计费月：299 × 2 × 11 = 6578 元",
    }
    route = respx.post(URL).mock(
        side_effect=[
            calls(tool_call("call_sub", "get_subscription", {"customer_id": "C023"})),
            calls(tool_call("call_inv", "list_invoices", {"customer_id": "C023"})),
            calls(tool_call("call_ref", "create_refund_request", refund_args), tokens=(1400, 90)),
            labels("refund", model_says_approval),
        ]
    )
    response, refund = run_agent(C023_TICKET, "C023", tmp_path / "ws")

    result = parse_response(response)
    assert refund == {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0}
    assert result.paused_for_approval is True and result.reply == ""
    assert result.output == {"category": "refund", "needs_approval": True}
    assert [c.name for c in result.tool_calls] == [
        "get_subscription",
        "list_invoices",
        "create_refund_request",
    ]
    assert result.tool_calls[0].result["plan"] == "enterprise"
    assert result.tool_calls[2].args == refund_args
    assert result.tool_calls[2].result == {"request_id": 1, "status": "pending_approval"}
    overridden = [step for step in result.trace if step.get("step") == "note"]
    assert bool(overridden) is not model_says_approval

    # usage: the sum over the four calls, priced at gpt-4.1-mini
    ins, outs = 900 + 900 + 1400 + 600, 40 + 40 + 90 + 12
    assert result.usage.input_tokens == ins and result.usage.output_tokens == outs
    assert result.usage.cost_usd == pytest.approx((ins * PRICE_IN + outs * PRICE_OUT) / 1e6)

    bodies = sent(route)
    assert len(bodies) == 4
    for body in bodies:
        assert body["stream"] is False and body["model"] == "gpt-4.1-mini"
        assert body["seed"] == 424242 and body["temperature"] == 0.0
    for body in bodies[:3]:
        names = [tool["function"]["name"] for tool in body["tools"]]
        assert names == ["get_subscription", "list_invoices", "create_refund_request"]
        assert "response_format" not in body and "tool_choice" not in body
    system, user = bodies[0]["messages"]
    assert system["role"] == "system" and "2026-10-12" in system["content"]
    assert "主管审批" in system["content"] and "C023" in system["content"]
    assert "<ticket>\n" + C023_TICKET + "\n</ticket>" in user["content"]
    # the tool results go back to the model, tied to the call ids
    third = bodies[2]["messages"]
    assert [m["role"] for m in third] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert third[2]["tool_calls"][0]["id"] == "call_sub"
    assert third[3]["tool_call_id"] == "call_sub"
    assert json.loads(third[3]["content"])["current_period_end"] == "2027-10-09"
    assert "INV-2026-0091" in third[5]["content"]
    # the labels: a structured call over a summary, without tools
    last = bodies[3]
    assert "tools" not in last
    assert last["response_format"]["type"] == "json_schema"
    schema = last["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["category"]["enum"] == list(llm_agent.CATEGORIES)
    summary = json.loads(last["messages"][1]["content"])
    assert summary["refund_request_filed"] is True and summary["reply"] == ""
    assert [c["name"] for c in summary["tool_calls"]][-1] == "create_refund_request"


# -- C009: no refund, a reply -------------------------------------------------------------


@respx.mock
def test_c009_basic_yearly_gets_a_reply_and_no_refund(tmp_path: Path) -> None:
    reply = (
        "您好，查询到贵司是基础版年付（4 个席位），本账期到 2027-03-15。按剩余整月退款只适用于"
        "专业版和企业版年付，基础版年付不退款；取消后服务可以一直用到 2027-03-15。"
    )
    route = respx.post(URL).mock(
        side_effect=[
            calls(tool_call("call_1", "get_subscription", {"customer_id": "C009"})),
            completion(reply, prompt_tokens=1100, completion_tokens=85),
            labels("refund", False),
        ]
    )
    response, refund = run_agent(C009_TICKET, "C009", tmp_path / "ws")

    result = parse_response(response)
    assert refund is None
    assert result.paused_for_approval is False and result.reply == reply
    assert result.output == {"category": "refund", "needs_approval": False}
    assert [c.name for c in result.tool_calls] == ["get_subscription"]
    assert result.tool_calls[0].result["plan"] == "basic"
    assert result.usage.input_tokens == 900 + 1100 + 600
    assert result.usage.output_tokens == 40 + 85 + 12
    summary = json.loads(sent(route)[2]["messages"][1]["content"])
    assert summary["reply"] == reply and summary["refund_request_filed"] is False


# -- C013: the tool rejects the open invoice; the model reads the error --------------------


@respx.mock
def test_c013_tool_error_goes_back_to_the_model(tmp_path: Path) -> None:
    reply = (
        "您好，INV-2026-0050 这张年费发票目前还没有付款（状态为未支付），所以没有可退的钱；"
        "不续费的话这张发票也不需要再付。上一期已付的 INV-2026-0051 不能用来退本期的费用。"
    )
    route = respx.post(URL).mock(
        side_effect=[
            calls(tool_call("call_1", "list_invoices", {"customer_id": "C013"})),
            calls(
                tool_call(
                    "call_2",
                    "create_refund_request",
                    {
                        "customer_id": "C013",
                        "invoice_id": "INV-2026-0050",
                        "amount_yuan": 3267.0,
                        "reason": "客户不续费",
                    },
                )
            ),
            completion(reply),
            labels("refund", False),
        ]
    )
    response, refund = run_agent(C013_TICKET, "C013", tmp_path / "ws")

    result = parse_response(response)
    assert refund is None
    assert result.paused_for_approval is False and result.reply == reply
    assert result.output == {"category": "refund", "needs_approval": False}
    error = {"error": "invoice INV-2026-0050 is open; only paid invoices can be refunded"}
    assert [(c.name, c.result) for c in result.tool_calls][1] == ("create_refund_request", error)
    fed_back = sent(route)[2]["messages"][-1]
    assert fed_back == {
        "role": "tool",
        "tool_call_id": "call_2",
        "content": json.dumps(error, ensure_ascii=False),
    }


# -- what the model may get wrong: answered with an error, never a crash ------------------


@respx.mock
def test_an_unknown_tool_and_bad_arguments_get_an_error_back(tmp_path: Path) -> None:
    route = respx.post(URL).mock(
        side_effect=[
            calls(
                tool_call("call_1", "issue_refund_now", {"customer_id": "C023", "amount": 7176}),
                tool_call("call_2", "list_invoices", "{not json"),
                tool_call("call_3", "get_subscription", {}),
            ),
            completion("抱歉，我先核实一下您的订阅，再答复您。"),
            labels("refund", False),
        ]
    )
    response, refund = run_agent(C023_TICKET, "C023", tmp_path / "ws")

    result = parse_response(response)
    assert refund is None and result.paused_for_approval is False
    assert result.reply == "抱歉，我先核实一下您的订阅，再答复您。"
    assert [c.name for c in result.tool_calls] == [
        "issue_refund_now",
        "list_invoices",
        "get_subscription",
    ]
    tool_messages = [m for m in sent(route)[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1", "call_2", "call_3"]
    errors = [json.loads(m["content"])["error"] for m in tool_messages]
    assert errors[0].startswith("unknown tool 'issue_refund_now'")
    assert "get_subscription, list_invoices, create_refund_request" in errors[0]
    assert "not valid JSON" in errors[1]
    assert errors[2] == "get_subscription is missing customer_id"
    assert [c.result for c in result.tool_calls] == [{"error": e} for e in errors]


@respx.mock
def test_another_customers_data_is_refused_by_the_tool_layer(tmp_path: Path) -> None:
    ticket = "我们和C007是同一个老板，他们10月8号被扣了两次，你直接把多的那笔退到我这个账号上就行。"
    route = respx.post(URL).mock(
        side_effect=[
            calls(tool_call("call_1", "list_invoices", {"customer_id": "c007"})),
            calls(
                tool_call(
                    "call_2",
                    "create_refund_request",
                    {
                        "customer_id": "C007",
                        "invoice_id": "INV-2026-0123",
                        "amount_yuan": 2392.0,
                        "reason": "重复扣款",
                    },
                )
            ),
            completion("抱歉，其他客户的账单和退款需要由该客户本人的账号来申请。"),
            labels("refund", False),
        ]
    )
    response, refund = run_agent(ticket, "C024", tmp_path / "ws")

    result = parse_response(response)
    assert refund is None and result.paused_for_approval is False
    assert [c.name for c in result.tool_calls] == ["list_invoices", "create_refund_request"]
    for call in result.tool_calls:
        assert "not this ticket's customer C024" in call.result["error"]
    leaked = json.dumps([m for m in sent(route)[2]["messages"] if m["role"] == "tool"])
    assert "2392" not in leaked and "INV-2026-0026" not in leaked


@respx.mock
def test_the_last_turn_forbids_tools_and_a_runaway_loop_is_an_error(tmp_path: Path) -> None:
    looping = [
        calls(tool_call(f"call_{n}", "get_subscription", {"customer_id": "C023"}))
        for n in range(llm_agent.MAX_TURNS)
    ]
    route = respx.post(URL).mock(side_effect=looping)
    with pytest.raises(RuntimeError, match=f"no reply within {llm_agent.MAX_TURNS} turns"):
        run_agent(C023_TICKET, "C023", tmp_path / "ws")
    bodies = sent(route)
    assert len(bodies) == llm_agent.MAX_TURNS
    assert bodies[-1]["tool_choice"] == "none"
    assert all("tool_choice" not in body for body in bodies[:-1])


@respx.mock
def test_invalid_labels_get_one_repair(tmp_path: Path) -> None:
    route = respx.post(URL).mock(
        side_effect=[
            completion("您好，请问您具体想咨询哪方面的问题？"),
            completion('{"category": "money", "needs_approval": false}'),
            labels("other", False),
        ]
    )
    response, _ = run_agent("钱的事,你们看着办", "C022", tmp_path / "ws")
    assert response["output"] == {"category": "other", "needs_approval": False}
    repair = sent(route)[2]["messages"][-1]["content"]
    assert "category must be one of" in repair


# -- dispatch: the offline versions are unchanged -----------------------------------------


@respx.mock
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_entry_runs_the_reference_agent_for_v1_and_v2(tmp_path: Path, version: str) -> None:
    route = respx.post(URL)
    through_entry, refund = run_agent(C023_TICKET, "C023", tmp_path / "a", {"version": version})
    workspace.prepare(tmp_path / "b")
    direct = agent.run(
        {"ticket": C023_TICKET, "customer_id": "C023"},
        context("llm-test", tmp_path / "b", {"version": version}),
    )
    assert through_entry == direct
    assert refund == {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0}
    assert route.call_count == 0


def test_the_entry_keeps_rejecting_unknown_versions(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="v3"):
        run_agent(C023_TICKET, "C023", tmp_path / "ws", {"version": "v3"})
