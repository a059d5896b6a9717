"""``--executor ray``: case-trials run on the workers of a Ray cluster.

Each worker is an async actor that builds its own :class:`~caseforge.run.trial.TrialRunner`
from the run's :class:`~caseforge.run.setup.TrialSetup` and runs many case-trials at once
on its event loop: the agent call, the workspace and the outcome probe. The driver (this
process) keeps the run's concurrency, grades, judges and stores, as with the local
executor.

Ray schedules a call in about a millisecond, too slow to spend on every case-trial, so
the driver sends case-trials in batches (those asked for within SEND_WINDOW_S, in one call
per worker) and each worker streams back, on one stream for its whole life, what finished
within RESULT_WINDOW_S. The driver keeps PREFETCH times the workers' slots started, so a
worker always has the next case-trials queued. A worker that dies costs only the
case-trials it had running or queued: they are sent once more to another worker (and a
replacement is started), and what their lost attempts spent through ``ctx.llm()`` is
reported. One coordinator actor
holds what the workers share: the run's ``rate_limit:`` and the spend per worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import logging
import os
import secrets
import socket
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from caseforge.agent.fixtures import FixtureMode, FixtureStore
from caseforge.case.load import suite_modes
from caseforge.case.model import Case, case_model
from caseforge.errors import EnvError, UsageError
from caseforge.jsontypes import JSONObject
from caseforge.llm.limiter import RateLimiter
from caseforge.network import is_loopback
from caseforge.run.capture import routed
from caseforge.run.executor import ExecutorSettings, TrialOutcome, TrialTask, WorkerPool

if TYPE_CHECKING:
    import time_machine

    from caseforge.run.plan import RunHandle
    from caseforge.run.setup import TrialSetup
    from caseforge.run.trial import TrialRunner

# The environment a worker needs to reach the models the driver reaches.
PASSED_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CASEFORGE_MODEL")
START_TIMEOUT_S = 120.0
SEND_WINDOW_S = 0.02  # case-trials asked for within this go to the workers together
SEND_MAX = 256  # ... or as soon as this many wait
RESULT_WINDOW_S = 0.01  # a worker sends what finished within this of the first, together
AFFINITY_SLACK = 8  # case-trials a case's own worker may be behind the least busy one
PREFETCH = 4  # the driver keeps this many times the workers' slots started
LOST_TWICE = (
    "lost twice: the Ray worker running this case-trial died, and so did the one it was retried on"
)
FAILED = "failed"  # what a worker sends for a case-trial it could not run at all
_OUTCOME_FIELDS = tuple(f.name for f in dataclasses.fields(TrialOutcome) if f.name != "task")
# A fresh outcome's fields: a worker sends only those that differ.
_BLANK: dict[str, object] = {
    f.name: f.default for f in dataclasses.fields(TrialOutcome) if f.name != "task"
}

# Ray actor handles (a worker's, the coordinator's) have no precise type here: a method is
# called as ``handle.method.remote(...)``, which Ray types only through ActorHandle[T].

# (slot, run id, case id, trial, seed, clock, resent, traceparent): what a worker needs to
# run one (the traceparent of the case-trial's span, when caseforge exports its own).
Message = tuple[int, str, str, int, int, str, bool, str | None]


@dataclass
class PoolStats:
    """What the pool did beyond running case-trials: for the run's options and the CLI."""

    workers: int
    address: str
    lost_workers: int = 0
    retried: int = 0  # case-trials sent again after their worker died
    lost_twice: int = 0  # ... and lost again: stored as errors
    lost_usd: float = 0.0  # what the lost attempts spent through ctx.llm()
    worker_peak_rss_mb: float = 0.0  # the largest worker's
    limited_calls: int = 0  # ctx.llm() requests the shared rate_limit: let through
    limit_waited_s: float = 0.0  # how long they waited for it, in all

    def to_json(self) -> JSONObject:
        return {"name": "ray", **dataclasses.asdict(self)}


class RayExecutor(WorkerPool):
    """``concurrency`` case-trials in flight over ``workers`` Ray actors.

    ``address`` (else ``RAY_ADDRESS``) names a running cluster; with neither, a local one is
    started for the run, listening on 127.0.0.1 only, and stopped at the end. ``workers``
    defaults to the cluster's CPUs.
    """

    def __init__(
        self, concurrency: int, workers: int | None = None, address: str | None = None
    ) -> None:
        super().__init__(concurrency)
        if workers is not None and workers < 1:
            raise UsageError(f"--workers must be at least 1, not {workers}")
        self.workers = workers
        self.address = address if address is not None else os.environ.get("RAY_ADDRESS")
        self.trials: RayTrials | None = None
        self._ray: ModuleType | None = None
        self._owns_ray = False

    def prepare(self) -> None:
        if self._ray is None:
            self._ray, self._owns_ray = _connect(self.address)

    def release(self) -> None:
        if self.trials is None and self._owns_ray and self._ray is not None:
            self._ray.shutdown()
            self._ray, self._owns_ray = None, False

    def in_flight(self) -> int:
        # Beyond the workers' slots, the next case-trials wait queued on the workers.
        return self.concurrency * PREFETCH

    def report(self) -> JSONObject | None:
        return self.trials.stats.to_json() if self.trials is not None else None

    def lost_usd(self) -> float:
        return self.trials.stats.lost_usd if self.trials is not None else 0.0

    def connect(
        self,
        setup: TrialSetup,
        handles: list[RunHandle],
        fixtures: FixtureStore | None,
        frozen_clock: dt.datetime | None,
    ) -> RayTrials:
        self.prepare()
        ray, started = self._ray, self._owns_ray
        assert ray is not None, "prepare() connects"
        try:
            cpus = float(ray.cluster_resources().get("CPU", 1.0))
            workers = self.workers or max(1, int(cpus))
            runs = {
                h.run_id: (
                    h.config_name,
                    h.config,
                    {cid: c.model_dump_json(exclude_unset=True) for cid, c in h.cases.items()},
                )
                for h in handles
            }
            limit = setup.config.rate_limit
            coordinator = (
                ray.remote(Coordinator)
                .options(num_cpus=0, max_concurrency=1000)
                .remote(
                    limit.rpm if limit else None,
                    limit.tpm if limit else None,
                    limit.window_s if limit else 60.0,
                )
            )
            env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
            per_worker = -(-self.concurrency // workers)
            actor = ray.remote(TrialWorker).options(
                num_cpus=min(1.0, cpus / workers),
                max_concurrency=self.concurrency + 8,
                max_restarts=0,
            )
            shared = ray.put(runs)
            spawn_args = (setup, shared, env, coordinator, per_worker, frozen_clock)
            self.trials = RayTrials(
                ray,
                lambda number: actor.remote(number, *spawn_args),
                workers,
                coordinator,
                fixtures,
                PoolStats(workers=workers, address=self.address or "local"),
                started,
            )
            self.trials.start()
        except BaseException:
            if self.trials is not None:
                self.trials.kill()
            if started:
                ray.shutdown()
            raise
        return self.trials


def ray_executor(settings: ExecutorSettings) -> RayExecutor:
    """``--executor ray``: the cluster at ``RAY_ADDRESS``, else a local one for the run."""
    return RayExecutor(settings.concurrency, workers=settings.workers)


@dataclass(eq=False)
class _Worker:
    number: int
    actor: Any
    jobs: dict[int, _Job] = field(default_factory=dict)  # sent to it, not yet answered
    delivered_usd: float = 0.0  # ctx.llm() spend of the outcomes it handed back
    stream: asyncio.Task[None] | None = None


@dataclass(eq=False)
class _Job:
    slot: int
    task: TrialTask
    future: asyncio.Future[TrialOutcome]
    sent: int = 0  # how many times it went to a worker


@dataclass(eq=False)
class RayTrials:
    """The driver's side of the pool: ``await trials(task)`` runs one case-trial on a
    worker.

    Case-trials asked for within SEND_WINDOW_S go to the workers in one message each; each
    worker streams back what finished within its own window. The driver keeps more
    case-trials started than the workers run at once (``RayExecutor.in_flight``), so a
    worker always has the next ones queued while their outcomes travel: the windows cost
    the run no time.
    """

    ray: ModuleType = field(repr=False)
    spawn: Any = field(repr=False)  # worker number -> actor handle
    size: int
    coordinator: Any = field(repr=False)
    fixtures: FixtureStore | None
    stats: PoolStats
    owns_ray: bool  # this run started (or connected) Ray, and shuts it down at the end
    _live: list[_Worker] = field(default_factory=list)
    _spawned: int = 0
    _slots: int = 0
    _pending: list[_Job] = field(default_factory=list)
    _timer: asyncio.TimerHandle | None = None
    _sends: set[asyncio.Future[object]] = field(default_factory=set)
    _starting: int = 0  # replacement workers not ready yet
    _readers_of_new: set[asyncio.Task[None]] = field(default_factory=set)
    _failure: BaseException | None = None

    def start(self) -> None:
        """Start the workers and wait until each has built its TrialRunner."""
        for _ in range(self.size):
            self._live.append(self._new_worker())
        refs = [w.actor.ready.remote() for w in self._live]
        try:
            ready, waiting = self.ray.wait(refs, num_returns=len(refs), timeout=START_TIMEOUT_S)
            if waiting:
                raise EnvError(
                    f"Ray started {len(ready)} of {self.size} workers in "
                    f"{START_TIMEOUT_S:g} s: the cluster has "
                    f"{self.ray.cluster_resources().get('CPU', 0):g} CPUs; ask for fewer with "
                    "--workers"
                )
            self.ray.get(ready)
        except self.ray.exceptions.RayActorError as exc:
            raise EnvError(f"a Ray worker could not start: {_cause(exc)}") from None

    def kill(self) -> None:
        """End every actor of the pool at once (a start that failed)."""
        for worker in self._live:
            with contextlib.suppress(Exception):
                self.ray.kill(worker.actor)
        with contextlib.suppress(Exception):
            self.ray.kill(self.coordinator)
        self._live = []

    def _new_worker(self) -> _Worker:
        self._spawned += 1
        return _Worker(self._spawned, self.spawn(self._spawned))

    async def __call__(self, task: TrialTask) -> TrialOutcome:
        if self._failure is not None:
            raise self._failure
        self._slots += 1
        job = _Job(self._slots, task, asyncio.get_running_loop().create_future())
        self._queue(job)
        return await job.future

    def _queue(self, job: _Job) -> None:
        self._pending.append(job)
        if len(self._pending) >= SEND_MAX:
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(SEND_WINDOW_S, self._flush)

    def _flush(self) -> None:
        """Send what waits: each case-trial to the worker with the fewest unanswered."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        jobs, self._pending = self._pending, []
        if not jobs:
            return
        if not self._live:
            if self._starting:  # a replacement is on its way: wait for it
                self._pending[:0] = jobs
                return
            self._fail(jobs, EnvError("every Ray worker died: finish the run with --resume"))
            return
        batches: dict[_Worker, list[Message]] = {}
        live = self._live
        for job in jobs:
            task = job.task
            # A case's trials go to one worker, which then reads the case once, unless that
            # worker is well behind the least busy one.
            worker = live[zlib.crc32(task.case.id.encode()) % len(live)]
            least = min(live, key=lambda w: len(w.jobs))
            if len(worker.jobs) > len(least.jobs) + AFFINITY_SLACK:
                worker = least
            worker.jobs[job.slot] = job
            job.sent += 1
            batches.setdefault(worker, []).append(
                (job.slot, task.run_id, task.case.id, task.trial, task.seed, task.clock,
                 job.sent > 1, task.traceparent)
            )  # fmt: skip
        for worker, messages in batches.items():
            if worker.stream is None:
                worker.stream = asyncio.create_task(self._read(worker))
            sent = asyncio.ensure_future(worker.actor.submit.remote(messages))
            self._sends.add(sent)
            sent.add_done_callback(self._sent)

    def _sent(self, sent: asyncio.Future[object]) -> None:
        """A batch reached its worker (or the worker is gone: its stream says so)."""
        self._sends.discard(sent)
        if not sent.cancelled():
            sent.exception()

    async def _read(self, worker: _Worker) -> None:
        """The worker's stream of outcomes, for its whole life."""
        try:
            async for ref in worker.actor.results.remote():
                for slot, fields in await ref:
                    job = worker.jobs.pop(slot)
                    if FAILED in fields:
                        failure = RuntimeError(f"a Ray worker failed: {fields[FAILED]}")
                        self._fail([job], failure)
                        continue
                    worker.delivered_usd += fields.get("model_usd", 0.0)
                    self._deliver(job, fields)
        except self.ray.exceptions.RayActorError:
            await self._lost(worker)
        except Exception as exc:  # a bug on the worker: stop the run with it
            self._fail(list(worker.jobs.values()), exc)

    def _deliver(self, job: _Job, fields: dict[str, object]) -> None:
        outcome = TrialOutcome(task=job.task)
        for name, value in fields.items():  # the fields a worker sent: those not blank
            setattr(outcome, name, value)
        if outcome.recordings and self.fixtures is not None:
            for service, request, index, response in outcome.recordings:
                self.fixtures.record(job.task.case.id, service, request, index, response)
        outcome.recordings = None
        if not job.future.done():
            job.future.set_result(outcome)

    async def _lost(self, worker: _Worker) -> None:
        """A worker died: what it had in flight goes once more to another worker."""
        if worker not in self._live:
            return
        self._live.remove(worker)
        with contextlib.suppress(Exception):
            self.ray.kill(worker.actor)  # unreachable, perhaps, rather than dead: make sure
        self.stats.lost_workers += 1
        if self.stats.lost_workers <= self.size:  # a crash loop ends, and --resume waits
            self._starting += 1
            self._readers_of_new.add(asyncio.create_task(self._replace()))
        jobs, worker.jobs = list(worker.jobs.values()), {}
        for job in jobs:
            if job.sent >= 2:
                self.stats.lost_twice += 1
                self._deliver(job, {"error": LOST_TWICE})
            else:
                self.stats.retried += 1
                self._queue(job)
        try:
            charged = float(await self.coordinator.charged.remote(worker.number))
            self.stats.lost_usd += max(0.0, charged - worker.delivered_usd)
        except self.ray.exceptions.RayError:
            pass

    async def _replace(self) -> None:
        """Start a worker in a dead one's place; it takes work once it is ready."""
        worker = self._new_worker()
        try:
            ready = asyncio.ensure_future(worker.actor.ready.remote())
            await asyncio.wait_for(ready, START_TIMEOUT_S)
        except (TimeoutError, self.ray.exceptions.RayError):
            with contextlib.suppress(Exception):
                self.ray.kill(worker.actor)
        else:
            self._live.append(worker)
        self._starting -= 1
        if self._pending:
            self._flush()  # to the new worker; or, if none could start, they fail now

    def _fail(self, jobs: list[_Job], exc: BaseException) -> None:
        self._failure = self._failure or exc
        for job in jobs:
            if not job.future.done():
                job.future.set_exception(exc)

    async def aclose(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        streams = [w.stream for w in self._live if w.stream is not None]
        try:
            usage = await self.coordinator.usage.remote()
            self.stats.limited_calls = int(usage["granted"])
            self.stats.limit_waited_s = round(float(usage["waited_s"]), 3)
        except self.ray.exceptions.RayError:
            pass
        sizes = [w.actor.peak_rss_mb.remote() for w in self._live]
        if sizes:
            done, _ = await asyncio.wait([asyncio.ensure_future(ref) for ref in sizes], timeout=10)
            found = [t.result() for t in done if t.exception() is None]
            self.stats.worker_peak_rss_mb = round(max(found, default=0.0), 1)
        closing = [w.actor.close.remote() for w in self._live]
        if closing:
            await asyncio.wait([asyncio.ensure_future(ref) for ref in closing], timeout=10)
        for task in (*streams, *self._readers_of_new):
            task.cancel()
        await asyncio.gather(*streams, *self._readers_of_new, return_exceptions=True)
        if self._sends:
            await asyncio.wait(self._sends, timeout=10)
        for worker in self._live:
            self.ray.kill(worker.actor)
        self.ray.kill(self.coordinator)
        self._live = []
        if self.owns_ray:
            self.ray.shutdown()


def _cause(exc: BaseException) -> str:
    """The first line of what a worker raised, without Ray's framing."""
    text = str(getattr(exc, "cause", None) or exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def _connect(address: str | None) -> tuple[ModuleType, bool]:
    """Ray, initialised: connected to ``address``, or a local cluster on loopback. Also
    whether this call did it (and the run should shut it down)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
    if address is None or _loopback(address):
        # Ray binds to every interface unless it thinks it is on a laptop: on one machine
        # its servers then listen on 127.0.0.1 only. Read when Ray is imported.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    if address is None and "RAY_AUTH_MODE" not in os.environ:
        # The local cluster is this run's own: a token of its own, which the workers inherit.
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(16))
    try:
        import ray
    except ImportError:
        raise EnvError("--executor ray needs Ray: pip install 'caseforge[ray]'") from None
    if ray.is_initialized():
        return ray, False
    if address is not None and address != "auto":
        _reachable(address)
    local = address is None  # a cluster of the run's own: small, no dashboard
    try:
        ray.init(
            address=address,
            include_dashboard=False if local else None,
            object_store_memory=200 * 2**20 if local else None,
            configure_logging=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    except (ConnectionError, ray.exceptions.RayError, RuntimeError, ValueError) as exc:
        where = address or "a local cluster"
        raise EnvError(
            f"cannot reach the Ray cluster at {where}: {_cause(exc)} (check RAY_ADDRESS)"
        ) from None
    return ray, True


def _reachable(address: str) -> None:
    """Fail at once on an address nothing listens at (Ray itself retries for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
            pass
    except (OSError, ValueError) as exc:
        raise EnvError(
            f"cannot reach the Ray cluster at {address}: {exc} (check RAY_ADDRESS)"
        ) from None


def _loopback(address: str) -> bool:
    return is_loopback(address.removeprefix("ray://").rsplit(":", 1)[0].strip("[]"))


class Coordinator:
    """What the workers share (a Ray actor): the run's rate limit, and what each worker's
    ``ctx.llm()`` calls spent, so the driver can tell what a dead worker's attempts cost."""

    def __init__(self, rpm: int | None, tpm: int | None, window_s: float) -> None:
        self.limiter = RateLimiter(rpm, tpm, window_s=window_s)
        self.spent: dict[int, float] = {}
        self.granted = 0

    async def acquire(self, tokens: int) -> None:
        await self.limiter.acquire(tokens)
        self.granted += 1

    def charge(self, worker: int, cost_usd: float) -> None:
        self.spent[worker] = self.spent.get(worker, 0.0) + cost_usd

    def charged(self, worker: int) -> float:
        return self.spent.get(worker, 0.0)

    def usage(self) -> JSONObject:
        return {"granted": self.granted, "waited_s": self.limiter.waited_s}


class SharedLimiter:
    """A worker's view of the coordinator's limiter."""

    def __init__(self, coordinator: Any) -> None:
        self.coordinator = coordinator

    async def acquire(self, tokens: int = 0) -> None:
        await self.coordinator.acquire.remote(tokens)


class WorkerMeter:
    """Tells the coordinator what this worker's model calls cost, as they are answered.
    (It refuses nothing: ``--max-cost`` is kept by the driver, which starts no case-trial
    the budget has no room for.)"""

    def __init__(self, coordinator: Any, worker: int) -> None:
        self.coordinator = coordinator
        self.worker = worker

    def before_model_call(self) -> None:
        return None

    def charge_model_call(self, cost_usd: float) -> None:
        if cost_usd:
            self.coordinator.charge.remote(self.worker, cost_usd)


class TrialWorker:
    """One worker (a Ray actor): runs the case-trials it is sent, many at once."""

    def __init__(
        self,
        number: int,
        setup: TrialSetup,
        runs: dict[str, tuple[str | None, dict[str, object], dict[str, str]]],
        env: dict[str, str],
        coordinator: Any,
        concurrency: int,
        frozen_clock: dt.datetime | None,
    ) -> None:
        os.environ.update(env)
        setup = dataclasses.replace(setup, threads=concurrency)
        self.runs = runs
        self.model: type[Case] = case_model(suite_modes(setup.suite_dir, setup.config))
        self.cases: dict[tuple[str, str], Case] = {}
        limited = setup.config.rate_limit is not None
        # Record into memory only: the driver writes what comes back with each outcome.
        fixtures = (
            FixtureStore(setup.suite_dir, setup.fixture_mode)
            if setup.fixture_mode is not FixtureMode.OFF
            else None
        )
        self.runner: TrialRunner = setup.trial_runner(
            fixtures=fixtures,
            budget=WorkerMeter(coordinator, number),
            limiter=SharedLimiter(coordinator) if limited else None,
        )
        self.slots = asyncio.Semaphore(concurrency)
        self.running: set[asyncio.Future[None]] = set()
        self.done: list[tuple[int, dict[str, object]]] = []
        self.finished = asyncio.Event()
        self.routing = routed()  # the agent's prints go to its trial's log (run/capture.py)
        self.routing.__enter__()
        self.travel: time_machine.travel | None = None
        if frozen_clock is not None and self.runner.agent.in_process:
            import time_machine

            self.travel = time_machine.travel(frozen_clock, tick=False)
            self.travel.start()

    def ready(self) -> int:
        return os.getpid()

    def peak_rss_mb(self) -> float:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def _case(self, run_id: str, case_id: str) -> Case:
        key = (run_id, case_id)
        case = self.cases.get(key)
        if case is None:
            case = self.cases[key] = self.model.model_validate_json(self.runs[run_id][2][case_id])
        return case

    async def _one(self, message: Message) -> None:
        slot, run_id, case_id, trial, seed, clock, resent, traceparent = message
        config_name, config, _ = self.runs[run_id]
        case = self._case(run_id, case_id)
        task = TrialTask(run_id, config_name, config, case, trial, seed, clock, resent, traceparent)
        try:
            async with self.slots:
                outcome = await self.runner(task)
        except Exception as exc:  # caseforge's own failure, not the agent's: stop the run
            self.done.append((slot, {FAILED: f"{type(exc).__name__}: {exc}"}))
        else:
            fields = {name: getattr(outcome, name) for name in _OUTCOME_FIELDS}
            self.done.append((slot, {k: v for k, v in fields.items() if v != _BLANK[k]}))
        self.finished.set()

    async def submit(self, batch: list[Message]) -> None:
        """Queue case-trials: they start as slots free up (``concurrency`` at once)."""
        for message in batch:
            running = asyncio.ensure_future(self._one(message))
            self.running.add(running)
            running.add_done_callback(self.running.discard)

    async def results(self) -> AsyncIterator[list[tuple[int, dict[str, object]]]]:
        """The outcomes, for the worker's whole life: what finished within RESULT_WINDOW_S
        of the first of them, in one message."""
        while True:
            await self.finished.wait()
            await asyncio.sleep(RESULT_WINDOW_S)
            self.finished.clear()
            done, self.done = self.done, []
            if done:
                yield done

    async def close(self) -> None:
        await self.runner.agent.aclose()
        await self.runner.aclose()
        if self.travel is not None:
            self.travel.stop()
        self.routing.__exit__(None, None, None)
