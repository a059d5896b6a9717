"""The LangGraph adapter, offline: a ReAct-style graph over a scripted chat model."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain_core")

from langgraph.checkpoint.memory import MemorySaver

from caseforge.adapters.langgraph import INTERCEPTED, langgraph_agent
from caseforge.agent import AgentContext, AgentResult
from caseforge.run.runner import Runner, RunOptions
from caseforge.run.trial import RetryPolicy
from caseforge.store.db import RunStore
from tests.adapters import graph_suite_agent as suite_agent
from tests.conftest import report_json

TICKET = "我们年付的,下个月起不用了,剩下几个月的钱能退吗?"
INPUT = {"ticket": TICKET, "customer_id": "C023"}


def context(tmp_path: Path, case_id: str, trial: int = 1) -> AgentContext:
    return AgentContext(
        case_id=case_id,
        trial=trial,
        seed=1234,
        clock=dt.datetime(2026, 10, 12, 10, tzinfo=dt.timezone(dt.timedelta(hours=8))),
        config={},
        workspace_path=tmp_path / "work" / case_id / str(trial),
    )


def call(agent: Any, tmp_path: Path, case_id: str, input: dict[str, Any] = INPUT) -> AgentResult:
    result = asyncio.run(agent(input, context(tmp_path, case_id)))
    assert isinstance(result, AgentResult)
    return result


def test_tool_calls_then_an_answer(tmp_path: Path) -> None:
    result = call(suite_agent.run, tmp_path, "lookup-answer")
    assert result.paused_for_approval is False
    assert result.reply == "您的企业版年付还剩 11 个整月,可退 6578 元,需要主管审批。"
    assert [(c.name, c.args) for c in result.tool_calls] == [
        ("get_subscription", {"customer_id": "C023"}),
        ("list_invoices", {"customer_id": "C023"}),
    ]
    # Each call carries its ToolMessage's result, JSON parsed.
    assert result.tool_calls[0].result["plan"] == "enterprise"
    assert result.tool_calls[1].result == [
        {"invoice_id": "INV-2026-0091", "status": "paid", "amount_yuan": 7176.0}
    ]
    assert result.output == {"needs_approval": False}
    # usage_metadata summed over the three model turns, priced as gpt-4.1-mini.
    assert (result.usage.input_tokens, result.usage.output_tokens) == (450, 85)
    assert result.usage.cost_usd == pytest.approx((450 * 0.40 + 85 * 1.60) / 1e6)
    # Two input fields: the model is handed the whole input as JSON.
    first = result.trace[0]
    assert first["type"] == "human" and json.loads(first["content"]) == INPUT
    json.dumps(result.model_dump())  # everything is plain JSON data


def test_a_single_text_field_is_the_human_message(tmp_path: Path) -> None:
    result = call(suite_agent.run, tmp_path, "lookup-text", {"ticket": TICKET})
    assert result.trace[0] == {"type": "human", "content": TICKET}


def test_refund_request_pauses_for_approval_before_it_runs(tmp_path: Path) -> None:
    result = call(suite_agent.run, tmp_path, "refund-c023")
    assert result.paused_for_approval is True
    assert result.reply == ""  # the model's interim text is not a reply
    names = [c.name for c in result.tool_calls]
    assert names == ["get_subscription", "list_invoices", "create_refund_request"]
    assert result.tool_calls[1].result[0]["invoice_id"] == "INV-2026-0091"
    refund = result.tool_calls[-1]
    assert refund.args == {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0}
    assert refund.result == INTERCEPTED == {"status": "intercepted_for_approval"}
    assert result.output == {"needs_approval": True}
    # The interrupt stopped the graph before the tool ran: nothing was filed.
    assert not (tmp_path / "work" / "refund-c023" / "1" / suite_agent.REFUNDS).exists()
    assert {"interrupt": {"action": "supervisor_approval", "requests": [refund.args]}} in (
        result.trace
    )


def test_static_interrupt_pauses_only_before_an_approval_tool(tmp_path: Path) -> None:
    build = functools.partial(
        suite_agent.build_graph,
        approval_node=False,
        interrupt_before=["tools"],
        checkpointer=MemorySaver(),  # shared by every call, as a module-level graph's would be
    )
    agent = langgraph_agent(build, approval_tools={"create_refund_request"})
    result = call(agent, tmp_path, "refund-static")
    # The stop before get_subscription/list_invoices was resumed; the one before the
    # refund request was not.
    assert result.paused_for_approval is True and result.reply == ""
    assert result.tool_calls[0].result["plan"] == "enterprise"
    assert result.tool_calls[-1].result == INTERCEPTED
    assert not (tmp_path / "work" / "refund-static" / "1" / suite_agent.REFUNDS).exists()
    # The same case-trial again, on the same checkpointer: a new thread, not a continuation.
    again = call(agent, tmp_path, "refund-static")
    assert again == result
    # Without approval tools every static stop is resumed: the refund is filed.
    plain = call(langgraph_agent(build), tmp_path, "refund-plain")
    assert plain.paused_for_approval is False
    assert plain.reply == "退款申请已提交,等待主管审批。"
    assert plain.tool_calls[-1].result == {
        "status": "pending_approval",
        "invoice_id": "INV-2026-0091",
    }
    filed = tmp_path / "work" / "refund-plain" / "1" / suite_agent.REFUNDS
    assert json.loads(filed.read_text("utf-8")) == [
        {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0}
    ]


def test_end_to_end_through_the_runner(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    (root / "cases").mkdir(parents=True)
    settings = {
        "name": "graph-support",
        "agent": {"callable": "tests.adapters.graph_suite_agent:run"},
        "outcome_probe": "tests.adapters.graph_suite_agent:probe",
        "trials": 2,
        "concurrency": 2,
        "timeout_s": 30,
    }
    (root / "caseforge.yaml").write_text(json.dumps(settings), encoding="utf-8")
    cases = [
        {
            "id": "refund-c023",
            "input": INPUT,
            "expect": {
                "needs_approval": {"mode": "exact", "value": True},
                "tool_calls": {"must_call": ["get_subscription", "create_refund_request"]},
                "refund": {
                    "mode": "outcome",
                    "value": {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0},
                },
                "reply": {"must_include": ["6578"]},  # cannot be judged while paused
            },
        },
        {
            "id": "lookup-c023",
            "input": INPUT,
            "expect": {
                "needs_approval": {"mode": "exact", "value": False},
                "tool_calls": {"must_not_call": ["create_refund_request"]},
                "refund": {"mode": "outcome", "value": None},
                "reply": {"must_include": ["6578"]},
            },
        },
    ]
    for case in cases:
        text = json.dumps(case, ensure_ascii=False)
        (root / "cases" / f"{case['id']}.yaml").write_text(text, encoding="utf-8")
    store = RunStore(f"sqlite:///{tmp_path / 'store.db'}")
    options = RunOptions(suite_dir=root, retry=RetryPolicy(attempts=1), judge="off")
    outcome = asyncio.run(Runner(options, store).run())
    assert outcome.status == "finished" and outcome.executed == 4

    run_id = outcome.runs[0].run_id
    rows = list(store.results(run_id))
    assert sorted((r["case_id"], r["trial"]) for r in rows) == [
        ("lookup-c023", 1),
        ("lookup-c023", 2),
        ("refund-c023", 1),
        ("refund-c023", 2),
    ]
    for row in rows:
        response = json.loads(row["response_json"])
        if row["case_id"] == "refund-c023":
            assert response["paused_for_approval"] is True and response["reply"] == ""
            refund = response["tool_calls"][-1]
            assert refund["name"] == "create_refund_request"
            assert refund["args"] == {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0}
            assert refund["result"] == INTERCEPTED
        else:
            assert response["paused_for_approval"] is False
            assert "6578" in response["reply"]

    report = report_json(store, run_id)
    trials = {(c["id"], t["trial"]): t for c in report["cases"] for t in c["trials"]}
    assert {k: t["status"] for k, t in trials.items()} == {
        ("refund-c023", 1): "pass",
        ("refund-c023", 2): "pass",
        ("lookup-c023", 1): "pass",
        ("lookup-c023", 2): "pass",
    }


@pytest.mark.parametrize("returned", [None, "graph", {"nodes": []}, object()])
def test_build_must_return_a_graph(tmp_path: Path, returned: Any) -> None:
    agent = langgraph_agent(lambda ctx: returned)
    with pytest.raises(TypeError, match=r"returned \w+, not a LangGraph graph"):
        call(agent, tmp_path, "lookup-answer")


def test_an_uncompiled_graph_or_an_async_build_is_accepted(tmp_path: Path) -> None:
    async def build(ctx: AgentContext) -> Any:
        return suite_agent.build_graph(ctx).builder  # the StateGraph behind the compiled one

    result = call(langgraph_agent(build), tmp_path, "lookup-async")
    assert result.reply.endswith("需要主管审批。") and len(result.tool_calls) == 2


def test_missing_langgraph_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.pregel", None)
    with pytest.raises(ImportError, match=r"install caseforge\[langgraph\]"):
        langgraph_agent(lambda ctx: None)


def test_a_conversation_keeps_the_graphs_thread_across_turns(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    (root / "cases").mkdir(parents=True)
    settings = {"name": "graph-talk", "agent": {"callable": "tests.adapters.graph_talk_agent:run"},
                "trials": 1}  # fmt: skip
    (root / "caseforge.yaml").write_text(json.dumps(settings), encoding="utf-8")
    case = {
        "id": "talk",
        "input": {"channel": "chat"},
        "conversation": {
            "max_turns": 4,
            "script": [
                {"say": "我想退款。", "expect": {"reply": {"must_include": ["客户编号"]}}},
                {"say": "C023", "expect": {"reply": {"must_include": ["确认"]}}},
                {"say": "确认。"},
            ],
        },
        "expect": {
            "tool_calls": {"must_call": [{"name": "create_refund_request",
                                          "args": {"customer_id": "C023"}, "count": 1}]},
            "turn_count": {"mode": "number", "value": 3},
            "needs_approval": {"mode": "exact", "value": True},  # the pause ends it
        },
    }  # fmt: skip
    (root / "cases" / "talk.jsonl").write_text(json.dumps(case, ensure_ascii=False) + "\n")
    store = RunStore(f"sqlite:///{tmp_path / 'r.db'}")
    outcome = asyncio.run(Runner(RunOptions(suite_dir=root), store).run())
    [row] = list(store.results(outcome.runs[0].run_id))
    assert row["status"] == "pass", row["checks_json"]
    response = json.loads(row["response_json"])
    assert response["ended_by"] == "approval"
    agent_turns = [t for t in response["transcript"] if t["role"] == "agent"]
    assert [len(t["tool_calls"]) for t in agent_turns] == [0, 0, 1]  # each turn its own calls
