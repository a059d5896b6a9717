"""What an invocation will run: its runs (one per configuration), their cases and trials,
and the counts the progress display shows."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from caseforge.case.load import Suite
from caseforge.case.model import Case
from caseforge.jsontypes import JSONObject


@dataclass
class RunHandle:
    """One configuration's run within an invocation."""

    run_id: str
    config_name: str | None
    config: JSONObject
    # Kept out of repr: asyncio formats the task result, and 10,000 cases take seconds.
    cases: dict[str, Case] = field(repr=False)


@dataclass
class RunPlan:
    """The runs to drive and which of their case-trials are already stored."""

    suite: Suite = field(repr=False)
    handles: list[RunHandle]
    trials: int
    clock: str  # ISO time for cases without their own clock
    done: dict[str, set[tuple[str, int]]] = field(default_factory=dict)
    replay_from: str | None = None  # a rescore: the stored run whose outcomes are graded again
    left_out: list[str] = field(default_factory=list)  # a rescore: cases no longer in the suite

    @property
    def skipped(self) -> int:
        return sum(len(d) for d in self.done.values())


@dataclass
class Progress:
    """Counts the progress display shows."""

    total: int
    done: int = 0
    passed: int = 0
    errors: int = 0
    cost_usd: float = 0.0
    started: float = field(default_factory=time.perf_counter)

    @property
    def eta_s(self) -> float | None:
        if not self.done:
            return None
        elapsed = time.perf_counter() - self.started
        return elapsed / self.done * (self.total - self.done)
