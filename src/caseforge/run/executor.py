"""Executors run case-trials; the runner (the driver) grades and stores what comes back.

``LocalExecutor`` runs them on this process's event loop with a concurrency limit. A
distributed engine would implement the same ``run`` method and ship :class:`TrialTask`s
to workers; only the agent call, the workspace and the outcome probe happen there.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from caseforge.agent.protocol import AgentResult
from caseforge.case.model import Case


@dataclass(slots=True)
class TrialTask:
    """One case-trial to run under one configuration."""

    run_id: str
    config_name: str | None
    config: dict[str, Any]
    case: Case = field(repr=False)
    trial: int
    seed: int
    clock: str


@dataclass(slots=True)
class TrialOutcome:
    """What running a case-trial produced, before grading."""

    task: TrialTask
    result: AgentResult | None = None
    error: str | None = None
    stderr_tail: str = ""
    latency_s: float = 0.0
    attempts: int = 1
    outcomes: dict[str, Any] | None = None
    outcome_error: str | None = None
    model_usd: float = 0.0  # in-process model calls (ctx.llm()), for --max-cost
    over_budget: bool = False  # cut short by --max-cost: not stored, --resume runs it again
    fixtures: dict[str, Any] | None = None  # requests replayed, recorded and missing


class Executor(Protocol):
    """Runs tasks and yields their outcomes as they finish (in any order)."""

    def run(
        self, tasks: Iterator[TrialTask], execute: Callable[[TrialTask], Awaitable[TrialOutcome]]
    ) -> AsyncIterator[TrialOutcome]: ...

    def stop(self) -> None:
        """Start no new task; the ones in flight finish."""


class StoppableExecutor:
    """The stop flag every executor keeps: once set, no new task starts."""

    _stopped = False

    def stop(self) -> None:
        self._stopped = True


class LocalExecutor(StoppableExecutor):
    """At most ``concurrency`` case-trials at a time on the running event loop."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = max(1, concurrency)

    async def run(
        self, tasks: Iterator[TrialTask], execute: Callable[[TrialTask], Awaitable[TrialOutcome]]
    ) -> AsyncIterator[TrialOutcome]:
        # A small bounded queue makes workers wait for the driver, so a stop (budget spent)
        # takes effect after at most the case-trials already in flight.
        queue: asyncio.Queue[TrialOutcome | BaseException | None] = asyncio.Queue(self.concurrency)

        async def worker() -> None:
            try:
                while not self._stopped:
                    task = next(tasks, None)
                    if task is None:
                        break
                    await queue.put(await execute(task))
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # surface it in the driver instead of hanging
                await queue.put(exc)
                return
            await queue.put(None)

        workers = [asyncio.create_task(worker()) for _ in range(self.concurrency)]
        running = len(workers)
        try:
            while running:
                item = await queue.get()
                if item is None:
                    running -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    yield item
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
