"""``caseforge run``: every selected case × trial × configuration, graded and stored.

The runner plans an invocation, a new run, a resumed one (``--resume RUN_ID`` or
``latest`` re-runs only what was never stored) or a rescore (stored outcomes graded again
with today's cases), and hands the plan to one :class:`~caseforge.run.session.RunSession`,
which drives the executor, grades each outcome as it arrives and writes results in
batches. ``--max-cost`` stops dispatching once the cost so far passes the budget; the run
is left ``stopped`` and can be resumed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import re
import socket
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.exc import DatabaseError

from caseforge._version import __version__
from caseforge.agent.fixtures import FixtureMode, FixtureStore
from caseforge.agent.threads import exits_contained
from caseforge.agent.transports import configured_object, resolve_agent
from caseforge.case.context import load_context
from caseforge.case.identity import suite_identity
from caseforge.case.load import Suite, bind_suite_files, load_suite
from caseforge.case.model import Case
from caseforge.checks import BaseCheck
from caseforge.errors import CaseforgeError, Interrupted, UsageError, did_you_mean
from caseforge.grade.judge import make_judge
from caseforge.grade.trial import GradeOptions
from caseforge.jsontypes import JSONObject
from caseforge.llm.budget import CostBudget
from caseforge.paths import ensure_state_dir, suite_paths
from caseforge.results import NO_JUDGE_REASON, TrialRecord
from caseforge.run.cancel import Cancellation
from caseforge.run.conversation import Users, check_users
from caseforge.run.executor import (
    Executor,
    ExecutorSettings,
    TrialOutcome,
    TrialTask,
    build_executor,
    check_executor_name,
)
from caseforge.run.plan import (
    MAX_CASE_TRIALS,
    MAX_TRIALS,
    Progress,
    RunHandle,
    RunPlan,
    Shard,
)
from caseforge.run.replay import ReplayExecutor
from caseforge.run.session import RunSession
from caseforge.run.setup import TrialSetup, agent_spans
from caseforge.run.trial import RetryPolicy, clock_for, seed_for
from caseforge.store.db import RunStore, new_run_id
from caseforge.tracing import own
from caseforge.tracing.collect import AgentSpans
from caseforge.vcs import dataset_state

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,59}")

if TYPE_CHECKING:
    from caseforge.agent.transports import Agent
    from caseforge.grade.judge import Judge
    from caseforge.llm.client import ModelClient

__all__ = ["Progress", "RunHandle", "RunOptions", "RunOutcome", "Runner", "select_cases"]


@dataclass
class RunOptions:
    """What ``caseforge run`` (or ``rescore``) was asked to do."""

    suite_dir: Path | None = None
    agent: str | None = None
    configs: list[str] = field(default_factory=list)
    trials: int | None = None
    concurrency: int | None = None
    split: str = "all"
    case_ids: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)  # cases carrying any of these tags
    resume: str | None = None
    rescore: str | None = None  # grade this stored run's outcomes again; call no agent
    max_cost: float | None = None
    fixtures: FixtureMode | None = None
    judge: str = "auto"  # "auto" or "off"
    timeout_s: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    keep_workspaces: bool = False
    clock: dt.datetime | None = None
    no_cache: bool = False
    reuse_trials: bool = False
    shard: Shard | None = None  # --shard I/N
    run_id: str | None = None  # --run-id: the run (a matrix's group) every shard fills
    executor: str = "local"  # a name: local, ray, or an installed caseforge.executors one
    workers: int | None = None  # --workers: an executor's workers (ray: the cluster's CPUs)
    otlp_listen: str | None = None  # --otlp-listen HOST:PORT: the agent's spans' receiver

    def __post_init__(self) -> None:
        # Checked here, before any run is recorded: 0 or -1 never means "not given".
        for flag, value, least in (
            ("--trials", self.trials, 1),
            ("--concurrency", self.concurrency, 1),
            ("--workers", self.workers, 1),
        ):
            if value is not None and value < least:
                raise UsageError(f"{flag} must be at least {least}, not {value}")
        if self.trials is not None and self.trials > MAX_TRIALS:
            raise UsageError(
                f"--trials must be at most {MAX_TRIALS:,} (caseforge's limit per case), "
                f"not {self.trials:,}"
            )
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise UsageError(f"--timeout must be more than 0 seconds, not {self.timeout_s:g}")
        if self.max_cost is not None and not self.max_cost >= 0:
            raise UsageError(f"--max-cost must be 0 or more (USD), not {self.max_cost:g}")
        if self.split not in ("dev", "test", "all"):
            raise UsageError(f"--split must be dev, test or all, not {self.split!r}")
        if self.judge not in ("auto", "off"):
            raise UsageError(f"judge must be 'auto' or 'off', not {self.judge!r}")
        if self.run_id is not None and not RUN_ID.fullmatch(self.run_id):
            raise UsageError(
                f"--run-id {self.run_id!r}: use 1 to 60 letters, digits, '.', '_' or '-'"
            )
        if self.shard is not None and self.shard.count > 1:
            if self.run_id is None and self.resume is None:
                raise UsageError(
                    f"--shard {self.shard} needs --run-id: every shard names the same run "
                    "(in CI, the workflow run's id)"
                )
            if self.rescore is not None:
                raise UsageError("--shard cannot be used with rescore")
        check_executor_name(self.executor)
        if self.workers is not None and self.executor == "local":
            ExecutorSettings(self.executor, 1, self.workers).refuse_workers()
        if self.run_id is not None and self.resume is not None:
            raise UsageError("--run-id names a new run; --resume RUN_ID finishes one")
        if self.otlp_listen is not None:
            listen_address(self.otlp_listen)  # a UsageError naming the flag
            if self.executor != "local":
                raise UsageError(
                    f"--otlp-listen is for --executor local: with --executor {self.executor}, "
                    "each worker receives its agent's spans on a loopback port of its own"
                )

    @property
    def listen(self) -> tuple[str, int] | None:
        """``--otlp-listen`` as ``(host, port)``."""
        return listen_address(self.otlp_listen) if self.otlp_listen is not None else None


def listen_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:4318`` for IPv6) as ``(host, port)``; a UsageError otherwise."""
    found = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([^:\[\]\s]+):(\d{1,5})", text.strip())
    port = int(found.group(2) or found.group(4)) if found else -1
    if found is None or not 0 <= port < 65536:
        raise UsageError(
            f"--otlp-listen {text!r}: give HOST:PORT (127.0.0.1:4318, [::1]:4318, "
            "0.0.0.0:4318 to take a remote agent's spans)"
        )
    return found.group(1) or found.group(3), port


@dataclass
class RunOutcome:
    """What an invocation did."""

    suite: Suite = field(repr=False)
    runs: list[RunHandle]
    status: str  # finished | stopped
    stop_reason: str | None = None
    executed: int = 0
    skipped: int = 0
    rescored_from: str | None = None
    left_out: list[str] = field(default_factory=list)  # rescore: cases gone from the suite
    # What the executor reported (Executor.report): for ray, workers lost, case-trials
    # retried, spend.
    pool: JSONObject | None = None
    warnings: list[str] = field(default_factory=list)  # e.g. why the agent's spans are not kept


def select_cases(
    suite: Suite, split: str, case_ids: list[str], tags: list[str] | None = None
) -> list[Case]:
    """The cases of ``split`` (dev, test or all), optionally only the given ids and only
    those carrying any of ``tags``."""
    cases = [c.case for c in suite.cases if split == "all" or c.case.split == split]
    if case_ids:
        known = {c.id for c in cases}
        unknown = [cid for cid in case_ids if cid not in known]
        if unknown:
            hint = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
            raise UsageError(f"--case: no such case in {split}: {', '.join(unknown)}{hint}")
        cases = [c for c in cases if c.id in set(case_ids)]
    if tags:
        known = {tag for c in cases for tag in c.tags}
        unknown = [tag for tag in tags if tag not in known]
        if unknown:
            hint = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
            raise UsageError(f"--tag: no case in {split} is tagged {', '.join(unknown)}{hint}")
        cases = [c for c in cases if set(c.tags) & set(tags)]
    if not cases:
        raise CaseforgeError(f"{suite.suite_dir}: no cases in split {split!r}")
    return cases


class Runner:
    """Plans one invocation of ``caseforge run`` (new, resumed or a rescore), opens its
    session, drives it and closes it."""

    def __init__(
        self,
        options: RunOptions,
        store: RunStore,
        executor: Executor | None = None,
        on_start: Callable[[list[RunHandle], Progress], None] | None = None,
        on_result: Callable[[Progress, TrialRecord], None] | None = None,
        judge_client: ModelClient | None = None,
        cancellation: Cancellation | None = None,
        on_trial: Callable[[TrialOutcome, TrialRecord], None] | None = None,
    ) -> None:
        self.options = options
        self.judge_client = judge_client
        self.cancellation = cancellation or Cancellation()
        self._recorded: list[str] = []  # runs this invocation recorded or set running
        self.store = store
        self.executor = executor
        self.on_start = on_start
        self.on_result = on_result
        self.on_trial = on_trial
        self._agent: Agent | None = None
        self._user_players: Users | None = None  # who plays simulated users
        self._user_client: ModelClient | None = None
        self._prepared: Executor | None = None  # the executor once prepare() has run
        self._spans: AgentSpans | None = None  # how the agent's spans are kept, here

    async def run(self) -> RunOutcome:
        """Plan, drive and close the invocation. A cancellation (``self.cancellation``)
        stops it at any point: a run already recorded is left ``stopped``, and
        :class:`~caseforge.errors.Interrupted` is raised."""
        cancel = self.cancellation
        opts = self.options
        cancel.check()
        plan: RunPlan | None = None
        try:
            if opts.rescore:
                plan = self._rescore_plan(opts.rescore)
            elif opts.resume:
                plan = self._resume_plan(opts.resume)
            else:
                plan = self._new_plan()
            cancel.check()
            session = self._open(plan)
            if plan.shard is not None:
                session.shard = plan.shard
                host = socket.gethostname()
                for handle in plan.handles:
                    if handle.run_id not in self._recorded:  # a shard resumed
                        self._recorded.append(handle.run_id)
                    self.store.claim_shard(handle.run_id, plan.shard.index, plan.shard.count, host)
                    self.store.set_status(handle.run_id, "running")
            elif opts.resume:
                for handle in plan.handles:
                    self._recorded.append(handle.run_id)
                    self.store.set_status(handle.run_id, "running")
            cancel.check()
        except BaseException as exc:
            if self._prepared is not None:
                self._prepared.release()
            if self._spans is not None:
                self._spans.close()
            # e.g. a worker that could not start, or a stop while planning: resumable
            self._stop_recorded(plan)
            if isinstance(exc, Interrupted) and self._recorded:
                exc.detail = self._stopped_detail()
            raise
        try:
            if self.on_start:
                self.on_start(plan.handles, session.progress)
            with own.run_span(_run_attributes(plan)):
                report = await self._drive(session, plan)
        except BaseException as exc:
            if not session.marked:  # stopped before the session could mark its runs
                session.status = "stopped"
                with contextlib.suppress(BaseException):
                    await session.close()
                if not session.marked:
                    self._stop_recorded(plan)
            if isinstance(exc, Interrupted) and not exc.detail:
                exc.detail = self._stopped_detail(session.status)
            raise
        return RunOutcome(
            plan.suite,
            plan.handles,
            session.status,
            session.stop_reason,
            executed=session.progress.done,
            skipped=plan.skipped,
            rescored_from=plan.replay_from,
            left_out=plan.left_out,
            pool=report,
            warnings=self._warnings(),
        )

    def _warnings(self) -> list[str]:
        """What keeps spans from being kept or exported, said once each."""
        found = self._spans.problems if self._spans is not None else []
        problem = own.problem()
        if problem is not None:
            found.append(problem)
        return found

    async def _drive(self, session: RunSession, plan: RunPlan) -> JSONObject | None:
        """Drive the session to its end, or until cancelled; close it either way."""
        cancel = self.cancellation
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        driving = True

        def stop_driving() -> None:  # on the loop: cancel the drive, never the close
            cancel.taken.set()
            if driving:
                task.cancel()

        report: JSONObject | None = None
        cancel.stops_itself = True
        try:
            with cancel.watch(lambda: _schedule(loop, stop_driving)), exits_contained(loop):
                try:
                    await session.drive()
                except asyncio.CancelledError:
                    if not cancel.cancelled:
                        raise
                    task.uncancel()
                except Interrupted:  # raised in a blocked loop (cli/signals.py): a stop too
                    if not cancel.cancelled:
                        raise
                finally:
                    driving = False
                    # The loop is free again: a stop from here on waits for close() (it
                    # stores and marks the runs) rather than interrupting it (cli/signals.py).
                    cancel.taken.set()
                    await session.close()
                    with (
                        contextlib.suppress(Exception)
                        if session.status != "finished"
                        else (contextlib.nullcontext())
                    ):  # a run that failed still keeps what its workers did, if the store can
                        report = self._record_executor(plan, session.executor)
        finally:
            cancel.stops_itself = False
        if cancel.cancelled:
            raise Interrupted(cancel.reason, self._stopped_detail(session.status))
        return report

    def _stop_recorded(self, plan: RunPlan | None) -> None:
        """Leave every run this invocation recorded (or set running) ``stopped``."""
        for run_id in self._recorded:
            with contextlib.suppress(Exception):  # the store may be what failed
                if plan is not None and plan.shard is not None:
                    self.store.end_shard(run_id, plan.shard.index, "stopped")
                else:
                    self.store.set_status(run_id, "stopped")

    def _stopped_detail(self, status: str = "stopped") -> str:
        """What a stop kept, for the message the CLI prints."""
        first = self._recorded[0] if self._recorded else None
        if first is None:
            return "no run was recorded"
        if status == "finished":
            return f"every case-trial had finished: run {first} is finished"
        return f"the run is saved as stopped: resume with --resume {first}"

    def _record_executor(self, plan: RunPlan, executor: Executor) -> JSONObject | None:
        """Keep what the executor reported on each run, adding to earlier sessions' counts."""
        report = executor.report()
        if report is None:
            return None
        for handle in plan.handles:
            before = self.store.get_run(handle.run_id).options.get("executor")
            entry = dict(report)
            if isinstance(before, dict):
                for key in ("lost_workers", "retried", "lost_twice", "lost_usd"):
                    earlier, now = before.get(key), entry.get(key)
                    if isinstance(earlier, int | float) and isinstance(now, int | float):
                        entry[key] = earlier + now
            self.store.update_options(handle.run_id, {"executor": entry})
        return report

    def _ready_executor(self, suite: Suite) -> None:
        """The executor, built by name unless one was given, and prepared: before any run is
        recorded, so that an unreachable cluster (or a bad --workers) leaves nothing behind."""
        if self.executor is None:
            opts = self.options
            concurrency = opts.concurrency or suite.config.concurrency
            self.executor = build_executor(
                ExecutorSettings(opts.executor, max(1, concurrency), opts.workers)
            )
        self.cancellation.check()
        self._prepared = self.executor
        self.executor.prepare()

    def _open(self, plan: RunPlan) -> RunSession:
        """The session for a plan: the agent side (unless it replays), the judge, the tasks."""
        opts = self.options
        suite = plan.suite
        config = suite.config
        concurrency = opts.concurrency or config.concurrency
        judge = None if opts.judge == "off" else self._judge(suite)
        grade_options = GradeOptions(
            judge="skip" if opts.judge == "off" else "not_judged",
            judge_reason=NO_JUDGE_REASON,
        )
        default_clock = dt.datetime.fromisoformat(plan.clock)
        total = plan.planned()
        if plan.replay_from is not None:
            executor = self.executor or ReplayExecutor(self.store, plan.replay_from)
        else:
            assert self.executor is not None, "the plan readies the executor"
            executor = self.executor
        session = RunSession(
            store=self.store,
            handles=plan.handles,
            tasks=_tasks(plan, default_clock),
            executor=executor,
            progress=Progress(total=total, estimated=plan.estimated),
            grade_options=grade_options,
            concurrency=concurrency,
            judge=judge,
            on_result=self.on_result,
            on_trial=self.on_trial,
            cancellation=self.cancellation,
            capture_content=config.otel.capture_content,
        )
        if opts.max_cost is not None:
            session.budget = CostBudget(opts.max_cost)
            judge_stats = judge.client.stats if judge is not None else None
            session.budget.other_usd = lambda: (
                (judge_stats.cost_usd if judge_stats is not None else 0.0) + executor.lost_usd()
            )
        if plan.replay_from is not None:
            return session
        agent = self._agent
        assert agent is not None, "the plan resolves the agent"
        paths = suite_paths(suite.suite_dir)
        ensure_state_dir(paths.state)
        clocks = {clock_for(c, default_clock) for h in plan.handles for c in h.cases.values()}
        setup = TrialSetup(
            suite_dir=suite.suite_dir,
            config=config,
            agent=opts.agent,
            threads=concurrency,
            timeout_s=opts.timeout_s or config.timeout_s,
            retry=opts.retry,
            # A shard's own folder: the shards of a run on one machine (pytest -n) end at
            # different times, and each removes its folder when it ends.
            work_dir=paths.work
            / (
                plan.handles[0].run_id
                + (f"-shard{plan.shard.index}" if plan.shard is not None else "")
            ),
            fixture_mode=opts.fixtures or FixtureStore.default_mode(suite.suite_dir),
            keep_workspaces=opts.keep_workspaces,
            no_cache=opts.no_cache,
            reuse_trials=opts.reuse_trials,
            # Several clocks: a process has one, so freeze it per call only when one runs at
            # a time.
            freeze_each=(
                config.freeze_clock and agent.in_process and len(clocks) > 1 and concurrency == 1
            ),
            otlp_listen=opts.listen,
        )
        fixtures = setup.fixtures()
        users = self._players(suite, session)
        frozen = next(iter(clocks)) if config.freeze_clock and len(clocks) == 1 else None
        # An executor that runs case-trials elsewhere says how to ship one; else they run here.
        elsewhere = executor.connect(setup, plan.handles, fixtures, frozen)
        if elsewhere is not None:
            session.trial_runner = elsewhere
            if self._spans is not None:  # each worker keeps its own agent's spans
                self._spans.close()
                self._spans = None
        else:
            session.trial_runner = setup.trial_runner(
                agent=agent,
                users=users,
                fixtures=fixtures,
                budget=session.budget,
                limiter=setup.limiter(),
                spans=self._spans,
            )
            session.clock_freezer = _clock_freezer(agent.in_process, clocks, config.freeze_clock)
        session.agent = agent
        session.fixtures = fixtures
        session.work_dir = setup.work_dir
        session.keep_workspaces = opts.keep_workspaces
        return session

    def _resolve_agent(self, suite: Suite) -> None:
        """The agent, resolved (and the suite's hooks and context read) before any run is
        recorded, so a broken spec fails first."""
        config = suite.config
        concurrency = self.options.concurrency or config.concurrency
        self._agent = resolve_agent(
            config.agent, self.options.agent, suite.suite_dir, threads=concurrency
        )
        for key, hook in (
            ("workspace_setup", config.workspace_setup),
            ("outcome_probe", config.outcome_probe),
        ):
            if hook:
                configured_object(hook, suite.suite_dir, key)
        load_context(suite.suite_dir)
        # A command or HTTP agent's span receiver listens from here: an address that cannot
        # be had stops the run before it is recorded.
        if self._spans is None:
            self._spans = agent_spans(self._agent, self.options.listen, config.otel.span_wait_s)

    def _players(self, suite: Suite, session: RunSession) -> Users:
        players = self._user_players or self._users(suite)
        if self._user_client is not None:
            self._user_client.budget = session.budget  # its calls count against --max-cost
        return players

    def _users(self, suite: Suite) -> Users:
        """Who plays simulated users; the `simulator:` model's calls count against
        --max-cost like the agent's own model calls."""
        setup = TrialSetup(
            suite.suite_dir, suite.config, None, 1, 1.0, no_cache=self.options.no_cache
        )
        users, client = setup.users()
        self._user_client = client  # its budget is the session's, set when that exists
        return users

    def _judge(self, suite: Suite) -> Judge | None:
        return make_judge(
            suite.config.judge,
            suite.config.prices,
            None if self.options.no_cache else suite_paths(suite.suite_dir).cache,
            self.judge_client,
        )

    def _record_run(
        self,
        run_id: str,
        group: str,
        suite: Suite,
        config_name: str | None,
        config: dict[str, object],
        trials: int,
        split: str,
        agent: str,
        options: JSONObject,
        cases: list[Case],
        state: tuple[str | None, bool | None],
    ) -> RunHandle:
        """Create one run in the store with its case snapshot."""
        commit, dirty = state
        self.cancellation.check()
        self.store.create_run(
            suite_identity=suite_identity(suite.suite_dir, suite.config.name),
            id=run_id,
            suite=suite.config.name,
            suite_path=str(suite.suite_dir.resolve()),
            group_id=group,
            dataset_commit=commit,
            dataset_dirty=dirty,
            agent=agent,
            config_name=config_name,
            config=config,
            trials=trials,
            split=split,
            caseforge_version=__version__,
            options=options,
            cases=[(c.id, c.model_dump_json(exclude_unset=True)) for c in cases],
        )
        self._recorded.append(run_id)
        return RunHandle(run_id, config_name, config, {c.id: c for c in cases})

    def _new_plan(self) -> RunPlan:
        opts = self.options
        if opts.suite_dir is None:
            raise UsageError("no suite given")
        suite = load_suite(opts.suite_dir)
        config = suite.config
        cases = select_cases(suite, opts.split, opts.case_ids, opts.tags)
        require_check_environment(cases)  # a missing extra fails before any run is recorded
        names: list[str | None]
        if opts.configs:
            unknown = [n for n in opts.configs if n not in config.configs]
            if unknown:
                known = ", ".join(config.configs) or "none"
                hint = did_you_mean(unknown[0], config.configs) if len(unknown) == 1 else ""
                raise UsageError(
                    f"--config: unknown config {', '.join(unknown)}{hint} (the suite has: {known})"
                )
            names = list(dict.fromkeys(opts.configs))
        else:
            names = [next(iter(config.configs))] if config.configs else [None]
        trials = opts.trials if opts.trials is not None else config.trials
        asked = len(cases) * trials * len(names)
        if asked > MAX_CASE_TRIALS:
            raise UsageError(
                f"{len(cases):,} cases x {trials:,} trials"
                + (f" x {len(names)} configs" if len(names) > 1 else "")
                + f" = {asked:,} case-trials: one invocation runs at most {MAX_CASE_TRIALS:,} "
                "(use fewer --trials, or select cases with --case or --tag)"
            )
        self._resolve_agent(suite)  # a broken agent spec fails before any run is recorded
        self._user_players = self._users(suite)
        check_users(self._user_players, cases, self._user_players.model is not None)
        self._ready_executor(suite)
        clock = (opts.clock or dt.datetime.now(dt.UTC).replace(microsecond=0)).isoformat()
        agent_desc = opts.agent or _agent_description(suite)
        group = opts.run_id or new_run_id()
        if opts.run_id and opts.shard is None and self.store.has_run(opts.run_id):
            raise UsageError(
                f"--run-id {opts.run_id}: the store has that run already: finish it with "
                f"--resume {opts.run_id}, or name a new one"
            )
        state = dataset_state(suite.suite_dir)
        options: JSONObject = {
            "judge_mode": opts.judge,
            "fixtures": (opts.fixtures.value if opts.fixtures else None),
            "case_ids": list(opts.case_ids),
            "tags": list(opts.tags),
            "max_cost": opts.max_cost,
            "clock": clock,  # for cases without their own; kept for --resume
        }
        record = self._record_or_join if opts.shard is not None else self._record_run
        handles = [
            record(
                group if index == 0 else f"{group}-{index + 1}",
                group,
                suite,
                name,
                config.configs.get(name, {}) if name else {},
                trials,
                opts.split,
                agent_desc,
                options,
                cases,
                state,
            )
            for index, name in enumerate(names)
        ]
        done = {h.run_id: self.store.done(h.run_id) for h in handles} if opts.shard else {}
        return RunPlan(suite, handles, trials, clock, done, shard=opts.shard)

    def _record_or_join(
        self,
        run_id: str,
        group: str,
        suite: Suite,
        config_name: str | None,
        config: dict[str, object],
        trials: int,
        split: str,
        agent: str,
        options: JSONObject,
        cases: list[Case],
        state: tuple[str | None, bool | None],
    ) -> RunHandle:
        """A shard's run: created by the first shard to get there, joined by the others
        (which must be running the same thing)."""
        try:
            return self._record_run(
                run_id, group, suite, config_name, config, trials, split, agent, options, cases,
                state,
            )  # fmt: skip
        except DatabaseError:  # the run exists: another shard made it, now or earlier
            if not self.store.has_run(run_id):
                raise
        info = self.store.get_run(run_id)
        our_cases, their_cases = sorted(c.id for c in cases), sorted(self.store.cases(run_id))
        ours: dict[str, object] = {
            "suite": suite.config.name,
            "dataset commit": state[0],
            "config": config_name,
            "config settings": config,
            "trials": trials,
            "split": split,
            "cases": our_cases,
        }
        theirs: dict[str, object] = {
            "suite": info.suite,
            "dataset commit": info.dataset_commit,
            "config": info.config_name,
            "config settings": info.config,
            "trials": info.trials,
            "split": info.split,
            "cases": their_cases,
        }
        for what, mine in ours.items():
            if mine != theirs[what]:
                shown = (
                    f"{len(their_cases)} stored, {len(our_cases)} here"
                    if what == "cases"
                    else f"stored {theirs[what]!r}, here {mine!r}"
                )
                raise UsageError(
                    f"--run-id {run_id}: that run has a different {what} ({shown}); every "
                    "shard of a run must run the same suite, commit and options"
                )
        self._recorded.append(run_id)
        return RunHandle(run_id, config_name, config, {c.id: c for c in cases})

    def _resume_plan(self, resume: str) -> RunPlan:
        opts = self.options
        if resume == "latest":
            if opts.suite_dir is None:
                raise UsageError("--resume latest needs the suite")
            name = load_suite(opts.suite_dir).config.name
            group = self.store.latest_unfinished(name, suite_identity(opts.suite_dir, name))
            if not group:
                raise UsageError(f"--resume latest: no unfinished run of suite {name!r} to resume")
        else:
            first = self.store.get_run(resume)
            group = self.store.group(first.group_id)
        # The judge is the run's, not this invocation's: a run started with --no-judge and
        # resumed without it would grade the rest `not judged`, a rate no one asked for.
        started = group[0].options.get("judge_mode")
        if started == "off" and opts.judge != "off":
            opts = self.options = replace(opts, judge="off")
        elif started == "auto" and opts.judge == "off":
            raise UsageError(
                f"--resume {resume}: that run was started with its judge; resume it without "
                "--no-judge (or rescore it later with --no-judge)"
            )
        suite_dir = opts.suite_dir or Path(group[0].suite_path)
        clock = str(group[0].options.get("clock") or dt.datetime.now(dt.UTC).isoformat())
        suite = load_suite(suite_dir)
        self._resolve_agent(suite)
        self._ready_executor(suite)
        handles = []
        for info in group:
            snapshot = self.store.cases(info.id)
            model = suite.case_model
            cases = {cid: model.model_validate(data) for cid, data in snapshot.items()}
            for case in cases.values():  # the files its checks name, read from the suite
                unread = bind_suite_files(case, suite.suite_dir)
                if unread:
                    where, message = unread[0]
                    field = ".".join(str(part) for part in where)
                    raise CaseforgeError(f"{info.id}: case {case.id}: {field}: {message}")
            require_check_environment(cases.values())
            handles.append(RunHandle(info.id, info.config_name, info.config, cases))
        done = {h.run_id: self.store.done(h.run_id) for h in handles}
        return RunPlan(suite, handles, group[0].trials, clock, done, shard=opts.shard)

    def _rescore_plan(self, source: str) -> RunPlan:
        """A new run over the stored run's case-trials, graded with today's cases."""
        info = self.store.get_run(source)
        if info.status != "finished":
            raise CaseforgeError(
                f"run {source} is {info.status}: finish it (--resume) before rescoring"
            )
        suite = load_suite(self.options.suite_dir or Path(info.suite_path))
        current = {c.case.id: c.case for c in suite.cases}
        stored = set(self.store.cases(source))
        kept = [current[cid] for cid in sorted(stored & set(current))]
        require_check_environment(kept)
        run_id = new_run_id()
        options: JSONObject = {**info.options, "rescored_from": source, "judge": None}
        handle = self._record_run(
            run_id,
            run_id,
            suite,
            info.config_name,
            info.config,
            info.trials,
            info.split,
            info.agent,
            options,
            kept,
            dataset_state(suite.suite_dir),
        )
        stored_trials = self.store.done(source)
        # Only what the stored run holds is replayed: mark every other case-trial done.
        missing = {
            (c.id, t)
            for c in kept
            for t in range(1, info.trials + 1)
            if (c.id, t) not in stored_trials
        }
        clock = str(info.options.get("clock") or dt.datetime.now(dt.UTC).isoformat())
        return RunPlan(
            suite,
            [handle],
            info.trials,
            clock,
            done={run_id: missing},
            replay_from=source,
            left_out=sorted(stored - set(current)),
        )


def require_check_environment(cases: Iterable[Case]) -> None:
    """``EnvError`` when a check mode these cases use needs a package this machine lacks
    (``javascript``: mini-racer), said once, before any case-trial runs."""
    asked: set[type[object]] = set()
    for case in cases:
        for _, _, check in case.checks():
            kind = type(check)
            if kind not in asked:
                asked.add(kind)
                if isinstance(check, BaseCheck):
                    check.require_environment()


def _schedule(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    """Run ``callback`` on ``loop`` soon; safe from a signal handler or another thread, and
    a loop already closed is left alone."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback)


def _tasks(plan: RunPlan, default_clock: dt.datetime) -> Iterator[TrialTask]:
    """The plan's case-trials not yet stored, generated as the executor asks for them, so
    the first ones start at once."""
    for handle in plan.handles:
        done = plan.done.get(handle.run_id, set())
        for case in handle.cases.values():
            clock = clock_for(case, default_clock).isoformat()
            for trial in range(1, plan.trials + 1):
                if (case.id, trial) in done or not plan.mine(case.id, trial):
                    continue
                yield TrialTask(
                    run_id=handle.run_id,
                    config_name=handle.config_name,
                    config=handle.config,
                    case=case,
                    trial=trial,
                    seed=seed_for(case, trial),
                    clock=clock,
                )


def _run_attributes(plan: RunPlan) -> dict[str, object]:
    """What caseforge's own span of a run says of it (no content: names and counts)."""
    first = plan.handles[0]
    return {
        "caseforge.suite": plan.suite.config.name,
        "caseforge.run.id": first.run_id,
        "caseforge.config": first.config_name,
        "caseforge.trials": plan.trials,
        "caseforge.cases": len(first.cases),
        "caseforge.rescored_from": plan.replay_from,
    }


def _agent_description(suite: Suite) -> str:
    spec = suite.config.agent
    if spec is None:
        return "(none)"
    if spec.callable:
        return spec.callable
    if spec.http:
        return spec.http
    command = spec.command
    return "cmd:" + (command if isinstance(command, str) else " ".join(command or []))


def _clock_freezer(
    in_process: bool, clocks: set[dt.datetime], enabled: bool
) -> contextlib.AbstractContextManager[object]:
    """Freeze the process clock for in-process agents when one clock serves the whole run.

    A process has one clock: with several clocks and concurrent case-trials, freezing would
    hand one case another's time, so the agent gets ``ctx.now()`` only (or, at concurrency
    1, the clock is frozen around each call instead).
    """
    if not (enabled and in_process and len(clocks) == 1):
        return contextlib.nullcontext()
    import time_machine

    return time_machine.travel(next(iter(clocks)), tick=False)
