"""The ``cost`` and ``latency`` check modes (promptfoo's ``cost`` and ``latency``): limits on
what the run measured of a case-trial, not on what the agent answered.

``cost`` reads the agent's reported ``usage.cost_usd`` (with an in-process agent's
``ctx.llm()`` calls, counted when it reports none itself); ``latency`` the case-trial's
recorded ``latency_s``: the agent call (a conversation: all its turns) from its first
attempt to its answer, retries and ``workspace_setup`` included. When the agent reported no
usage at all (no cost, no tokens), the cost is unknown: the check is ``not_judged`` with a
reason, so the case-trial is ``incomplete``, never passed on a cost nobody measured.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from caseforge.checks.base import (
    BaseCheck,
    OptionOrder,
    Reads,
    TrialFacts,
    Verdict,
    failed,
    passed,
)
from caseforge.results import CheckStatus

UNKNOWN_COST = (
    "the agent reported no usage (no cost, no tokens): its cost is unknown, not judged "
    "(report usage.cost_usd in the agent's answer)"
)
UNKNOWN_LATENCY = "the case-trial's latency was not recorded: not judged"


class _TrialLimit(BaseCheck):
    """A limit on a measure of the case-trial: no ``field`` or ``turn`` to read."""

    strength: ClassVar[int] = 60
    reads: ClassVar[Reads] = Reads.TRIAL
    # Fields of every check this one refuses (nor does the modes reference list them).
    refused: ClassVar[frozenset[str]] = frozenset({"field", "turn"})

    @model_validator(mode="after")
    def _reads_the_trial(self) -> _TrialLimit:
        for name in ("field", "turn"):
            if name in self.refused and getattr(self, name) is not None:
                raise ValueError(
                    f"`{name}`: a {self.mode} check reads the whole case-trial, not a field "
                    "or a turn of the output"
                )
        for name in ("oracle", "args"):
            if name in self.refused and name in self.model_fields_set:
                raise ValueError(
                    f"`{name}`: a {self.mode} check's expectations are written in the case; "
                    "no oracle computes them"
                )
        return self


class CostCheck(_TrialLimit):
    """What the case-trial cost the agent, in USD, is at most ``max_usd`` (not judged when
    the agent reported no usage)."""

    expected_field: ClassVar[str | None] = "max_usd"
    options: ClassVar[dict[str, OptionOrder]] = {
        "max_usd": OptionOrder("higher", kind="cost-limit-raised")
    }

    mode: Literal["cost"]
    max_usd: float = Field(ge=0, allow_inf_nan=False, description="The most it may cost, USD.")

    def measured(self, trial: TrialFacts) -> object:
        return trial.cost_usd

    def grade(self, actual: object) -> Verdict:
        if actual is None:
            return Verdict(CheckStatus.NOT_JUDGED, UNKNOWN_COST)
        if not isinstance(actual, int | float):
            return failed(f"the cost is not a number: {actual!r}")
        if actual <= self.max_usd:
            return passed()
        return failed(f"cost ${actual:.6g}, over the limit of ${self.max_usd:.6g}")

    def render(self) -> str:
        return f"cost ≤ ${self.max_usd:g}"


class LatencyCheck(_TrialLimit):
    """The agent call took at most ``max_ms`` milliseconds (the case-trial's recorded
    latency: every attempt and turn, ``workspace_setup`` included)."""

    expected_field: ClassVar[str | None] = "max_ms"
    options: ClassVar[dict[str, OptionOrder]] = {
        "max_ms": OptionOrder("higher", kind="latency-limit-raised")
    }

    mode: Literal["latency"]
    max_ms: float = Field(
        ge=0, allow_inf_nan=False, description="The longest it may take, in milliseconds."
    )

    def measured(self, trial: TrialFacts) -> object:
        return None if trial.latency_s is None else round(trial.latency_s * 1000, 3)

    def grade(self, actual: object) -> Verdict:
        if actual is None:
            return Verdict(CheckStatus.NOT_JUDGED, UNKNOWN_LATENCY)
        if not isinstance(actual, int | float):
            return failed(f"the latency is not a number: {actual!r}")
        if actual <= self.max_ms:
            return passed()
        return failed(f"took {actual:.6g} ms, over the limit of {self.max_ms:.6g} ms")

    def render(self) -> str:
        return f"latency ≤ {self.max_ms:g} ms"
