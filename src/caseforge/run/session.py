"""One invocation's state while it drives: tasks go to the executor, outcomes come back,
are graded (the judge on the side), counted, and written to the store in batches.

The same session serves a fresh run, a resumed one and a rescore: they differ only in their
plan and their executor (a rescore's replays stored outcomes instead of calling the agent).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import shutil
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from caseforge.agent.fixtures import FixtureStore
from caseforge.errors import EnvError
from caseforge.grade.judge import judge_record
from caseforge.grade.trial import GradeOptions
from caseforge.llm.budget import CostBudget
from caseforge.results import ResultRow, TrialRecord, TrialStatus, needs_judge
from caseforge.run.cancel import Cancellation
from caseforge.run.capture import driving, routed
from caseforge.run.executor import Executor, TrialOutcome, TrialTask
from caseforge.run.plan import Progress, RunHandle, Shard
from caseforge.run.record import grade_outcome, store_row
from caseforge.store.db import RunStore

if TYPE_CHECKING:
    from caseforge.agent.transports import Agent
    from caseforge.grade.judge import Judge
    from caseforge.jsontypes import JSONObject
    from caseforge.run.executor import TrialCall

FLUSH_EVERY_S = 0.5  # finished case-trials reach the store within a second
FLUSH_ROWS = 500


@dataclass
class RunSession:
    """Everything one invocation opens, uses while it drives, and closes."""

    store: RunStore
    handles: list[RunHandle]
    tasks: Iterator[TrialTask]
    executor: Executor
    progress: Progress
    grade_options: GradeOptions
    concurrency: int
    trial_runner: TrialCall | None = None  # none when the executor replays stored outcomes
    agent: Agent | None = None
    judge: Judge | None = None
    fixtures: FixtureStore | None = None
    work_dir: Path | None = None
    keep_workspaces: bool = False
    clock_freezer: contextlib.AbstractContextManager[object] = field(
        default_factory=contextlib.nullcontext
    )
    budget: CostBudget | None = None  # --max-cost
    shard: Shard | None = None  # --shard I/N: the ledger says when the whole run is finished
    on_result: Callable[[Progress, TrialRecord], None] | None = None
    # Each graded case-trial with what the agent answered (its run, its reply), once stored
    # in the buffer: the pytest plugin reports a case's item from it.
    on_trial: Callable[[TrialOutcome, TrialRecord], None] | None = None
    cancellation: Cancellation | None = None  # set: no case-trial starts any more

    status: str = "finished"
    stop_reason: str | None = None
    _buffer: list[ResultRow] = field(default_factory=list)
    _fatal: BaseException | None = None
    _full: asyncio.Event = field(default_factory=asyncio.Event)  # FLUSH_ROWS are waiting
    _closing: bool = False
    closed: bool = False  # close() has run (or is running): it runs once
    marked: bool = False  # every run of the session has its status

    async def drive(self) -> None:
        """Run every task to a stored, graded record (or stop, resumably)."""
        execute: Callable[[TrialTask], Awaitable[TrialOutcome]] = self.trial_runner or _no_agent
        if self.budget is not None:
            execute = self._within_budget(execute, self.budget)
        if self.cancellation is not None:
            execute = self._unless_cancelled(execute, self.cancellation)
        judging: set[asyncio.Task[None]] = set()
        gate = asyncio.Semaphore(self.concurrency)
        writer = asyncio.create_task(self._write_periodically())
        # The suite, its cases and the plan live for the whole run: moved out of the
        # collector's sight, they are not rescanned by every full collection a run of tens
        # of thousands of case-trials triggers (a quarter of the harness time at 10,000
        # cases). They are handed back when the session ends.
        gc.freeze()
        try:
            # What the suite's code prints goes to its trial's log, or to stderr.
            with self.clock_freezer, routed(), driving():
                async for outcome in self.executor.run(self.tasks, execute):
                    if outcome.over_budget or outcome.not_started:
                        continue  # never started, or cut short: not stored, --resume runs it
                    record = grade_outcome(outcome, self.grade_options)
                    if self.judge is not None and needs_judge(record):
                        task = asyncio.create_task(self._judge_then_finish(gate, outcome, record))
                        judging.add(task)
                        task.add_done_callback(judging.discard)
                    else:
                        self._finish(outcome, record)
                    if self._fatal is not None:  # a rejected key, or the store refused a write
                        break
                if judging:
                    await asyncio.gather(*judging)
                if self._fatal is not None:
                    raise self._fatal
            if self.budget is not None and self.budget.exhausted:
                self._stopped_by_budget(self.budget)
        except BaseException:
            self.status = "stopped"
            for task in judging:
                task.cancel()
            raise
        finally:
            await self._stop_writer(writer)
            gc.unfreeze()

    async def close(self) -> None:
        """Store what is left, mark the runs, and close what the session opened.

        A store that refuses the last rows still gets the runs marked if it can, and the
        agents and clients are closed all the same; the refusal is raised at the end."""
        if self.closed:
            return
        self.closed = True
        refused: EnvError | None = None
        try:
            self.flush()
        except EnvError as exc:
            refused, self.status = exc, "stopped"
        except BaseException:  # stopped while storing the last rows: still marked
            self.status = "stopped"
            with contextlib.suppress(Exception):
                self._mark_all()
            raise
        with contextlib.suppress(Exception) if refused else contextlib.nullcontext():
            self._mark_all()
        if self.fixtures is not None:
            self.fixtures.flush()
        if self.agent is not None:
            await self.agent.aclose()
        if self.judge is not None:
            await self.judge.aclose()
        if self.trial_runner is not None:
            await self.trial_runner.aclose()
        if self.work_dir is not None and self.work_dir.exists() and not self.keep_workspaces:
            shutil.rmtree(self.work_dir, ignore_errors=True)
        if refused is not None:
            raise refused

    def _mark_all(self) -> None:
        configs = [h.config_name for h in self.handles]
        for handle in self.handles:
            self._mark(handle.run_id)
            if self.judge is not None:
                self._record_judge(handle.run_id, self.judge, configs)
        self.marked = True

    def _mark(self, run_id: str) -> None:
        """The run's status; a sharded run's comes from its shard ledger (finished only when
        every shard is). A whole-run resume of a sharded run that finishes finishes each
        of its shards."""
        if self.shard is not None:
            self.store.end_shard(run_id, self.shard.index, self.status)
            return
        if self.status == "finished":  # every case-trial is stored: the ledger says so too
            for row in self.store.shards(run_id):
                self.store.end_shard(run_id, int(row["shard"]), "finished")
        self.store.set_status(run_id, self.status)

    def _finish(self, outcome: TrialOutcome, record: TrialRecord) -> None:
        """Store a graded case-trial, count it, and stop dispatching past the budget."""
        self._buffer.append(store_row(outcome, record))
        if len(self._buffer) >= FLUSH_ROWS:
            self._full.set()
        progress = self.progress
        progress.done += 1
        progress.passed += record.status is TrialStatus.PASS
        progress.errors += record.status is TrialStatus.ERROR
        progress.cost_usd += record.cost_usd
        if self.on_result:
            self.on_result(progress, record)
        if self.on_trial:
            self.on_trial(outcome, record)

    def _within_budget(
        self, execute: Callable[[TrialTask], Awaitable[TrialOutcome]], budget: CostBudget
    ) -> Callable[[TrialTask], Awaitable[TrialOutcome]]:
        """Start a case-trial only when the budget's estimate says it fits (see CostBudget);
        once none fits, stop dispatching and hand the executor back unstarted outcomes."""

        async def run(task: TrialTask) -> TrialOutcome:
            if not await budget.start():
                self.executor.stop()
                return TrialOutcome(task=task, over_budget=True)
            outcome: TrialOutcome | None = None
            try:
                outcome = await execute(task)
                return outcome
            finally:
                cost = outcome.result.usage.cost_usd if outcome and outcome.result else 0.0
                model = outcome.model_usd if outcome else 0.0
                stored = outcome is not None and not outcome.over_budget
                await budget.finish(cost, model, stored=stored)
                if not stored:
                    self.executor.stop()

        return run

    def _unless_cancelled(
        self, execute: Callable[[TrialTask], Awaitable[TrialOutcome]], cancellation: Cancellation
    ) -> Callable[[TrialTask], Awaitable[TrialOutcome]]:
        """Start no case-trial once the run is cancelled: an in-process agent that blocks the
        event loop would otherwise be entered again by every worker the loop steps next."""

        async def run(task: TrialTask) -> TrialOutcome:
            if cancellation.cancelled:
                self.executor.stop()
                return TrialOutcome(task=task, not_started=True)
            return await execute(task)

        return run

    def _stopped_by_budget(self, budget: CostBudget) -> None:
        """Stopped by --max-cost, in the report's own numbers: what the stored case-trials
        and the judge cost once every case-trial in flight had ended."""
        self.status = "stopped"
        judge = self.judge.client.stats.cost_usd if self.judge else 0.0
        agent = self.progress.cost_usd
        cut = (
            f"; {budget.cut_short} case-trial(s) cut short by a refused model call "
            f"(${budget.cut_short_usd:.4f}, not stored)"
            if budget.cut_short
            else ""
        )
        self.stop_reason = (
            f"--max-cost ${budget.limit:g} reached: {self.progress.done} case-trials cost "
            f"${agent + judge:.4f} (agent ${agent:.4f}, judge ${judge:.4f}){cut}, and the next "
            f"was estimated at ${budget.largest_trial_usd:.4f}; "
            f"finish it with --resume {self.handles[0].run_id}"
        )

    async def _judge_then_finish(
        self, gate: asyncio.Semaphore, outcome: TrialOutcome, record: TrialRecord
    ) -> None:
        assert self.judge is not None
        try:
            async with gate:
                await judge_record(self.judge, outcome.task.case, outcome.result, record)
        except Exception as exc:  # kept for the driver, which stops the run with it
            if self._fatal is None:
                self._fatal = exc
            self.executor.stop()
            return
        self._finish(outcome, record)

    def _record_judge(self, run_id: str, judge: Judge, configs: list[str | None]) -> None:
        """Record the judge and its spend on a run, adding to what earlier sessions of the
        same run (``--resume``) spent; in a matrix the one judge serves every configuration."""
        stats = judge.client.stats.to_json()
        before = self.store.get_run(run_id).options.get("judge")
        if isinstance(before, dict):
            for key, value in stats.items():
                earlier = before.get(key)
                if isinstance(earlier, int | float) and isinstance(value, int | float):
                    stats[key] = earlier + value
        entry: JSONObject = {**judge.description, **stats}
        if len(configs) > 1:
            entry["shared_by_configs"] = list(configs)
        self.store.update_options(run_id, {"judge": entry})

    def flush(self) -> None:
        rows = self._take_rows()
        if rows:
            self.store.write_results(rows)

    def _take_rows(self) -> list[ResultRow]:
        """The rows waiting to be stored, after the fixtures recorded meanwhile: a stored
        result never lacks the recordings it was made with."""
        if self.fixtures is not None:
            self.fixtures.flush()
        rows, self._buffer = self._buffer, []
        return rows

    async def _write_periodically(self) -> None:
        """Commit finished case-trials every FLUSH_EVERY_S, or as soon as FLUSH_ROWS wait.

        The insert and its commit run on a thread (SQLite and psycopg release the GIL while
        they work): done on the event loop, each batch held up every agent call due to wake
        in the meantime, which made a 20 ms sleep take 1.6 ms longer on average instead of
        the loop's own 1 ms. A write that fails stops the run, like a crash did before.
        """
        while not self._closing:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FLUSH_EVERY_S):
                    await self._full.wait()
            self._full.clear()
            rows = self._take_rows()
            if not rows:
                continue
            try:
                if self.store.thread_safe:
                    await asyncio.to_thread(self.store.write_results, rows)
                else:
                    self.store.write_results(rows)
            except BaseException as exc:
                self._buffer[:0] = rows  # not stored: close() tries them once more
                if self._fatal is None and not isinstance(exc, asyncio.CancelledError):
                    self._fatal = exc
                self.executor.stop()
                raise

    async def _stop_writer(self, writer: asyncio.Task[None]) -> None:
        """Let a batch being written finish (close() then writes the rest)."""
        self._closing = True
        self._full.set()
        with contextlib.suppress(BaseException):
            await writer


async def _no_agent(task: TrialTask) -> TrialOutcome:
    raise RuntimeError(f"{task.case.id}/{task.trial}: this session replays; it calls no agent")
