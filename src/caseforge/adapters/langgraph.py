"""Run a LangGraph graph as a caseforge agent.

``langgraph_agent(build)`` wraps a function that builds a compiled graph into the
``run(input, ctx)`` callable that a suite names in its ``caseforge.yaml``
(``agent: {callable: "my_suite.graph_agent:run"}``)::

    # my_suite/graph_agent.py
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.types import interrupt

    from caseforge.adapters.langgraph import langgraph_agent


    def build_graph(ctx):  # called per case-trial: ctx.workspace, ctx.config, ctx.now()
        def agent(state: MessagesState):  # a real graph calls a chat model here
            ticket = state["messages"][-1].content
            call = {"name": "create_refund_request", "id": "call-1",
                    "args": {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0}}
            if "退" in ticket:
                return {"messages": [AIMessage("", tool_calls=[call])]}
            return {"messages": [AIMessage("您好,请问有什么可以帮您?")]}

        def approval(state: MessagesState):  # a supervisor approves before the tool runs
            if state["messages"][-1].tool_calls:
                interrupt({"action": "supervisor_approval"})
            return {}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", agent)
        graph.add_node("approval", approval)
        graph.add_edge(START, "agent")
        graph.add_edge("agent", "approval")
        return graph.compile()  # a checkpointer is added when the graph has none


    run = langgraph_agent(
        build_graph,
        output_from_state=lambda state: {"turns": len(state["messages"])},
        approval_tools={"create_refund_request"},
    )

With the input ``{"ticket": "剩下几个月的钱能退吗?"}`` ``run`` returns
``paused_for_approval=True``, an empty reply and the tool call
``create_refund_request(invoice_id="INV-2026-0091", amount_yuan=6578.0)`` with the result
``{"status": "intercepted_for_approval"}``; any other ticket gets the greeting as reply.

(needs ``pip install 'caseforge[langgraph]'``). For each case-trial the adapter:

- calls ``build(ctx)`` (a compiled graph, or a ``StateGraph`` it compiles itself); a graph
  without a checkpointer gets a fresh in-memory one, so interrupts work;
- starts the graph with ``input_to_state(input, ctx)``, by default
  ``{"messages": [HumanMessage(text)]}`` where ``text`` is the input's only field when the
  input is a single string, else the input as JSON; the thread id is
  ``"{case_id}-{trial}-{random suffix}"`` (unique, so a checkpointer the graph shares
  across calls never continues an earlier run's thread);
- records every tool call of every ``AIMessage``, with the result from the
  ``ToolMessage`` answering it (JSON objects and arrays parsed);
- maps an approval stop to ``paused_for_approval=True`` with an empty reply: an
  ``interrupt()`` (``langgraph.types``) anywhere in the graph, or a static
  ``interrupt_before``/``interrupt_after`` stop whose pending tool calls include one of
  ``approval_tools``. The intercepted calls (the pending calls of the last ``AIMessage``
  to an approval tool, or all of them when ``approval_tools`` is empty) are recorded with
  the result :data:`INTERCEPTED`, so the suite's outcome probe can read the intercepted
  request (``result.tool_calls``). A static stop that is not for approval is resumed;
- otherwise returns the last ``AIMessage``'s text as ``reply`` and
  ``output_from_state(state)`` (default ``{}``) as ``output``; ``usage`` sums the
  messages' ``usage_metadata``, priced with the run's price table (the suite's
  ``prices:`` over caseforge's shipped one) when the message names a known model.

A compact transcript (messages, interrupts) goes to the result's ``trace``.

In a multi-turn case (``ctx.messages``), the graph is built once for the conversation and
keeps its thread: each turn sends the user's new message as a ``HumanMessage``, and the
result holds that turn's tool calls and reply. The user ends the conversation (or an
approval pause does); a graph does not say ``done`` of itself.
"""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Protocol, cast

from caseforge.agent.context import AgentContext
from caseforge.agent.protocol import AgentResult, ToolCall, Usage
from caseforge.jsontypes import JSONObject, JSONValue

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage, ToolMessage
    from langchain_core.messages import ToolCall as GraphToolCall
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import StateSnapshot

    from caseforge.llm.prices import PriceTable

INTERCEPTED: dict[str, str] = {"status": "intercepted_for_approval"}
"""The result recorded for a tool call that an approval pause stopped before it ran."""

_INSTALL_HINT = (
    "the LangGraph adapter needs langgraph and langchain-core: "
    "install caseforge[langgraph] (pip install 'caseforge[langgraph]')"
)

StateIn = Callable[[dict[str, object], AgentContext], Mapping[str, object]]
StateOut = Callable[[dict[str, object]], Mapping[str, object]]
GraphAgent = Callable[[dict[str, object], AgentContext], Awaitable[AgentResult]]


class _Graph(Protocol):
    """What the adapter uses of a compiled graph (a ``langgraph.pregel.Pregel``)."""

    async def ainvoke(
        self, input: Mapping[str, object] | None, config: RunnableConfig | None = None
    ) -> object: ...

    async def aget_state(self, config: RunnableConfig) -> StateSnapshot: ...


def _require_langgraph() -> None:
    """Import the optional dependencies, or say how to install them."""
    try:
        import langchain_core.messages  # noqa: F401
        import langgraph.pregel  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{_INSTALL_HINT} ({exc})") from exc


def langgraph_agent(
    build: Callable[[AgentContext], object],
    *,
    input_to_state: StateIn | None = None,
    output_from_state: StateOut | None = None,
    approval_tools: Collection[str] = (),
    messages_key: str = "messages",
    max_resumes: int = 25,
) -> GraphAgent:
    """A caseforge agent ``run(input, ctx)`` that runs the graph ``build(ctx)`` returns.

    ``build`` may be sync or async and is called once per case-trial, with that trial's
    context (workspace, config, clock, ``ctx.llm()``). ``input_to_state`` builds the
    graph's input state; ``output_from_state`` reads the structured ``output`` from the
    final state; ``approval_tools`` names the tools a static interrupt stops before for
    supervisor approval; ``messages_key`` is the state's message list; ``max_resumes``
    bounds how many non-approval static stops are resumed.
    """
    _require_langgraph()
    approval = frozenset(approval_tools)

    async def run(input: dict[str, object], ctx: AgentContext) -> AgentResult:
        # In a conversation the graph and its thread live from the first turn to the last,
        # and each turn sends the user's new message; else one graph runs once.
        kept = ctx.conversation_state if ctx.messages else {}
        graph = kept.get("graph")
        if graph is None:
            built = build(ctx)
            if inspect.isawaitable(built):
                built = await built
            graph = _as_graph(built)
        config = cast(
            "RunnableConfig",
            kept.get("config")
            or {
                "configurable": {"thread_id": f"{ctx.case_id}-{ctx.trial}-{uuid.uuid4().hex[:8]}"},
                "metadata": {"caseforge_case_id": ctx.case_id, "caseforge_trial": ctx.trial},
            },
        )
        seen = int(kept.get("seen", 0))
        if ctx.messages:
            from langchain_core.messages import HumanMessage

            said = HumanMessage(content=str(ctx.messages[-1].get("content", "")))
            state: Mapping[str, object]
            if "graph" in kept:
                state = {messages_key: [said]}
            else:
                first = dict(input_to_state(input, ctx)) if input_to_state else {}
                state = {**first, messages_key: [*_messages(first.get(messages_key)), said]}
            kept.update(graph=graph, config=config)
        else:
            state = (input_to_state or _default_state)(input, ctx)
        await graph.ainvoke(state, config=config)
        for resumes in range(max_resumes + 1):
            snapshot = await graph.aget_state(config)
            values = snapshot.values if isinstance(snapshot.values, dict) else {}
            messages = _messages(values.get(messages_key, []))
            interrupts = [getattr(i, "value", i) for i in _interrupts_of(snapshot)]
            pending = _pending_calls(messages)
            if interrupts or not snapshot.next:
                break  # an interrupt() (an approval pause), or the graph finished
            if any(call["name"] in approval for call in pending):
                break  # a static stop before an approval tool runs
            if resumes == max_resumes:
                raise RuntimeError(
                    f"the graph stopped {resumes + 1} times with no approval tool pending "
                    f"(approval_tools={sorted(approval)}); is a node interrupting in a loop?"
                )
            await graph.ainvoke(None, config=config)  # a static stop not for approval
        paused = bool(interrupts) or any(call["name"] in approval for call in pending)
        prices = getattr(ctx, "llm_prices", None)  # the suite's price table, when the run set one
        if ctx.messages:
            kept["seen"] = len(messages)  # the next turn reports only what comes after
            messages = messages[seen:]
        return _result(values, messages, interrupts, paused, approval, output_from_state, prices)

    return run


def _as_graph(graph: object) -> _Graph:
    """A compiled graph with a checkpointer."""
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel

    if isinstance(graph, StateGraph):
        return graph.compile(checkpointer=MemorySaver())
    if not isinstance(graph, Pregel):
        raise TypeError(
            f"build(ctx) returned {type(graph).__name__}, not a LangGraph graph: return "
            "StateGraph(...).compile() (or the StateGraph itself)"
        )
    if not isinstance(graph.checkpointer, BaseCheckpointSaver):
        graph = graph.copy(update={"checkpointer": MemorySaver()})
    return graph


def _default_state(input: dict[str, object], ctx: AgentContext) -> dict[str, object]:
    from langchain_core.messages import HumanMessage

    values = list(input.values())
    if len(values) == 1 and isinstance(values[0], str):
        text = values[0]
    else:
        text = json.dumps(input, ensure_ascii=False, default=str)
    return {"messages": [HumanMessage(content=text)]}


def _messages(raw: object) -> list[BaseMessage]:
    from langchain_core.messages import BaseMessage, convert_to_messages

    if not isinstance(raw, list):
        return []
    if all(isinstance(m, BaseMessage) for m in raw):
        return list(raw)
    return list(convert_to_messages(raw))


def _interrupts_of(snapshot: StateSnapshot) -> list[object]:
    found: list[object] = list(getattr(snapshot, "interrupts", ()) or ())
    for task in getattr(snapshot, "tasks", ()) or ():
        found.extend(i for i in getattr(task, "interrupts", ()) or () if i not in found)
    return found


def _pending_calls(messages: list[BaseMessage]) -> list[GraphToolCall]:
    """The last AIMessage's tool calls that no ToolMessage has answered yet."""
    from langchain_core.messages import AIMessage, ToolMessage

    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return [c for c in message.tool_calls if c.get("id") not in answered]
    return []


def _result(
    values: dict[str, object],
    messages: list[BaseMessage],
    interrupts: list[object],
    paused: bool,
    approval: frozenset[str],
    output_from_state: StateOut | None,
    prices: PriceTable | None = None,
) -> AgentResult:
    from langchain_core.messages import AIMessage, ToolMessage

    results = {m.tool_call_id: _tool_result(m) for m in messages if isinstance(m, ToolMessage)}
    intercepted = {
        call.get("id") or ""
        for call in _pending_calls(messages)
        if paused and (not approval or call["name"] in approval)
    }
    tool_calls: list[ToolCall] = []
    usage = Usage()
    reply = ""
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        reply = _text(message.content)
        for call in message.tool_calls:
            call_id = call.get("id") or ""
            result = dict(INTERCEPTED) if call_id in intercepted else results.get(call_id)
            tool_calls.append(
                ToolCall(name=call["name"], args=_jsonable_object(call["args"]), result=result)
            )
        meta = message.usage_metadata
        if meta:
            usage.input_tokens += int(meta.get("input_tokens", 0))
            usage.output_tokens += int(meta.get("output_tokens", 0))
            model = message.response_metadata.get("model_name") or message.response_metadata.get(
                "model"
            )
            if isinstance(model, str):
                if prices is None:
                    from caseforge.llm.prices import PriceTable

                    prices = PriceTable()
                cost = prices.cost(model, meta.get("input_tokens", 0), meta.get("output_tokens", 0))
                usage.cost_usd += cost or 0.0
    output = dict(output_from_state(values)) if output_from_state is not None else {}
    trace = [_trace_entry(m) for m in messages]
    trace.extend({"interrupt": _jsonable(value)} for value in interrupts)
    return AgentResult(
        output=output,
        reply="" if paused else reply,
        tool_calls=tool_calls,
        paused_for_approval=paused,
        usage=usage,
        trace=trace,
    )


def _text(content: object) -> str:
    """The text of a message's content (a string, or a list of content blocks)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def _tool_result(message: ToolMessage) -> JSONValue:
    """A ToolMessage's content: a JSON object or array parsed, anything else as is."""
    content = message.content
    if isinstance(content, str):
        if content.lstrip().startswith(("{", "[")):
            try:
                parsed: JSONValue = json.loads(content)
            except ValueError:
                return content
            return parsed
        return content
    return _jsonable(content)


def _trace_entry(message: BaseMessage) -> JSONObject:
    entry: JSONObject = {"type": message.type, "content": _text(message.content)}
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        entry["tool_calls"] = [
            {"name": c["name"], "args": _jsonable(c["args"])} for c in tool_calls
        ]
    tool_call_id = getattr(message, "tool_call_id", None)
    if tool_call_id:
        entry["tool_call_id"] = tool_call_id
    return entry


def _jsonable(value: object) -> JSONValue:
    """``value`` as plain JSON data (anything unknown as its string)."""
    data: JSONValue = json.loads(json.dumps(value, ensure_ascii=False, default=str))
    return data


def _jsonable_object(value: Mapping[str, object]) -> JSONObject:
    """A mapping as a plain JSON object (anything unknown as its string)."""
    data: JSONObject = json.loads(json.dumps(value, ensure_ascii=False, default=str))
    return data
