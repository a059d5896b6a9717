"""Executors run case-trials; the runner (the driver) grades and stores what comes back.

``LocalExecutor`` runs them on this process's event loop with a concurrency limit. A
:class:`WorkerPool` (``--executor ray``) drives them the same way, but each case-trial's
agent call, workspace and outcome probe happen on a worker elsewhere: ``connect`` returns
the :class:`TrialCall` that ships one there, in place of the local
:class:`~caseforge.run.trial.TrialRunner`. Grading and storing stay on the driver.

``--executor NAME`` looks NAME up in :data:`BUILTIN_EXECUTORS` (``local`` and ``ray``),
then in the ``caseforge.executors`` entry points of installed packages (read only for a
name that is not built in): each is an :class:`ExecutorFactory`, called with the run's
:class:`ExecutorSettings`.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Protocol, cast

from caseforge.agent.protocol import AgentResult
from caseforge.case.model import Case
from caseforge.errors import CaseforgeError, UsageError, suite_exit
from caseforge.jsontypes import JSONObject

if TYPE_CHECKING:
    import datetime as dt

    from caseforge.agent.fixtures import FixtureStore, FixturesUsed, Recorded
    from caseforge.run.plan import RunHandle
    from caseforge.run.setup import TrialSetup
    from caseforge.tracing.spans import SpanData

ENTRY_POINT_GROUP = "caseforge.executors"


@dataclass(slots=True)
class TrialTask:
    """One case-trial to run under one configuration."""

    run_id: str
    config_name: str | None
    config: dict[str, object]
    case: Case = field(repr=False)
    trial: int
    seed: int
    clock: str
    resent: bool = False  # sent again after the worker running it died
    # The case-trial's span in caseforge's own trace (``tracing.own``), when it exports one:
    # the agent calls are its children, and the agent's spans join its trace.
    traceparent: str | None = None


@dataclass(slots=True)
class TrialOutcome:
    """What running a case-trial produced, before grading."""

    task: TrialTask
    result: AgentResult | None = None
    error: str | None = None
    stderr_tail: str = ""
    latency_s: float = 0.0
    attempts: int = 1
    outcomes: dict[str, object] | None = None  # what the outcome probe read
    outcome_error: str | None = None
    model_usd: float = 0.0  # in-process model calls (ctx.llm()), for --max-cost
    over_budget: bool = False  # cut short by --max-cost: not stored, --resume runs it again
    not_started: bool = False  # the run was cancelled first: not stored, --resume runs it
    fixtures: FixturesUsed | None = None  # requests replayed, recorded and missing
    # What it recorded, (service, request, index, response): a worker's recordings are
    # written by the driver, which alone writes SUITE/fixtures/.
    recordings: list[Recorded] | None = None
    # What the agent's side wrote (a command's stderr, an in-process agent's prints, its
    # hooks'): the head and tail kept, and how many bytes were dropped between them.
    log: str = ""
    log_dropped: int = 0
    # The agent's OpenTelemetry spans (tracing.spans.SpanData), and how many were dropped
    # past the limit; None: none were collected.
    spans: list[SpanData] | None = None
    spans_dropped: int = 0
    spans_missing: str | None = None  # why no span came, when the run knows


class TrialCall(Protocol):
    """Runs one case-trial to its outcome (here, or on a worker), and closes at the end."""

    def __call__(self, task: TrialTask) -> Awaitable[TrialOutcome]: ...

    async def aclose(self) -> None: ...


class Executor(Protocol):
    """Runs tasks and yields their outcomes as they finish (in any order).

    The runner calls every method on any executor, never asking what it is: ``prepare``
    (once the suite is loaded, before any run is recorded), ``connect`` (once the run's
    trial setup is known), ``run`` (and ``stop`` while it runs), ``lost_usd`` (whenever
    ``--max-cost`` counts), ``report`` (once the run is over); ``release`` when the
    invocation fails before it drives. :class:`BaseExecutor` gives each a default that
    does nothing. A rescore replays stored outcomes and builds no executor by name.
    """

    def run(
        self, tasks: Iterator[TrialTask], execute: Callable[[TrialTask], Awaitable[TrialOutcome]]
    ) -> AsyncIterator[TrialOutcome]: ...

    def stop(self) -> None:
        """Start no new task; the ones in flight finish."""

    def prepare(self) -> None:
        """Reach what the case-trials run on (a cluster, say): done before any run is
        recorded, so that an unreachable one leaves nothing behind."""

    def release(self) -> None:
        """Let go of what ``prepare`` reached: the invocation failed before it drove (a bad
        option, say). What ``connect`` has handed to its TrialCall, that call's ``aclose``
        lets go of instead."""

    def connect(
        self,
        setup: TrialSetup,
        handles: list[RunHandle],
        fixtures: FixtureStore | None,
        frozen_clock: dt.datetime | None,
    ) -> TrialCall | None:
        """What runs one case-trial, when it runs elsewhere: workers that each build their
        own TrialRunner from ``setup`` (an in-process agent's clock frozen at
        ``frozen_clock``), what they record going to ``fixtures``. None (the default): the
        runner builds a TrialRunner here and ``run`` awaits it on this event loop."""

    def report(self) -> JSONObject | None:
        """What the executor did, once the run is over: kept in each run's options under
        ``executor`` (with ``name``); None keeps nothing."""

    def lost_usd(self) -> float:
        """What attempts lost with their worker spent: it counts against --max-cost."""


class BaseExecutor:
    """What every executor shares: the stop flag (once set, no new task starts) and the
    runner's other calls, which do nothing unless an executor overrides them."""

    _stopped = False

    def stop(self) -> None:
        self._stopped = True

    def prepare(self) -> None:
        return None

    def release(self) -> None:
        return None

    def connect(
        self,
        setup: TrialSetup,
        handles: list[RunHandle],
        fixtures: FixtureStore | None,
        frozen_clock: dt.datetime | None,
    ) -> TrialCall | None:
        return None

    def report(self) -> JSONObject | None:
        return None

    def lost_usd(self) -> float:
        return 0.0


class LocalExecutor(BaseExecutor):
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
    """At most ``concurrency`` case-trials in flight, each run by a worker of a pool:
    ``connect`` must return the call that ships a case-trial to a worker."""

    def connect(
        self,
        setup: TrialSetup,
        handles: list[RunHandle],
        fixtures: FixtureStore | None,
        frozen_clock: dt.datetime | None,
    ) -> TrialCall:
        raise NotImplementedError


# -- executors by name ---------------------------------------------------------------------


@dataclass(frozen=True)
class ExecutorSettings:
    """What ``caseforge run`` tells the executor it builds by name."""

    name: str  # --executor
    concurrency: int  # case-trials in flight: --concurrency, else the suite's
    workers: int | None = None  # --workers: for an executor with workers; None: its default

    def refuse_workers(self) -> None:
        """For an executor without workers: ``--workers`` is a usage error."""
        if self.workers is not None:
            raise UsageError(
                f"--workers is for an executor with workers (--executor ray), not {self.name}"
            )


class ExecutorFactory(Protocol):
    """Builds an executor for a run (an executor class taking the settings will do)."""

    def __call__(self, settings: ExecutorSettings) -> Executor: ...


def local_executor(settings: ExecutorSettings) -> LocalExecutor:
    """``--executor local``: the case-trials run on this process's event loop."""
    settings.refuse_workers()
    return LocalExecutor(settings.concurrency)


# Each built-in factory as "module:name", imported only when its name is asked for.
BUILTIN_EXECUTORS: dict[str, str] = {
    "local": "caseforge.run.executor:local_executor",
    "ray": "caseforge.run.ray_executor:ray_executor",
}


def executor_names() -> list[str]:
    """Every name ``--executor`` knows: the built-in ones, then the installed packages'."""
    installed = sorted({point.name for point in entry_points(group=ENTRY_POINT_GROUP)})
    return [*BUILTIN_EXECUTORS, *(n for n in installed if n not in BUILTIN_EXECUTORS)]


def check_executor_name(name: str) -> None:
    """A name ``--executor`` does not know is a usage error that lists the known ones."""
    if name in BUILTIN_EXECUTORS:
        return  # no entry point is read for a built-in name
    known = executor_names()
    if name not in known:
        listed = ", ".join(known[:-1]) + f" or {known[-1]}" if len(known) > 1 else known[0]
        raise UsageError(f"--executor must be {listed}, not {name!r}")


def executor_factory(name: str) -> ExecutorFactory:
    """The factory ``--executor NAME`` names: built in, else an installed entry point."""
    check_executor_name(name)
    builtin = BUILTIN_EXECUTORS.get(name)
    if builtin is not None:
        module, _, attr = builtin.partition(":")
        return cast("ExecutorFactory", getattr(importlib.import_module(module), attr))
    (point, *_) = entry_points(group=ENTRY_POINT_GROUP, name=name)
    where = f"executor {name!r} (entry point {point.value})"
    try:
        loaded: object = point.load()
    except Exception as exc:
        raise CaseforgeError(f"{where}: cannot load: {type(exc).__name__}: {exc}") from None
    except (SystemExit, KeyboardInterrupt) as exc:
        failure = suite_exit(exc)
        if failure is None:
            raise
        raise CaseforgeError(f"{where}: cannot load: it {failure}") from None
    if not callable(loaded):
        raise CaseforgeError(
            f"{where}: {loaded!r} is not an executor factory (a callable taking "
            "ExecutorSettings and returning an executor)"
        )
    return cast("ExecutorFactory", loaded)


def build_executor(settings: ExecutorSettings) -> Executor:
    """The executor ``settings.name`` names, built for this run."""
    return executor_factory(settings.name)(settings)
