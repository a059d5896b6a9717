"""A LangGraph agent for a conversation: it asks for the customer number, asks for a
confirmation, then calls create_refund_request, which a supervisor must approve. Its only
memory is the graph's own thread: each turn brings one new HumanMessage."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from caseforge.adapters.langgraph import langgraph_agent


def build(ctx: Any) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        said = " ".join(str(m.content) for m in state["messages"] if isinstance(m, HumanMessage))
        found = re.search(r"C\d{3}", said)
        if not found:
            return {"messages": [AIMessage("请提供您的客户编号。")]}
        if "确认" not in said:
            return {"messages": [AIMessage(f"将为 {found.group(0)} 提交退款申请，确认吗？")]}
        call = {
            "name": "create_refund_request",
            "args": {"customer_id": found.group(0)},
            "id": "call-1",
            "type": "tool_call",
        }
        return {"messages": [AIMessage("", tool_calls=[call])]}

    def tools(state: MessagesState) -> dict[str, Any]:
        return {"messages": []}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else END)
    graph.add_edge("tools", END)
    return graph.compile(interrupt_before=["tools"])


def _output(state: dict[str, Any]) -> dict[str, Any]:
    return {"needs_approval": bool(getattr(state["messages"][-1], "tool_calls", None))}


run = langgraph_agent(build, approval_tools=["create_refund_request"], output_from_state=_output)
