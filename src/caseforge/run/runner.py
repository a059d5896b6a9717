"""``caseforge run``: every selected case × trial × configuration, graded and stored.

The driver expands case-trials, hands them to an executor, grades each outcome as it
arrives, and writes results to the store in batches (at least once a second). A run
prints its id first; ``--resume RUN_ID`` (or ``latest``) re-runs only what was never
stored. ``--max-cost`` stops dispatching once the cost so far passes the budget; the run
is left ``stopped`` and can be resumed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caseforge import __version__
from caseforge.agent.fixtures import FixtureMode, FixtureStore
from caseforge.agent.transports import import_object, resolve_agent
from caseforge.case.load import Suite, load_suite
from caseforge.case.model import Case
from caseforge.errors import CaseforgeError
from caseforge.grade.judge import judge_record
from caseforge.grade.trial import GradeOptions, grade_trial
from caseforge.llm.cache import LLMCache
from caseforge.llm.prices import PriceTable
from caseforge.paths import suite_paths
from caseforge.results import NO_JUDGE_REASON, CheckResult, TrialRecord, TrialStatus, needs_judge
from caseforge.run.executor import Executor, LocalExecutor, TrialOutcome, TrialTask
from caseforge.run.trial import RetryPolicy, TrialRunner, clock_for, seed_for
from caseforge.store.db import RunStore, new_run_id, utcnow
from caseforge.vcs import dataset_state

if TYPE_CHECKING:
    from caseforge.grade.judge import Judge
    from caseforge.llm.client import ModelClient

FLUSH_EVERY_S = 0.5  # finished case-trials reach the store within a second
FLUSH_ROWS = 500


@dataclass
class RunOptions:
    """What ``caseforge run`` was asked to do."""

    suite_dir: Path | None = None
    agent: str | None = None
    configs: list[str] = field(default_factory=list)
    trials: int | None = None
    concurrency: int | None = None
    split: str = "all"
    case_ids: list[str] = field(default_factory=list)
    resume: str | None = None
    max_cost: float | None = None
    fixtures: FixtureMode | None = None
    judge: str = "auto"  # "auto" or "off"
    timeout_s: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    keep_workspaces: bool = False
    clock: dt.datetime | None = None
    no_cache: bool = False
    reuse_trials: bool = False


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


@dataclass
class RunHandle:
    """One configuration's run within an invocation."""

    run_id: str
    config_name: str | None
    config: dict[str, Any]
    # Kept out of repr: asyncio formats the task result, and 10,000 cases take seconds.
    cases: dict[str, Case] = field(repr=False)


@dataclass
class RunOutcome:
    """What an invocation did."""

    suite: Suite = field(repr=False)
    runs: list[RunHandle]
    status: str  # finished | stopped
    stop_reason: str | None = None
    executed: int = 0
    skipped: int = 0


def store_row(outcome: TrialOutcome, record: TrialRecord) -> dict[str, Any]:
    """The store row of a graded case-trial: the record, the raw response, the probe's reading."""
    result = outcome.result
    if outcome.stderr_tail:
        record.error = f"{record.error}\n--- stderr (tail) ---\n{outcome.stderr_tail}"
    return record.to_row(
        outcome.task.run_id,
        utcnow(),
        result.model_dump_json() if result is not None else None,
        json.dumps(outcome.outcomes, ensure_ascii=False, default=str)
        if outcome.outcomes is not None
        else None,
    )


def grade_outcome(outcome: TrialOutcome, options: GradeOptions) -> TrialRecord:
    """Grade what the executor returned (an agent error is an ``error`` with no checks)."""
    task = outcome.task
    result = outcome.result
    usage = result.usage if result is not None else None
    if result is None:
        status, checks = TrialStatus.ERROR, list[CheckResult]()
    else:
        status, checks = grade_trial(
            task.case, result, outcome.outcomes, options, outcome.outcome_error
        )
    return TrialRecord(
        case_id=task.case.id,
        trial=task.trial,
        status=status,
        checks=checks,
        error=outcome.error,
        latency_s=outcome.latency_s,
        cost_usd=usage.cost_usd if usage else 0.0,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
    )


def select_cases(suite: Suite, split: str, case_ids: list[str]) -> list[Case]:
    """The cases of ``split`` (dev, test or all), optionally only the given ids."""
    if split not in ("dev", "test", "all"):
        raise CaseforgeError(f"--split must be dev, test or all, not {split!r}")
    cases = [c.case for c in suite.cases if split == "all" or c.case.split == split]
    if case_ids:
        known = {c.id for c in cases}
        unknown = [cid for cid in case_ids if cid not in known]
        if unknown:
            raise CaseforgeError(f"no such case in {split}: {', '.join(unknown)}")
        cases = [c for c in cases if c.id in set(case_ids)]
    if not cases:
        raise CaseforgeError(f"{suite.root}: no cases in split {split!r}")
    return cases


class Runner:
    """Plans, executes, grades and stores one invocation of ``caseforge run``."""

    def __init__(
        self,
        options: RunOptions,
        store: RunStore,
        executor: Executor | None = None,
        on_start: Callable[[list[RunHandle], Progress], None] | None = None,
        on_result: Callable[[Progress, TrialRecord], None] | None = None,
        judge_client: ModelClient | None = None,
    ) -> None:
        self.options = options
        self.judge_client = judge_client
        self.store = store
        self.executor = executor
        self.on_start = on_start
        self.on_result = on_result

    async def run(self) -> RunOutcome:
        opts = self.options
        if opts.resume:
            suite, handles, trials = self._resume_plan()
        else:
            suite, handles, trials = self._new_plan()
        config = suite.config
        concurrency = opts.concurrency or config.concurrency
        timeout_s = opts.timeout_s or config.timeout_s
        agent = self._agent
        fixture_mode = opts.fixtures or FixtureStore.default_mode(suite.root)
        fixtures = (
            FixtureStore(suite.root, fixture_mode) if fixture_mode != FixtureMode.OFF else None
        )
        paths = suite_paths(suite.root)
        work_dir = paths.work / handles[0].run_id
        runner = TrialRunner(
            agent=agent,
            timeout_s=timeout_s,
            retry=opts.retry,
            work_dir=work_dir,
            fixtures=fixtures,
            workspace_setup=self._hooks[0],
            outcome_probe=self._hooks[1],
            keep_workspaces=opts.keep_workspaces,
            llm_cache=None if opts.no_cache else LLMCache(paths.llm_cache),
            reuse_trials=opts.reuse_trials,
            llm_prices=PriceTable(config.prices),
        )
        judge = None if opts.judge == "off" else self._judge(suite)
        grade_options = GradeOptions(
            judge="skip" if opts.judge == "off" else "not_judged",
            judge_reason=NO_JUDGE_REASON,
        )
        default_clock = dt.datetime.fromisoformat(self._clock)

        done = {h.run_id: self.store.done(h.run_id) if opts.resume else set() for h in handles}
        skipped = sum(len(d) for d in done.values())
        total = sum(len(h.cases) for h in handles) * trials - skipped

        def tasks() -> Iterator[TrialTask]:
            # Generated as the executor asks, so the first case-trials start at once.
            for handle in handles:
                for case in handle.cases.values():
                    clock = clock_for(case, default_clock).isoformat()
                    for trial in range(1, trials + 1):
                        if (case.id, trial) in done[handle.run_id]:
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

        clocks = {clock_for(c, default_clock) for h in handles for c in h.cases.values()}
        progress = Progress(total=total)
        if opts.resume:
            for handle in handles:
                self.store.set_status(handle.run_id, "running")
        if self.on_start:
            self.on_start(handles, progress)

        executor = self.executor or LocalExecutor(concurrency)
        self._status: str = "finished"
        self._reason: str | None = None
        self._buffer: list[dict[str, Any]] = []
        self._progress = progress
        self._executor = executor
        self._judging = judge
        self._fatal: BaseException | None = None
        self._fixtures = fixtures
        self._first_run = handles[0].run_id
        freezer = _clock_freezer(agent.in_process, clocks, config.freeze_clock)
        # Several clocks: a process has one, so freeze it per call only when one runs at a time.
        runner.freeze_each = (
            config.freeze_clock and agent.in_process and len(clocks) > 1 and concurrency == 1
        )
        judging: set[asyncio.Task[None]] = set()
        gate = asyncio.Semaphore(concurrency)
        flusher = asyncio.create_task(self._flush_periodically())
        try:
            with freezer:
                async for outcome in executor.run(tasks(), runner):
                    record = grade_outcome(outcome, grade_options)
                    if judge is not None and needs_judge(record):
                        task = asyncio.create_task(
                            self._judge_then_finish(judge, gate, outcome, record)
                        )
                        judging.add(task)
                        task.add_done_callback(judging.discard)
                    else:
                        self._finish(outcome, record)
                    if self._fatal is not None:  # a rejected key: nothing more can be judged
                        break
                if judging:
                    await asyncio.gather(*judging)
                if self._fatal is not None:
                    raise self._fatal
        except BaseException:
            self._status = "stopped"
            for task in judging:
                task.cancel()
            raise
        finally:
            flusher.cancel()
            self._flush()
            for handle in handles:
                self.store.set_status(handle.run_id, self._status)
                if judge is not None:
                    self._record_judge(handle.run_id, judge, [h.config_name for h in handles])
            if fixtures is not None:
                fixtures.flush()
            await agent.aclose()
            if judge is not None:
                await judge.aclose()
            if runner.llm_cache is not None:
                runner.llm_cache.close()
            if work_dir.exists() and not opts.keep_workspaces:
                shutil.rmtree(work_dir, ignore_errors=True)
        return RunOutcome(
            suite, handles, self._status, self._reason, executed=progress.done, skipped=skipped
        )

    def _finish(self, outcome: TrialOutcome, record: TrialRecord) -> None:
        """Store a graded case-trial, count it, and stop dispatching past the budget."""
        self._buffer.append(store_row(outcome, record))
        if len(self._buffer) >= FLUSH_ROWS:
            self._flush()
        progress = self._progress
        progress.done += 1
        progress.passed += record.status is TrialStatus.PASS
        progress.errors += record.status is TrialStatus.ERROR
        progress.cost_usd += record.cost_usd
        if self.on_result:
            self.on_result(progress, record)
        max_cost = self.options.max_cost
        spent = progress.cost_usd + (self._judging.client.stats.cost_usd if self._judging else 0.0)
        if max_cost is not None and spent >= max_cost and self._status != "stopped":
            self._status = "stopped"
            self._reason = (
                f"cost ${spent:.4f} (agent and judge) reached --max-cost ${max_cost:g}; "
                f"finish it with --resume {self._first_run}"
            )
            self._executor.stop()

    async def _judge_then_finish(
        self, judge: Judge, gate: asyncio.Semaphore, outcome: TrialOutcome, record: TrialRecord
    ) -> None:
        try:
            async with gate:
                await judge_record(judge, outcome.task.case, outcome.result, record)
        except Exception as exc:  # kept for the driver, which stops the run with it
            if self._fatal is None:
                self._fatal = exc
            self._executor.stop()
            return
        self._finish(outcome, record)

    def _record_judge(self, run_id: str, judge: Judge, configs: list[str | None]) -> None:
        """Record the judge and its spend on a run, adding to what earlier sessions of the
        same run (``--resume``) spent; in a matrix the one judge serves every configuration."""
        stats = judge.client.stats.to_json()
        before = self.store.get_run(run_id).options.get("judge")
        if isinstance(before, dict):
            for key, value in stats.items():
                if isinstance(before.get(key), int | float):
                    stats[key] = before[key] + value
        entry: dict[str, Any] = {**judge.description, **stats}
        if len(configs) > 1:
            entry["shared_by_configs"] = configs
        self.store.update_options(run_id, {"judge": entry})

    def _resolve_agent(self, suite: Suite) -> None:
        """The agent and the suite's hooks, resolved before any run is recorded."""
        config = suite.config
        concurrency = self.options.concurrency or config.concurrency
        self._agent = resolve_agent(
            config.agent, self.options.agent, suite.root, threads=concurrency
        )
        self._hooks = (
            import_object(config.workspace_setup, suite.root) if config.workspace_setup else None,
            import_object(config.outcome_probe, suite.root) if config.outcome_probe else None,
        )

    def _judge(self, suite: Suite) -> Judge | None:
        from caseforge.grade.judge import make_judge

        return make_judge(
            suite.config.judge,
            suite.config.prices,
            None if self.options.no_cache else suite_paths(suite.root).cache,
            self.judge_client,
        )

    def _flush(self) -> None:
        # Recordings first: a stored result never lacks the fixtures it was made with.
        fixtures: FixtureStore | None = getattr(self, "_fixtures", None)
        if fixtures is not None:
            fixtures.flush()
        if self._buffer:
            rows, self._buffer = self._buffer, []
            self.store.write_results(rows)

    async def _flush_periodically(self) -> None:
        """Commit finished case-trials at least every FLUSH_EVERY_S, even when few arrive."""
        while True:
            await asyncio.sleep(FLUSH_EVERY_S)
            self._flush()

    def _new_plan(self) -> tuple[Suite, list[RunHandle], int]:
        opts = self.options
        if opts.suite_dir is None:
            raise CaseforgeError("no suite given")
        suite = load_suite(opts.suite_dir)
        config = suite.config
        cases = select_cases(suite, opts.split, opts.case_ids)
        names: list[str | None]
        if opts.configs:
            unknown = [n for n in opts.configs if n not in config.configs]
            if unknown:
                known = ", ".join(config.configs) or "none"
                raise CaseforgeError(
                    f"unknown config {', '.join(unknown)} (the suite has: {known})"
                )
            names = list(dict.fromkeys(opts.configs))
        else:
            names = [next(iter(config.configs))] if config.configs else [None]
        trials = opts.trials or config.trials
        if trials < 1:
            raise CaseforgeError("--trials must be at least 1")
        self._resolve_agent(suite)  # a broken agent spec fails before any run is recorded
        commit, dirty = dataset_state(suite.root)
        self._clock = (opts.clock or dt.datetime.now(dt.UTC).replace(microsecond=0)).isoformat()
        agent_desc = opts.agent or _agent_description(suite)
        group = new_run_id()
        handles = []
        for index, name in enumerate(names):
            run_id = group if index == 0 else f"{group}-{index + 1}"
            cfg = config.configs.get(name, {}) if name else {}
            self.store.create_run(
                id=run_id,
                suite=config.name,
                suite_path=str(suite.root.resolve()),
                group_id=group,
                dataset_commit=commit,
                dataset_dirty=dirty,
                agent=agent_desc,
                config_name=name,
                config=cfg,
                trials=trials,
                split=opts.split,
                caseforge_version=__version__,
                options={
                    "judge_mode": opts.judge,
                    "fixtures": (opts.fixtures.value if opts.fixtures else None),
                    "case_ids": opts.case_ids,
                    "max_cost": opts.max_cost,
                    "clock": self._clock,  # for cases without their own; kept for --resume
                },
            )
            self.store.save_cases(
                run_id, [(c.id, c.model_dump_json(exclude_unset=True)) for c in cases]
            )
            handles.append(RunHandle(run_id, name, cfg, {c.id: c for c in cases}))
        return suite, handles, trials

    def _resume_plan(self) -> tuple[Suite, list[RunHandle], int]:
        opts = self.options
        assert opts.resume is not None
        if opts.resume == "latest":
            if opts.suite_dir is None:
                raise CaseforgeError("--resume latest needs the suite")
            name = load_suite(opts.suite_dir).config.name
            group = self.store.latest_unfinished(name)
            if not group:
                raise CaseforgeError(f"no unfinished run of suite {name!r} to resume")
        else:
            first = self.store.get_run(opts.resume)
            group = self.store.group(first.group_id)
        suite_dir = opts.suite_dir or Path(group[0].suite_path)
        self._clock = str(group[0].options.get("clock") or dt.datetime.now(dt.UTC).isoformat())
        suite = load_suite(suite_dir)
        self._resolve_agent(suite)
        handles = []
        for info in group:
            snapshot = self.store.cases(info.id)
            model = suite.case_model
            cases = {cid: model.model_validate(data) for cid, data in snapshot.items()}
            handles.append(RunHandle(info.id, info.config_name, info.config, cases))
        return suite, handles, group[0].trials


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
) -> contextlib.AbstractContextManager[Any]:
    """Freeze the process clock for in-process agents when one clock serves the whole run.

    A process has one clock: with several clocks and concurrent case-trials, freezing would
    hand one case another's time, so the agent gets ``ctx.now()`` only (or, at concurrency
    1, the clock is frozen around each call instead).
    """
    if not (enabled and in_process and len(clocks) == 1):
        return contextlib.nullcontext()
    import time_machine

    return time_machine.travel(next(iter(clocks)), tick=False)
