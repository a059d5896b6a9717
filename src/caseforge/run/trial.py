"""Seeds and clocks per case-trial, and running one case-trial against an agent."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import os
import random
import shutil
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from caseforge.agent.context import AgentContext
from caseforge.agent.fixtures import FixtureMissingError, FixtureStore
from caseforge.agent.protocol import AgentProtocolError, AgentRequestDict, AgentResult
from caseforge.agent.threads import DaemonThreadPool, in_thread
from caseforge.agent.transports import Agent, AgentError, HttpAgent, is_transient
from caseforge.case.model import Case
from caseforge.checks import BaseCheck, Reads, ToolCallsCheck
from caseforge.checks.spans import SpansCheck
from caseforge.errors import CaseforgeError, SuiteExit, suite_exit
from caseforge.grade.trial import RESERVED_FIELDS
from caseforge.jsontypes import JSONObject
from caseforge.llm.budget import SpendMeter
from caseforge.llm.cache import LLMCache
from caseforge.llm.limiter import Limiter
from caseforge.llm.prices import PriceTable
from caseforge.logs import BoundedLog
from caseforge.results import PROBE_FAILED
from caseforge.run.capture import trial_log
from caseforge.run.conversation import Users, converse
from caseforge.run.executor import TrialOutcome, TrialTask
from caseforge.tracing import own
from caseforge.tracing.collect import AgentSpans
from caseforge.tracing.context import (
    TrialSpans,
    current_span_context,
    new_span_id,
    parse_traceparent,
    traceparent,
)

if TYPE_CHECKING:
    import time_machine

# A suite's hooks (caseforge.yaml's workspace_setup and outcome_probe): what the first
# returns is ignored; the second returns what it read of the outcome (field -> value).
WorkspaceSetup = Callable[[Path, Case], object]
OutcomeProbe = Callable[[Path, AgentResult, Case], Mapping[str, object] | None]


def seed_for(case: Case, trial: int) -> int:
    """A deterministic 31-bit seed per (case, trial), from the case's seed or its id."""
    base = str(case.seed) if case.seed is not None else case.id
    digest = hashlib.sha256(f"{base}/{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def clock_for(case: Case, default: dt.datetime) -> dt.datetime:
    """The case's frozen clock, or the run's (made timezone-aware as UTC if naive)."""
    clock = case.clock or default
    return clock if clock.tzinfo else clock.replace(tzinfo=dt.UTC)


@dataclass
class RetryPolicy:
    """Transient failures are retried with exponential backoff and jitter."""

    attempts: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        base = min(self.max_backoff_s, self.backoff_s * 2.0 ** (attempt - 1))
        return float(base * (0.5 + rng.random() / 2))


@dataclass
class TrialRunner:
    """Runs one case-trial: workspace, agent call with timeout and retries, outcome probe."""

    agent: Agent
    timeout_s: float
    retry: RetryPolicy
    work_dir: Path
    fixtures: FixtureStore | None = None
    workspace_setup: WorkspaceSetup | None = None
    outcome_probe: OutcomeProbe | None = None
    keep_workspaces: bool = False
    freeze_each: bool = False  # freeze the process clock around each call (one at a time)
    llm_cache: LLMCache | None = None
    reuse_trials: bool = False
    llm_prices: PriceTable | None = None
    budget: SpendMeter | None = None  # --max-cost, handed to ctx.llm() clients
    limiter: Limiter | None = None  # rate_limit:, shared by every ctx.llm() client
    context: JSONObject | None = None  # SUITE/context/: in every request and ctx
    users: Users | None = None  # who plays a multi-turn case's simulated user
    hooks: DaemonThreadPool = field(default_factory=lambda: DaemonThreadPool(8, "hook"))
    spans: AgentSpans | None = None  # how the agent's OpenTelemetry spans are kept
    capture_content: bool = False  # otel.capture_content: content on caseforge's own spans

    async def __call__(self, task: TrialTask) -> TrialOutcome:
        case = task.case
        request: AgentRequestDict = {
            "case_id": case.id,
            "trial": task.trial,
            "seed": task.seed,
            "case_seed": case.seed,
            "clock": task.clock,
            "config": task.config,
            "input": case.input,
        }
        if self.context is not None:
            request["context"] = self.context
        # A str until needed: most agents never touch their workspace.
        folder = f"{self.work_dir}/{task.config_name or '_'}/{case.id}/{task.trial}"
        outcome = TrialOutcome(task=task)
        log = BoundedLog()
        parent = parse_traceparent(task.traceparent) if task.traceparent else None
        trace = TrialTrace(parent[0] if parent else "", task.traceparent if parent else None)
        if self.spans is not None:
            trace.spans = self.spans.begin(trace.trace_id or None)
            if trace.spans is not None:
                trace.trace_id = trace.spans.trace_id
        allowed = self.capture_content and not task.case.sensitive
        with trial_log(log), own.content_allowed(allowed):  # prints land in `log` (capture.py)
            try:
                await self._run(task, request, folder, outcome, log, trace)
            finally:
                if log:
                    outcome.log, outcome.log_dropped = log.text(), log.dropped
                if trace.spans is not None and self.spans is not None:
                    spans, dropped = self.spans.end(trace.spans)
                    outcome.spans, outcome.spans_dropped = spans or None, dropped
                    if not spans:
                        outcome.spans_missing = self.spans.why_none(trace.unsettled)
        return outcome

    async def _run(
        self,
        task: TrialTask,
        request: AgentRequestDict,
        folder: str,
        outcome: TrialOutcome,
        log: BoundedLog,
        trace: TrialTrace,
    ) -> None:
        case = task.case
        started = time.perf_counter()
        ctx: AgentContext | None = None
        try:
            for attempt in range(1, self.retry.attempts + 1):
                outcome.attempts = attempt
                if (attempt > 1 or task.resent) and os.path.exists(folder):
                    shutil.rmtree(folder, ignore_errors=True)  # a retry, or a lost worker's
                if attempt > 1 and trace.spans is not None:
                    trace.spans.clear()  # the failed attempt's spans are not this answer's
                ctx = self._context(task, folder, log)
                try:
                    if self.workspace_setup is not None:
                        # Off the event loop: a hook that copies a database blocks.
                        await in_thread(self.hooks, self.workspace_setup, ctx.workspace, case)
                        request["workspace"] = str(ctx.workspace)
                except Exception as exc:  # the suite's hook failed: an error for this trial
                    outcome.error = f"workspace_setup failed: {_describe(exc)}"
                    break
                try:
                    async with asyncio.timeout(self.timeout_s):
                        if self.freeze_each:
                            with _frozen(ctx.clock):
                                outcome.result = await self._answer(request, ctx, case, trace)
                        else:
                            outcome.result = await self._answer(request, ctx, case, trace)
                    break
                except TimeoutError:
                    outcome.error = f"timed out after {self.timeout_s:g} s"
                    break
                except FixtureMissingError as exc:
                    outcome.error = str(exc)
                    break
                except (SystemExit, KeyboardInterrupt) as exc:  # an async agent's own exit
                    failure = suite_exit(exc)
                    if failure is None:  # a library caller's real Ctrl-C: stop the run
                        raise
                    outcome.error = f"the agent {failure}"
                    break
                except SuiteExit as exc:  # a sync agent's own sys.exit()
                    outcome.error = f"the agent {exc}"
                    break
                except Exception as exc:  # the agent's own failure is data, not a crash
                    outcome.error = _describe(exc, with_traceback=True)
                    outcome.stderr_tail = getattr(exc, "stderr_tail", "")
                    if not is_transient(exc) or attempt == self.retry.attempts:
                        break
                    _settle(outcome, ctx)
                    await ctx.aclose()
                    rng = random.Random(task.seed * 31 + attempt)
                    await asyncio.sleep(self.retry.delay(attempt, rng))
                    outcome.error = None
            outcome.latency_s = time.perf_counter() - started - trace.waited_s
            if ctx is not None and ctx.fixtures is not None and ctx.fixtures.missing:
                outcome.result = None
                outcome.error = ctx.fixtures.missing[0]
            if outcome.result is not None and not outcome.result.output_given:
                reads = output_checks(case)
                if reads:  # left out by an agent whose case grades an output field
                    outcome.result = None
                    outcome.error = (
                        f"the agent's response has no `output`, and expect.{reads[0]} reads it"
                    )
            if outcome.result is not None and self.outcome_probe is not None:
                try:
                    found = await in_thread(
                        self.hooks, self.outcome_probe, Path(folder), outcome.result, case
                    )
                    outcome.outcomes = dict(found or {})
                except Exception as exc:
                    outcome.outcome_error = f"{PROBE_FAILED}: {_describe(exc)}"
        finally:
            if ctx is not None:
                _settle(outcome, ctx)
                await ctx.aclose()
            if ctx is not None and ctx.workspace_used and not self.keep_workspaces:
                shutil.rmtree(folder, ignore_errors=True)

    async def _answer(
        self, request: AgentRequestDict, ctx: AgentContext, case: Case, trace: TrialTrace
    ) -> AgentResult:
        """One agent call, or a whole conversation for a multi-turn case."""
        if case.conversation is None:
            return await self._call(request, ctx, case, trace)
        if ctx.fixtures is not None:
            ctx.fixtures.per_turn = True
        users = self.users
        if users is None:
            raise CaseforgeError(f"case {case.id}: a multi-turn case needs the runner's users")

        async def turn(turn_request: AgentRequestDict) -> AgentResult:
            if ctx.fixtures is not None:
                ctx.fixtures.turn = turn_request.get("turn")
            return await self._call(turn_request, ctx, case, trace, turn_request.get("turn"))

        return await converse(case.conversation, request, turn, users)

    async def _call(
        self,
        request: AgentRequestDict,
        ctx: AgentContext,
        case: Case,
        trace: TrialTrace,
        turn: int | None = None,
    ) -> AgentResult:
        """One agent call in the case-trial's trace: its span (caseforge's own, when it
        exports them), its traceparent for the agent, its spans awaited when an HTTP agent
        exports them after answering and a check of the case reads them."""
        agent = self.agent
        if not trace.trace_id:  # nothing traced: no ids to make
            return await agent.call(request, ctx)
        call = own.start(
            f"invoke_agent {agent.description}",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent.description,
                "caseforge.case.id": case.id,
                "caseforge.turn": turn,
            },
            parent=trace.parent,
            kind="client",
        )
        span_id = call.span_id if call is not None else new_span_id()
        if trace.spans is not None:
            trace.spans.calls[span_id] = turn
        ctx.traceparent = traceparent(trace.trace_id, span_id)
        if self.spans is not None:
            ctx.otlp_traces_url = self.spans.traces_url
        try:
            if call is not None:
                call.set_content(
                    "gen_ai.input.messages", request.get("messages") or request["input"]
                )
            if agent.in_process:
                with current_span_context(trace.trace_id, span_id):
                    result = await agent.call(request, ctx)
            else:
                result = await agent.call(request, ctx)
            if call is not None:
                call.set(
                    {
                        "gen_ai.usage.input_tokens": result.usage.input_tokens,
                        "gen_ai.usage.output_tokens": result.usage.output_tokens,
                        "caseforge.tool_calls": len(result.tool_calls),
                    }
                )
                call.set_content("gen_ai.output.messages", result.reply)
        except BaseException as exc:
            if call is not None:
                call.error(f"{type(exc).__name__}: {exc}")
            raise
        finally:
            if call is not None:
                call.end()
        spans, wait = trace.spans, self.spans.wait_s if self.spans else 0.0
        if spans is not None and isinstance(agent, HttpAgent) and wait > 0 and _reads_spans(case):
            waiting = time.perf_counter()
            if not await spans.settle(span_id, wait):
                trace.unsettled = True
            trace.waited_s += time.perf_counter() - waiting
        return result

    def _context(self, task: TrialTask, folder: str, log: BoundedLog) -> AgentContext:
        return AgentContext(
            log=log,
            case_id=task.case.id,
            trial=task.trial,
            seed=task.seed,
            clock=_parse_clock(task.clock),
            config=task.config,
            workspace_path=folder,
            case_seed=task.case.seed,
            fixtures=self.fixtures.session(task.case.id) if self.fixtures else None,
            llm_cache=self.llm_cache,
            reuse_trials=self.reuse_trials,
            llm_prices=self.llm_prices,
            budget=self.budget,
            limiter=self.limiter,
            context=self.context,
        )

    async def aclose(self) -> None:
        """Close what the runner opened (the agent is the session's to close); a hook still
        running is abandoned with its thread."""
        self.hooks.shutdown()
        if self.spans is not None:
            self.spans.close()
        if self.users is not None:
            self.users.close()
        if self.llm_cache is not None:
            self.llm_cache.close()


@dataclass
class TrialTrace:
    """One case-trial's trace: its id, the span caseforge's own trace gives it (None when
    caseforge exports none) and the agent's spans as they arrive (None: not kept)."""

    trace_id: str
    parent: str | None = None
    spans: TrialSpans | None = None
    waited_s: float = 0.0  # spent waiting for an HTTP agent's spans: not the agent's latency
    unsettled: bool = False  # an HTTP agent's spans awaited, and not come


def _reads_spans(case: Case) -> bool:
    """Whether a check of the case reads the agent's spans: a ``spans`` check, or a check on
    the tool calls (which the spans show when the agent reports none)."""
    return any(
        isinstance(check, SpansCheck | ToolCallsCheck) or field == "tool_calls"
        for _, field, check in case.checks()
    )


def output_checks(case: Case) -> list[str]:
    """The checks of ``case`` that read a field of the agent's ``output``."""
    return [
        name
        for name, field, check in case.checks()
        if isinstance(check, BaseCheck)
        and check.reads is Reads.FIELD
        and field not in RESERVED_FIELDS
    ]


def _settle(outcome: TrialOutcome, ctx: AgentContext) -> None:
    """Account for the model calls made through ``ctx.llm()``: their cost (for --max-cost),
    whether the budget refused one (the case-trial was cut short, and is not stored), and,
    when the agent reported no usage of its own, that usage."""
    input_tokens, output_tokens, cost = ctx.model_usage
    outcome.model_usd += cost
    outcome.over_budget = outcome.over_budget or ctx.budget_refused
    if ctx.fixtures is not None:
        outcome.fixtures = ctx.fixtures.use()
        outcome.recordings = ctx.fixtures.new_recordings or None
    result = outcome.result
    if result is not None and cost and not result.usage.cost_usd:
        result.usage.input_tokens = result.usage.input_tokens or input_tokens
        result.usage.output_tokens = result.usage.output_tokens or output_tokens
        result.usage.cost_usd = cost


def _frozen(clock: dt.datetime) -> time_machine.travel:
    import time_machine

    return time_machine.travel(clock, tick=False)


@lru_cache(maxsize=256)
def _parse_clock(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _describe(exc: BaseException, with_traceback: bool = False) -> str:
    """One line for the reports (the first), then, for an in-process agent's own exception,
    its traceback, which ``caseforge show`` prints whole."""
    if isinstance(exc, AgentError | AgentProtocolError):  # caseforge's own words suffice
        return str(exc)
    if isinstance(exc, SuiteExit):  # sys.exit() in the suite's code: say so, no traceback
        return str(exc)
    text = str(exc)
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if not with_traceback or exc.__traceback__ is None:
        return line
    trace = "".join(traceback.format_exception(exc)).rstrip()
    return f"{line}\n{trace[-TRACEBACK_TAIL:]}"


TRACEBACK_TAIL = 4000  # characters kept of a traceback: its end, where the error is
