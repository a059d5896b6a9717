"""A LangGraph agent (``agent -> tools -> agent``) with a scripted chat model, so the example
runs offline; a real agent calls a chat model in ``agent``. It is instrumented with
OpenInference's LangChain instrumentor: every graph node, model call and tool call is an
OpenTelemetry span, and caseforge keeps them with each case-trial.

The instrumentor sends its spans to the tracer provider that is set: caseforge's own under
``caseforge run``, or the one your service sets in production. To export them to your own
collector too, add a processor to that provider, never set a second one::

    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # nobody set one: production
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from openinference.instrumentation.langchain import LangChainInstrumentor

from caseforge.adapters.langgraph import langgraph_agent
from orders_graph.orders import lookup

LangChainInstrumentor().instrument()  # once, at import: spans for every LangChain run

ORDER = re.compile(r"ORD-\d{4}")


@tool
def lookup_order(order_id: str) -> dict[str, object]:
    """Look an order up by its id (ORD-…): its status, carrier and expected date."""
    return lookup(order_id)


class ScriptedModel(BaseChatModel):
    """Answers as a tool-calling model would: looks the order up, then says its status.
    ``version`` v1 looks it up a second time before answering (the regression to catch)."""

    version: str = "v2"

    @property
    def _llm_type(self) -> str:
        return "scripted-orders"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **_: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        asked = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
        found = ORDER.search(str(asked.content))
        if found is None:
            return AIMessage("Which order is it? Please give its number (ORD-…).")
        looked = [m for m in messages if isinstance(m, ToolMessage)]
        if not looked or (self.version == "v1" and len(looked) == 1):
            call = {"name": "lookup_order", "args": {"order_id": found[0]},
                    "id": f"call-{len(looked) + 1}", "type": "tool_call"}  # fmt: skip
            return AIMessage("", tool_calls=[call])
        answer = looked[-1]
        if answer.status == "error":
            return AIMessage(f"I cannot find order {found[0]}; please check the number.")
        order = json.loads(str(answer.content))
        eta = f", expected {order['eta']}" if order["status"] != "delivered" else ""
        return AIMessage(f"Order {order['order_id']} is {order['status']}{eta}.")


def build_graph(ctx: Any) -> Any:
    model = ScriptedModel(version=str(ctx.config.get("version", "v2")))

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([lookup_order], handle_tool_errors=True))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


run = langgraph_agent(build_graph)
