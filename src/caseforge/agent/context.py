"""``ctx``: what an in-process agent gets beside its input for one case-trial."""

from __future__ import annotations

import datetime as dt
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import httpx

if TYPE_CHECKING:
    from caseforge.jsontypes import JSONObject
    from caseforge.llm.budget import SpendMeter
    from caseforge.llm.cache import LLMCache
    from caseforge.llm.client import ModelClient, ModelOptions
    from caseforge.llm.limiter import Limiter
    from caseforge.llm.prices import PriceTable

from caseforge.agent.fixtures import FixtureSession
from caseforge.logs import BoundedLog


@dataclass
class AgentContext:
    """The case id, trial, seeds, frozen clock, configuration, workspace and fixtures.

    ``workspace`` is a fresh folder per trial (the suite's workspace hook fills it, e.g.
    with a copy of the business database). External services are reached through
    :meth:`external` or :attr:`http`, so their responses are recorded into
    ``SUITE/fixtures/`` and replayed later.
    """

    case_id: str
    trial: int
    seed: int
    clock: dt.datetime
    config: dict[str, Any]  # the configuration's values, the agent's to read as it likes
    workspace_path: Path | str  # a str is turned into a Path only when the agent asks
    case_seed: int | None = None
    fixtures: FixtureSession | None = None
    llm_cache: LLMCache | None = field(default=None, repr=False)
    reuse_trials: bool = False
    llm_prices: PriceTable | None = field(default=None, repr=False)
    budget: SpendMeter | None = field(default=None, repr=False)  # the run's --max-cost
    limiter: Limiter | None = field(default=None, repr=False)  # the run's rate_limit:
    context: JSONObject | None = field(default=None, repr=False)  # SUITE/context/ files
    # A multi-turn case: the conversation so far ({role, content}) and this agent turn's
    # number; None for a single-turn case.
    messages: list[dict[str, str]] | None = None
    turn: int | None = None
    # What an agent (or an adapter) keeps from one turn of a conversation to the next.
    conversation_state: dict[str, Any] = field(default_factory=dict, repr=False)
    # The case-trial's log: a command agent's stderr goes here (an in-process agent's
    # prints reach it through sys.stdout: run/capture.py).
    log: BoundedLog | None = field(default=None, repr=False)
    # The agent call's W3C traceparent, when caseforge keeps the agent's spans (or exports
    # its own): a command gets it as TRACEPARENT, an HTTP agent as the traceparent header.
    traceparent: str | None = None
    # A command agent's OTLP/HTTP traces endpoint (the run's receiver), unless the user set
    # OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
    otlp_traces_url: str | None = field(default=None, repr=False)
    _http: httpx.AsyncClient | None = field(default=None, repr=False)
    workspace_used: bool = field(default=False, repr=False)
    _clients: list[ModelClient] = field(default_factory=list, repr=False)

    @property
    def workspace(self) -> Path:
        """This trial's own folder, created on first use."""
        path = Path(self.workspace_path)
        if not self.workspace_used:
            path.mkdir(parents=True, exist_ok=True)
            self.workspace_used = True
        return path

    def now(self) -> dt.datetime:
        """The frozen clock of this case (timezone-aware)."""
        return self.clock

    def today(self) -> dt.date:
        """The frozen clock's date."""
        return self.clock.date()

    async def external(self, service: str, request: object, call: Callable[[], object]) -> Any:
        """Reach an external service through the fixtures.

        ``request`` (JSON-able) identifies the call; ``call`` performs it for real. When
        recording, the response is stored verbatim; when replaying, the stored response is
        returned and ``call`` is never made; a request with no recording is an error.
        """
        if self.fixtures is None:
            result = call()
            return await result if inspect.isawaitable(result) else result
        return await self.fixtures.external(service, request, call)

    @property
    def http(self) -> httpx.AsyncClient:
        """An ``httpx.AsyncClient`` whose traffic goes through the fixtures."""
        if self._http is None:
            from caseforge.agent.fixtures import FixtureTransport

            transport: httpx.AsyncBaseTransport = (
                FixtureTransport(self.fixtures) if self.fixtures else httpx.AsyncHTTPTransport()
            )
            self._http = httpx.AsyncClient(transport=transport)
        return self._http

    def llm(
        self,
        model: str | None = None,
        *,
        prices: PriceTable | None = None,
        limiter: Limiter | None = None,
        **options: Unpack[ModelOptions],
    ) -> ModelClient:
        """A model client for this case-trial (``OPENAI_BASE_URL``/``OPENAI_API_KEY``; model
        from ``model``, ``CASEFORGE_MODEL`` or the configuration's ``model``).

        Its HTTP goes through the fixtures (recorded per case, replayed offline), its calls
        use the run's disk cache, and the cache key carries this trial and seed, so trials
        stay independent samples unless the run was started with ``--reuse-trials``.
        """
        from caseforge.llm.client import ModelClient
        from caseforge.llm.prices import PriceTable

        env = os.environ
        name = model or env.get("CASEFORGE_MODEL") or self.config.get("model")
        if not name:
            raise ValueError("no model: pass ctx.llm(model=...), set CASEFORGE_MODEL or `model`")
        client = ModelClient(
            model=str(name),
            api_key=env.get("OPENAI_API_KEY"),
            base_url=env.get("OPENAI_BASE_URL"),
            http_client=self.http,
            # Recording must reach the endpoint: a cached answer would leave no fixture.
            cache=None if self._recording() else self.llm_cache,
            reuse_trials=self.reuse_trials,
            default_scope={"case": self.case_id, "trial": self.trial, "seed": self.seed},
            prices=prices or self.llm_prices or PriceTable(),
            budget=self.budget,
            limiter=limiter or self.limiter,
            **options,
        )
        self._clients.append(client)
        return client

    def _recording(self) -> bool:
        from caseforge.agent.fixtures import FixtureMode

        return self.fixtures is not None and self.fixtures.store.mode is FixtureMode.RECORD

    @property
    def model_usage(self) -> tuple[int, int, float]:
        """Input tokens, output tokens and cost of the model calls made through ``llm()``."""
        stats = [c.stats for c in self._clients]
        return (
            sum(s.input_tokens for s in stats),
            sum(s.output_tokens for s in stats),
            sum(s.cost_usd for s in stats),
        )

    @property
    def budget_refused(self) -> bool:
        """Whether --max-cost refused one of this case-trial's model calls."""
        return any(c.budget_refused for c in self._clients)

    async def aclose(self) -> None:
        """Close what the context opened (model clients, the HTTP client)."""
        self._clients.clear()  # they share self.http, closed below
        if self._http is not None:
            await self._http.aclose()
            self._http = None
