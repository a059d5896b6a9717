"""The agent protocol (docs/reference/agent-protocol.md): what an agent receives and what
it returns.

Every transport carries the same JSON. The agent receives an :class:`AgentRequest`::

    {"case_id", "trial", "seed", "case_seed", "clock", "config", "input"}

(plus ``"workspace"`` when the suite has a ``workspace_setup`` hook, ``"context"`` with a
``context/`` folder, ``"messages"`` and ``"turn"`` for a multi-turn case). Keys are added,
never renamed.

and returns::

    {"output": {field: value, ...}, "reply": str,
     "tool_calls": [{"name", "args", "result"}], "paused_for_approval": bool,
     "usage": {"input_tokens", "output_tokens", "cost_usd"}, "trace": [...]}

Every key is optional; ``output`` may be left out only when no check of the case reads
an output field (the case-trial is then an error, naming the check). A Python callable
may return that dict or an :class:`AgentResult`.
"""

from __future__ import annotations

import math
from typing import Literal, Required, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from caseforge.errors import CaseforgeError
from caseforge.jsontypes import JSONObject


class ToolCall(BaseModel):
    """One tool call the agent made (or attempted: an approval pause intercepts it)."""

    model_config = ConfigDict(extra="allow")

    name: str = Field(description="The tool's name.")
    args: dict[str, object] = Field(
        default_factory=dict, description="The arguments it was called with, by name."
    )
    result: object = Field(None, description="What the tool returned.")


class Turn(BaseModel):
    """One message of a conversation: the user's, or the agent's with its tool calls."""

    turn: int = Field(ge=1, description="The agent turn it belongs to (1 is the first).")
    role: Literal["user", "agent"]
    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    output: dict[str, object] | None = None


class Usage(BaseModel):
    """Tokens and cost of one case-trial: finite numbers (a NaN cost is an invalid answer,
    naming the field, never a run the store cannot take)."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    input_tokens: int = Field(0, description="Tokens sent to models.")
    output_tokens: int = Field(0, description="Tokens models returned.")
    cost_usd: float = Field(0.0, description="What the case-trial cost, in USD.")


class AgentResult(BaseModel):
    """What an agent returns for one case-trial. A NaN or Infinity in its output is data:
    stored as ``{"$float": "NaN"}`` (``values.json_text``), graded as the float it is."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")

    output: dict[str, object] = Field(
        default_factory=dict,
        description="The structured answer; may be left out by an agent that only replies "
        "and changes state, when no check of the case reads an output field.",
    )
    reply: str = Field("", description="The text the customer reads; `reply` checks grade it.")
    tool_calls: list[ToolCall] = Field(
        default_factory=list,
        description="The tools the agent called, in order, each with its arguments and result.",
    )
    paused_for_approval: bool = Field(
        False, description="The agent stopped to ask a person before acting."
    )
    usage: Usage = Field(default_factory=Usage, description="Tokens and cost; finite numbers only.")
    trace: list[object] = Field(
        default_factory=list,
        description="Anything the agent wants kept with the trial (shown by `show`).",
    )
    output_given: bool = Field(True, exclude=True, description="Whether `output` was sent.")
    tool_calls_given: bool = Field(
        True,
        exclude_if=lambda given: given,  # stored only when False: a rescore grades the same
        description="Whether the agent reported its tool calls (`tool_calls` sent, even empty).",
    )
    done: bool = Field(
        False, description="In a conversation: the agent has finished (else the user answers)."
    )
    transcript: list[Turn] = Field(
        default_factory=list, description="A conversation's messages, filled by caseforge."
    )
    ended_by: str | None = Field(
        None, description="How a conversation ended: agent, user, approval or max_turns."
    )
    user_usage: Usage | None = Field(
        None, description="A model-played user's tokens and cost, apart from the agent's."
    )


# Fields of AgentResult caseforge fills itself: not the agent's to send.
CASEFORGE_FILLS = frozenset(
    {"output_given", "tool_calls_given", "transcript", "ended_by", "user_usage"}
)


class AgentRequest(BaseModel):
    """What an agent receives for one case-trial: exactly these keys (a test holds the
    runner to it), so an agent may validate its request with this model."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(description="The case's `id`.")
    trial: int = Field(ge=1, description="Trials are numbered from 1.")
    seed: int = Field(description="Deterministic per (case, trial).")
    case_seed: int | None = Field(default=None, description="The case's own fixed seed.")
    clock: str = Field(description="The frozen clock, ISO 8601 with offset.")
    config: dict[str, object] = Field(
        default_factory=dict,
        description="The configuration's values (`configs:` in caseforge.yaml).",
    )
    input: dict[str, object] = Field(description="The case's `input:`, as written.")
    workspace: str | None = Field(
        default=None, description="The trial's folder, sent when the suite has workspace_setup."
    )
    context: dict[str, object] | None = Field(
        default=None,
        description="The suite's context/ files by name (policy text, tool schemas), sent "
        "when the suite has that folder.",
    )
    messages: list[dict[str, object]] | None = Field(
        default=None,
        description="A conversation so far ({role: user|assistant, content}), sent for a "
        "multi-turn case; the agent answers one turn.",
    )
    turn: int | None = Field(default=None, ge=1, description="This agent turn's number.")


class AgentRequestDict(TypedDict, total=False):
    """The request as caseforge builds it and every transport sends it: the fields of
    :class:`AgentRequest` (a callable agent is handed its ``input``, the rest in ``ctx``)."""

    case_id: Required[str]
    trial: Required[int]
    seed: Required[int]
    case_seed: Required[int | None]
    clock: Required[str]
    config: Required[dict[str, object]]
    input: Required[dict[str, object]]
    workspace: str
    context: JSONObject
    messages: list[dict[str, str]]  # {role: user|assistant, content}
    turn: int


class AgentProtocolError(CaseforgeError):
    """The agent answered something that is not a valid response."""


def parse_response(data: object) -> AgentResult:
    """Validate an agent's response (a dict, an ``AgentResult``, or anything else)."""
    if isinstance(data, AgentResult):  # built in code: its numbers were never validated
        for where, usage in (("usage", data.usage), ("user_usage", data.user_usage)):
            if usage is not None and not all(
                math.isfinite(v) for v in (usage.input_tokens, usage.output_tokens, usage.cost_usd)
            ):
                raise AgentProtocolError(
                    f"invalid agent response at {where}: a number in it is not finite "
                    f"({usage.input_tokens}, {usage.output_tokens}, {usage.cost_usd})"
                )
        if "tool_calls" not in data.model_fields_set and data.tool_calls_given:
            data = data.model_copy(update={"tool_calls_given": False})
        return data
    if not isinstance(data, dict):
        raise AgentProtocolError(
            f"the agent returned {type(data).__name__}, expected an object (with `output`, "
            "`reply`, `tool_calls`…)"
        )
    try:
        result = AgentResult.model_validate(data)
        if "output" not in data:  # rare: pydantic's attribute assignment is not free
            result.output_given = False
        if "tool_calls" not in data:  # no calls reported: none made is not known
            result.tool_calls_given = False
        return result
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise AgentProtocolError(f"invalid agent response at {where}: {first['msg']}") from None
