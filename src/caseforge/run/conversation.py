"""Running a multi-turn case: the user (scripted, code or a model) and the agent take turns
until one of them ends it, the agent pauses for approval, or ``max_turns`` is reached.

Each agent turn is one ordinary call of the agent's transport, with the request's
``messages`` (the conversation so far) and ``turn``; its answer is one agent turn, with
``done: true`` when it has finished. What the trial is graded on is the last agent turn's
``output`` and ``reply``, every turn's tool calls (each with its ``turn``), and the
transcript, which caseforge keeps.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from caseforge.agent.protocol import AgentRequestDict, AgentResult, ToolCall, Turn, Usage
from caseforge.agent.threads import DaemonThreadPool, in_thread
from caseforge.agent.transports import import_object
from caseforge.case.conversation import Conversation, SimulatedUser
from caseforge.case.model import Case
from caseforge.errors import CaseforgeError, SuiteExit, suite_exit

if TYPE_CHECKING:
    from caseforge.llm.client import ModelClient  # the SDK is imported only when used

AgentCall = Callable[[AgentRequestDict], Awaitable[AgentResult]]
UserModel = Callable[
    [list[dict[str, str]], SimulatedUser, dict[str, object]], Awaitable[tuple[str, Usage]]
]
USER_PROMPT = """You are playing a customer who writes to a support agent, to test the agent.
What you want: {instruction}
What you know, to reveal only when the agent asks for it: {facts}
Write only your next message to the agent, short and in the customer's own voice, in the
language of what you want. Do not invent facts you were not given. When you have what you
wanted, or the agent has finished or cannot help, answer with exactly {stop}."""


def model_user(client: ModelClient) -> UserModel:
    """A user played by ``client`` (cached, costed, and charged to the run's --max-cost):
    the agent's messages are its user turns, and its own earlier messages its assistant
    turns. Each message comes back with what it cost, kept apart from the agent's."""

    async def say(
        messages: list[dict[str, str]], user: SimulatedUser, scope: dict[str, object]
    ) -> tuple[str, Usage]:
        prompt = USER_PROMPT.format(
            instruction=user.instruction,
            facts=json.dumps(user.facts, ensure_ascii=False) if user.facts else "nothing",
            stop=user.stop,
        )
        flipped: list[dict[str, object]] = [{"role": "system", "content": prompt}]
        flipped += [
            {"role": "assistant" if m["role"] == "user" else "user", "content": m["content"]}
            for m in messages
        ]
        if len(flipped) == 1:
            flipped.append({"role": "user", "content": "(The agent is waiting for you.)"})
        result = await client.chat(flipped, temperature=0.0, scope=scope)
        spent = Usage(
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost_usd=result.cost_usd,
        )
        return result.text.strip(), spent

    return say


@dataclass
class Users:
    """How simulated users are played: their callables (imported once) and the model."""

    suite_dir: Path
    model: UserModel | None = None  # the suite's `simulator:`, when one is configured
    _callables: dict[str, Callable[..., object]] = field(default_factory=dict)
    _threads: DaemonThreadPool = field(default_factory=lambda: DaemonThreadPool(8, "user"))

    def close(self) -> None:
        """Let the threads of sync users end (one still in a call is abandoned)."""
        self._threads.shutdown()

    def callable(self, spec: str) -> Callable[..., object]:
        if spec not in self._callables:
            self._callables[spec] = import_object(spec, self.suite_dir)
        return self._callables[spec]

    async def say(
        self,
        user: SimulatedUser,
        messages: list[dict[str, str]],
        scope: dict[str, object] | None = None,
    ) -> tuple[str | None, Usage]:
        """The user's next message (None when the user has nothing more to say), and what
        a model-played user spent on it."""
        if user.callable:
            fn = self.callable(user.callable)
            call = functools.partial(
                fn, messages, instruction=user.instruction, facts=dict(user.facts)
            )
            found: object
            if inspect.iscoroutinefunction(fn):
                try:
                    pending = call()
                    found = await pending if inspect.isawaitable(pending) else pending
                except (SystemExit, KeyboardInterrupt) as exc:  # its own exit: its failure
                    failure = suite_exit(exc)
                    if failure is None:
                        raise
                    raise CaseforgeError(f"the simulated user {user.callable} {failure}") from None
            else:  # off the event loop: a user that blocks must not stop every case-trial
                try:
                    found = await in_thread(self._threads, call)
                except SuiteExit as exc:
                    raise CaseforgeError(f"the simulated user {user.callable} {exc}") from None
                if inspect.isawaitable(found):
                    found = await found
            text = None if found is None or not str(found).strip() else str(found)
            return text, Usage()
        if self.model is None:
            raise CaseforgeError(
                "a model-played user needs the suite's `simulator: {model: …}` and an endpoint "
                "(OPENAI_API_KEY or OPENAI_BASE_URL)"
            )
        return await self.model(messages, user, scope or {})


def check_users(users: Users, cases: Iterable[Case], simulator_ready: bool) -> None:
    """Before any run is recorded: every simulated user can be played (its callable
    imports; a model user has a model to play it), else one line naming the case."""
    for case in cases:
        user = case.conversation.user if case.conversation else None
        if user is None:
            continue
        if user.callable:
            try:
                users.callable(user.callable)
            except CaseforgeError as exc:
                raise CaseforgeError(
                    f"case {case.id}: conversation.user.callable {exc.text}"
                ) from None
        elif not simulator_ready:
            raise CaseforgeError(
                f"case {case.id}: conversation.user.model needs the suite's "
                "`simulator: {model: …}` in caseforge.yaml and an endpoint (OPENAI_API_KEY or "
                "OPENAI_BASE_URL)"
            )


async def converse(
    conversation: Conversation, request: AgentRequestDict, call: AgentCall, users: Users
) -> AgentResult:
    """Talk until the conversation ends; the trial's result, with its transcript."""
    scope: dict[str, object] = {
        "case": request["case_id"], "trial": request["trial"], "seed": request["seed"]
    }  # fmt: skip
    transcript: list[Turn] = []
    messages: list[dict[str, str]] = []
    calls: list[ToolCall] = []
    given: list[bool] = []  # whether each agent turn reported its tool calls
    usage = Usage()
    user_usage = Usage()
    last: AgentResult | None = None
    ended_by = "max_turns"
    message, spent = await _next_message(conversation, users, messages, 0, scope)
    user_usage = _added(user_usage, spent)
    for turn in range(1, conversation.max_turns + 1):
        if message is None or (conversation.user and conversation.user.stop in message):
            ended_by = "user"
            break
        messages.append({"role": "user", "content": message})
        transcript.append(Turn(turn=turn, role="user", content=message))
        last = await call({**request, "messages": list(messages), "turn": turn})
        given.append(last.tool_calls_given)
        for tool_call in last.tool_calls:
            calls.append(ToolCall.model_validate({**tool_call.model_dump(), "turn": turn}))
        usage = _added(usage, last.usage)
        transcript.append(
            Turn(
                turn=turn,
                role="agent",
                content=last.reply,
                tool_calls=last.tool_calls,
                output=last.output if last.output_given else None,
            )
        )
        messages.append({"role": "assistant", "content": last.reply})
        if last.paused_for_approval:
            ended_by = "approval"
            break
        if last.done:
            ended_by = "agent"
            break
        message, spent = await _next_message(conversation, users, messages, turn, scope)
        user_usage = _added(user_usage, spent)
    else:
        if message is None or (conversation.user and conversation.user.stop in (message or "")):
            ended_by = "user"  # the user ended it right after the last allowed turn
    if last is None:
        raise CaseforgeError("the conversation ended before the agent's first turn")
    result = last.model_copy(
        update={
            "tool_calls": calls,
            "usage": usage,
            "transcript": transcript,
            "ended_by": ended_by,
            "user_usage": user_usage if conversation.user and conversation.user.model else None,
        }
    )
    result.output_given = any(t.output is not None for t in transcript if t.role == "agent")
    result.tool_calls_given = any(given)
    return result


async def _next_message(
    conversation: Conversation,
    users: Users,
    messages: list[dict[str, str]],
    answered: int,
    scope: dict[str, object],
) -> tuple[str | None, Usage]:
    """The user's message after ``answered`` agent turns (None: the user has ended it)."""
    if conversation.user is None:
        script = conversation.script
        return (script[answered].say if answered < len(script) else None), Usage()
    return await users.say(conversation.user, messages, {**scope, "turn": answered + 1})


def _added(a: Usage, b: Usage) -> Usage:
    return Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        cost_usd=a.cost_usd + b.cost_usd,
    )
