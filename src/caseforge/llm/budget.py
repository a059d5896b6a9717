"""``--max-cost``: what a run has spent, what its case-trials in flight may still spend,
and whether one more may start.

Before a case-trial starts, the budget reserves an estimate for every one in flight: the
largest cost one case-trial has had so far. A case-trial starts only if what is spent plus
those reservations, its own included, stays within the limit. Until one has finished there
is no estimate, so the first runs alone. In-process model calls (``ctx.llm()``) are checked
against the limit before each request, and refused once it is reached. A command or HTTP
agent reports its cost only when it answers, so a case-trial dearer than every earlier one
can still take the run past the limit by the difference.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from caseforge.errors import BudgetExceeded


class SpendMeter(Protocol):
    """What a model client tells about its spend: asked before each request (it may refuse
    it), and told each answered request's cost. :class:`CostBudget` is one."""

    def before_model_call(self) -> None: ...

    def charge_model_call(self, cost_usd: float) -> None: ...


def _nothing() -> float:
    return 0.0


@dataclass
class CostBudget:
    limit: float
    other_usd: Callable[[], float] = _nothing  # spend outside the case-trials: the judge's
    trials_usd: float = 0.0  # what finished case-trials cost
    model_usd_in_flight: float = 0.0  # ctx.llm() spend of case-trials still running
    largest_trial_usd: float = 0.0
    finished: int = 0
    in_flight: int = 0
    cut_short: int = 0  # case-trials whose model call was refused
    cut_short_usd: float = 0.0
    exhausted: bool = False
    _turn: asyncio.Condition | None = field(default=None, repr=False)

    @property
    def spent(self) -> float:
        return self.trials_usd + self.other_usd()

    def _decide(self) -> bool | None:
        """True: start one now. False: the budget is spent. None: wait for one in flight."""
        spent = self.spent
        if self.exhausted or spent >= self.limit:
            return False
        if self.finished == 0:
            return True if self.in_flight == 0 else None
        if spent + self.largest_trial_usd * (self.in_flight + 1) <= self.limit:
            return True
        return None if self.in_flight else False

    async def start(self) -> bool:
        """Wait until one more case-trial fits; False once none will."""
        if self._turn is None:
            self._turn = asyncio.Condition()
        async with self._turn:
            while (go := self._decide()) is None:
                await self._turn.wait()
            if go:
                self.in_flight += 1
            else:
                self.exhausted = True
                self._turn.notify_all()
            return go

    async def finish(self, cost_usd: float, model_usd: float, *, stored: bool = True) -> None:
        """A case-trial that started has ended: its cost moves from in flight to spent."""
        self.in_flight -= 1
        self.model_usd_in_flight -= model_usd
        if stored:
            self.finished += 1
            self.trials_usd += cost_usd
            self.largest_trial_usd = max(self.largest_trial_usd, cost_usd)
        else:
            self.cut_short += 1
            self.cut_short_usd += model_usd
        if self._turn is not None:
            async with self._turn:
                self._turn.notify_all()

    def before_model_call(self) -> None:
        """Refuse an in-process model call once the limit is reached."""
        if self.spent + self.model_usd_in_flight + self.cut_short_usd >= self.limit:
            self.exhausted = True
            raise BudgetExceeded(
                f"--max-cost ${self.limit:g} reached: this model call was not made"
            )

    def charge_model_call(self, cost_usd: float) -> None:
        self.model_usd_in_flight += cost_usd
