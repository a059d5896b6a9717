"""A multi-turn case's ``conversation:``: a scripted user, or a simulated one.

```yaml
conversation:
  max_turns: 4
  script:                                   # the user's messages, in order
    - say: 我想退掉年付剩下的钱
    - say: 客户编号是 C023
      expect:                               # checks on the agent turn that answers this one
        reply: {must_include: ["6578"]}
```

or

```yaml
conversation:
  max_turns: 6
  user:
    callable: "sim_users:customer"          # fn(messages, instruction=..., facts=...) -> str | None
    instruction: You want the unused months of your yearly plan back.
    facts: {customer_id: C023}              # what the user reveals when asked
```

``user.model: true`` has a model play the user instead (the suite's ``simulator:``
setting), told the instruction and the facts; it ends the conversation by writing the
stop marker.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

STOP_MARKER = "###STOP###"


class ScriptTurn(BaseModel):
    """One message of a scripted user, and optional checks on the agent's answer to it."""

    model_config = ConfigDict(extra="forbid")

    say: str = Field(min_length=1)
    expect: dict[str, Any] = Field(  # validated into checks by the case model
        default_factory=dict,
        description="Checks on the agent turn that answers this message, written as under "
        "the case's `expect` (read with the case's check modes).",
    )


class SimulatedUser(BaseModel):
    """A user played by code (``callable``) or by a model (``model: true``)."""

    model_config = ConfigDict(extra="forbid")

    callable: str | None = Field(
        None, description="module:function(messages, instruction=, facts=) -> str | None"
    )
    model: bool = Field(False, description="A model plays the user (the suite's `simulator:`).")
    instruction: str = Field(min_length=1, description="What the user wants, for the user.")
    facts: dict[str, object] = Field(
        default_factory=dict, description="What the user knows and reveals when asked."
    )
    stop: str = Field(STOP_MARKER, description="A user message holding this ends the talk.")

    @model_validator(mode="after")
    def _one_player(self) -> SimulatedUser:
        if bool(self.callable) == self.model:
            raise ValueError("a simulated user is played by `callable: module:fn` or `model: true`")
        return self


class Conversation(BaseModel):
    """How the user talks to the agent, for at most ``max_turns`` agent turns."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(ge=1, le=100, description="Reaching it fails the trial.")
    script: list[ScriptTurn] = Field(default_factory=list)
    user: SimulatedUser | None = None

    @field_validator("script")
    @classmethod
    def _within_max_turns(cls, script: list[ScriptTurn], info: ValidationInfo) -> list[ScriptTurn]:
        """Each scripted message is answered by one agent turn: a script longer than
        ``max_turns`` has messages that are never sent, and a trial that always fails."""
        limit = info.data.get("max_turns")
        if isinstance(limit, int) and len(script) > limit:
            raise ValueError(
                f"{len(script)} scripted messages, but max_turns is {limit}: message "
                f"{limit + 1} would never be sent and every trial would end at max_turns; "
                f"raise max_turns to {len(script)} or shorten the script"
            )
        return script

    @model_validator(mode="after")
    def _script_or_user(self) -> Conversation:
        if bool(self.script) == (self.user is not None):
            raise ValueError("a conversation has a `script:` or a `user:`, not both nor neither")
        return self
