"""What builds a :class:`~caseforge.run.trial.TrialRunner`: in this process, or once more on
every worker of a cluster (``--executor ray``), from the same picklable description."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from caseforge.agent.fixtures import FixtureMode, FixtureStore
from caseforge.agent.threads import DaemonThreadPool
from caseforge.agent.transports import CommandAgent, configured_object, resolve_agent
from caseforge.case.context import load_context
from caseforge.case.suite import SuiteConfig
from caseforge.errors import EnvError
from caseforge.llm.cache import LLMCache
from caseforge.llm.limiter import Limiter, RateLimiter
from caseforge.llm.prices import PriceTable
from caseforge.paths import suite_paths
from caseforge.run.conversation import Users, model_user
from caseforge.run.trial import RetryPolicy, TrialRunner
from caseforge.tracing import own
from caseforge.tracing.collect import AgentSpans
from caseforge.tracing.receiver import SpanReceiver

if TYPE_CHECKING:
    from caseforge.agent.transports import Agent
    from caseforge.llm.budget import SpendMeter
    from caseforge.llm.client import ModelClient


@dataclass
class TrialSetup:
    """The suite, its agent and how one case-trial runs: timeout, retries, fixtures, cache."""

    suite_dir: Path
    config: SuiteConfig
    agent: str | None  # --agent, over the suite's agent:
    threads: int  # a sync callable agent's thread pool
    timeout_s: float
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    work_dir: Path = Path(".")
    fixture_mode: FixtureMode = FixtureMode.OFF
    keep_workspaces: bool = False
    no_cache: bool = False
    reuse_trials: bool = False
    freeze_each: bool = False  # freeze the process clock around each call
    otlp_listen: tuple[str, int] | None = None  # --otlp-listen: the receiver's address

    def resolve_agent(self) -> Agent:
        return resolve_agent(self.config.agent, self.agent, self.suite_dir, threads=self.threads)

    def fixtures(self) -> FixtureStore | None:
        if self.fixture_mode is FixtureMode.OFF:
            return None
        return FixtureStore(self.suite_dir, self.fixture_mode)

    def limiter(self) -> Limiter | None:
        """One limiter for every ``ctx.llm()`` client of the run (``rate_limit:``)."""
        limit = self.config.rate_limit
        if limit is None:
            return None
        return RateLimiter(limit.rpm, limit.tpm, window_s=limit.window_s)

    def users(self) -> tuple[Users, ModelClient | None]:
        """Who plays simulated users: their callables, and the suite's ``simulator:`` model
        (cached and priced; its budget is set by whoever runs the case-trials)."""
        if self.config.simulator is None:
            return Users(self.suite_dir), None
        from caseforge.llm.client import ModelClient

        client = ModelClient.from_settings(
            self.config.simulator,
            cache_dir=None if self.no_cache else suite_paths(self.suite_dir).cache,
            prices=self.config.prices,
        )
        return Users(self.suite_dir, model_user(client) if client is not None else None), client

    def agent_spans(self, agent: Agent) -> AgentSpans:
        """How the run keeps the agent's spans (a command or HTTP agent's receiver is
        started here)."""
        return agent_spans(agent, self.otlp_listen, self.config.otel.span_wait_s)

    def trial_runner(
        self,
        *,
        agent: Agent | None = None,
        users: Users | None = None,
        fixtures: FixtureStore | None = None,
        budget: SpendMeter | None = None,
        limiter: Limiter | None = None,
        spans: AgentSpans | None = None,
    ) -> TrialRunner:
        """The runner of one case-trial; what is not given is built from this setup."""
        config = self.config
        suite_dir = self.suite_dir
        paths = suite_paths(suite_dir)
        agent = agent or self.resolve_agent()
        return TrialRunner(
            agent=agent,
            timeout_s=self.timeout_s,
            retry=self.retry,
            work_dir=self.work_dir,
            fixtures=fixtures,
            workspace_setup=configured_object(config.workspace_setup, suite_dir, "workspace_setup")
            if config.workspace_setup
            else None,
            outcome_probe=configured_object(config.outcome_probe, suite_dir, "outcome_probe")
            if config.outcome_probe
            else None,
            keep_workspaces=self.keep_workspaces,
            llm_cache=None if self.no_cache else LLMCache(paths.llm_cache),
            reuse_trials=self.reuse_trials,
            llm_prices=PriceTable(config.prices),
            budget=budget,
            limiter=limiter,
            context=load_context(suite_dir),
            users=users or self.users()[0],
            freeze_each=self.freeze_each,
            hooks=DaemonThreadPool(self.threads, "hook"),  # as many as run at once
            spans=spans or self.agent_spans(agent),
            capture_content=config.otel.capture_content,
        )


def agent_spans(agent: Agent, listen: tuple[str, int] | None, wait_s: float) -> AgentSpans:
    """How a run keeps ``agent``'s OpenTelemetry spans: the span processor for an in-process
    agent; for a command or HTTP agent, an OTLP/HTTP receiver on ``listen`` (loopback, a
    free port, by default), started here (``EnvError`` when that address cannot be had).
    An in-process agent given ``--otlp-listen`` gets the receiver too: its code may export
    over OTLP to a fixed address (a span that comes both ways is kept once)."""
    if agent.in_process and listen is None:
        return AgentSpans(True, wait_s=wait_s)
    host, port = listen or ("127.0.0.1", 0)
    try:
        receiver = SpanReceiver(host, port).start()
    except OSError as exc:
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise EnvError(
            f"--otlp-listen {shown}: cannot listen for the agent's spans there: "
            f"{exc.strerror or exc}"
        ) from None
    own.receiving(receiver.traces_url)
    return AgentSpans(
        agent.in_process, receiver, wait_s=wait_s, command=isinstance(agent, CommandAgent)
    )
