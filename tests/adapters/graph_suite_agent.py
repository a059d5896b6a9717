"""A small LangGraph support agent for the adapter tests, driven by a scripted chat model.

The graph is ReAct-shaped: ``agent -> approval -> tools -> agent``. The approval node
calls ``interrupt()`` before ``create_refund_request`` runs, as a supervisor must approve
every refund request. Which script the model follows is picked by the case id.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from caseforge.adapters.langgraph import INTERCEPTED, langgraph_agent
from caseforge.agent import AgentContext, AgentResult

APPROVAL_TOOLS = {"create_refund_request"}
REFUNDS = "refunds.json"
MODEL = {"model_name": "gpt-4.1-mini"}


def _call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }


def script(case_id: str) -> list[AIMessage]:
    """What the scripted model says, turn by turn, for a case."""
    if case_id.startswith("lookup"):  # two tools, one after the other, then an answer
        return [
            AIMessage(
                content="",
                tool_calls=[_call("get_subscription", "c1", customer_id="C023")],
                usage_metadata=_usage(100, 20),
                response_metadata=MODEL,
            ),
            AIMessage(
                content="",
                tool_calls=[_call("list_invoices", "c2", customer_id="C023")],
                usage_metadata=_usage(150, 25),
                response_metadata=MODEL,
            ),
            AIMessage(
                content="您的企业版年付还剩 11 个整月,可退 6578 元,需要主管审批。",
                usage_metadata=_usage(200, 40),
                response_metadata=MODEL,
            ),
        ]
    if case_id.startswith("refund"):  # two tools at once, then a refund request
        return [
            AIMessage(
                content="",
                tool_calls=[
                    _call("get_subscription", "c1", customer_id="C023"),
                    _call("list_invoices", "c2", customer_id="C023"),
                ],
            ),
            AIMessage(
                content="我来为您提交退款申请。",
                tool_calls=[
                    _call(
                        "create_refund_request",
                        "c3",
                        invoice_id="INV-2026-0091",
                        amount_yuan=6578.0,
                    )
                ],
            ),
            AIMessage(content="退款申请已提交,等待主管审批。"),  # only after a resume
        ]
    raise KeyError(f"no script for case {case_id!r}")


class ScriptedChatModel(GenericFakeChatModel):
    """The fake model answers from its script; binding tools changes nothing."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:  # type: ignore[override]
        return self


def make_tools(workspace: Path) -> list[BaseTool]:
    """The support tools; a refund request is written to the trial's workspace."""

    @tool
    def get_subscription(customer_id: str) -> dict[str, Any]:
        """The customer's subscription."""
        return {"customer_id": customer_id, "plan": "enterprise", "cycle": "yearly", "seats": 2}

    @tool
    def list_invoices(customer_id: str) -> list[dict[str, Any]]:
        """The customer's invoices, newest first."""
        return [{"invoice_id": "INV-2026-0091", "status": "paid", "amount_yuan": 7176.0}]

    @tool
    def create_refund_request(invoice_id: str, amount_yuan: float) -> dict[str, Any]:
        """File a refund request; a supervisor must approve it."""
        path = workspace / REFUNDS
        rows = json.loads(path.read_text("utf-8")) if path.exists() else []
        rows.append({"invoice_id": invoice_id, "amount_yuan": amount_yuan})
        path.write_text(json.dumps(rows), encoding="utf-8")
        return {"status": "pending_approval", "invoice_id": invoice_id}

    return [get_subscription, list_invoices, create_refund_request]


def build_graph(
    ctx: AgentContext,
    *,
    approval_node: bool = True,
    interrupt_before: list[str] | None = None,
    checkpointer: Any = None,
) -> Any:
    """The support agent's graph, compiled without a checkpointer unless one is given."""
    model = ScriptedChatModel(messages=iter(script(ctx.case_id)))
    tools = make_tools(ctx.workspace)
    bound = model.bind_tools(tools)

    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    def approval(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        calls = [c for c in getattr(last, "tool_calls", []) if c["name"] in APPROVAL_TOOLS]
        if calls:
            interrupt({"action": "supervisor_approval", "requests": [c["args"] for c in calls]})
        return {}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    if approval_node:
        graph.add_node("approval", approval)
        graph.add_conditional_edges("agent", tools_condition, {"tools": "approval", END: END})
        graph.add_edge("approval", "tools")
    else:
        graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer, interrupt_before=interrupt_before)


def output_from_state(state: dict[str, Any]) -> dict[str, Any]:
    called = {c["name"] for m in state["messages"] for c in getattr(m, "tool_calls", [])}
    return {"needs_approval": "create_refund_request" in called}


run = langgraph_agent(
    build_graph, output_from_state=output_from_state, approval_tools=APPROVAL_TOOLS
)


def probe(workspace: Path, result: AgentResult, case: Any = None) -> dict[str, Any]:
    """``{"refund": …}``: the filed request, else the one intercepted for approval."""
    path = Path(workspace) / REFUNDS
    rows = json.loads(path.read_text("utf-8")) if path.exists() else []
    if not rows:
        rows = [
            {"invoice_id": c.args["invoice_id"], "amount_yuan": float(c.args["amount_yuan"])}
            for c in result.tool_calls
            if c.name == "create_refund_request" and c.result == INTERCEPTED
        ]
    return {"refund": rows[0] if len(rows) == 1 else rows or None}
