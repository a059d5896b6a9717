"""``ctx``: what an in-process agent gets beside its input for one case-trial."""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from caseforge.run.fixtures import FixtureSession


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
    config: dict[str, Any]
    workspace_path: Path
    case_seed: int | None = None
    fixtures: FixtureSession | None = None
    _http: httpx.AsyncClient | None = field(default=None, repr=False)
    workspace_used: bool = field(default=False, repr=False)

    @property
    def workspace(self) -> Path:
        """This trial's own folder, created on first use."""
        if not self.workspace_used:
            self.workspace_path.mkdir(parents=True, exist_ok=True)
            self.workspace_used = True
        return self.workspace_path

    def now(self) -> dt.datetime:
        """The frozen clock of this case (timezone-aware)."""
        return self.clock

    def today(self) -> dt.date:
        """The frozen clock's date."""
        return self.clock.date()

    async def external(self, service: str, request: Any, call: Callable[[], Any]) -> Any:
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
            from caseforge.run.fixtures import FixtureTransport

            transport: httpx.AsyncBaseTransport = (
                FixtureTransport(self.fixtures) if self.fixtures else httpx.AsyncHTTPTransport()
            )
            self._http = httpx.AsyncClient(transport=transport)
        return self._http

    async def aclose(self) -> None:
        """Close what the context opened (the HTTP client)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None
