"""Executors run case-trials; the runner (the driver) grades and stores what comes back.

``LocalExecutor`` runs them on this process's event loop with a concurrency limit. A
:class:`WorkerPool` (``--executor ray``) drives them the same way, but each case-trial's
agent call, workspace and outcome probe happen on a worker elsewhere: ``connect`` returns
the :class:`TrialCall` that ships one there, in place of the local
:class:`~caseforge.run.trial.TrialRunner`. Grading and storing stay on the driver.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from caseforge.agent.protocol import AgentResult
from caseforge.case.model import Case
from caseforge.jsontypes import JSONObject

if TYPE_CHECKING:
    import datetime as dt

    from caseforge.agent.fixtures import FixtureStore
    from caseforge.run.plan import RunHandle
    from caseforge.run.setup import TrialSetup


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
    resent: bool = False  # sent again after the worker running it died


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
    not_started: bool = False  # the run was cancelled first: not stored, --resume runs it
    fixtures: dict[str, Any] | None = None  # requests replayed, recorded and missing
    # What it recorded, (service, request, index, response): a worker's recordings are
    # written by the driver, which alone writes SUITE/fixtures/.
    recordings: list[tuple[str, Any, int, Any]] | None = None
    # What the agent's side wrote (a command's stderr, an in-process agent's prints, its
    # hooks'): the head and tail kept, and how many bytes were dropped between them.
    log: str = ""
    log_dropped: int = 0


class TrialCall(Protocol):
    """Runs one case-trial to its outcome (here, or on a worker), and closes at the end."""

    def __call__(self, task: TrialTask) -> Awaitable[TrialOutcome]: ...

    async def aclose(self) -> None: ...


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

    def in_flight(self) -> int:
        """How many case-trials the driver keeps started at once."""
        return self.concurrency

    async def run(
        self, tasks: Iterator[TrialTask], execute: Callable[[TrialTask], Awaitable[TrialOutcome]]
    ) -> AsyncIterator[TrialOutcome]:
        # A small bounded queue makes workers wait for the driver, so a stop (budget spent)
        # takes effect after at most the case-trials already in flight.
        width = self.in_flight()
        queue: asyncio.Queue[TrialOutcome | BaseException | None] = asyncio.Queue(width)

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

        workers = [asyncio.create_task(worker()) for _ in range(width)]
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


class WorkerPool(LocalExecutor):
    """At most ``concurrency`` case-trials in flight, each run by a worker of a pool."""

    def prepare(self) -> None:
        """Reach the pool's cluster: done before any run is recorded, so that an unreachable
        one leaves nothing behind."""

    def release(self) -> None:
        """Let go of the cluster when the run ends before ``connect`` (a bad option, say)."""

    def connect(
        self,
        setup: TrialSetup,
        handles: list[RunHandle],
        fixtures: FixtureStore | None,
        frozen_clock: dt.datetime | None,
    ) -> TrialCall:
        """Start the workers for these runs: each builds its own TrialRunner from ``setup``
        (an in-process agent's clock frozen at ``frozen_clock`` for the worker's life); what
        they record goes to ``fixtures``."""
        raise NotImplementedError

    def report(self) -> JSONObject | None:
        """What the pool did, once the run is over (kept in the run's options)."""
        return None

    def lost_usd(self) -> float:
        """What attempts lost with their worker spent: it counts against --max-cost."""
        return 0.0
