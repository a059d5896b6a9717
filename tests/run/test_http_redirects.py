"""An HTTP agent that answers with a redirect: the status and where it points are named
(caseforge does not follow a redirect), not reported as "invalid JSON"."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import httpx
import pytest

from caseforge.agent.context import AgentContext
from caseforge.agent.transports import AgentError, HttpAgent, TransientAgentError


def call(url: str, answer: httpx.Response) -> AgentError:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: answer))
    ctx = AgentContext("c", 1, 1, dt.datetime.now(dt.UTC), {}, Path("/tmp/x"))
    with pytest.raises(AgentError) as info:
        asyncio.run(HttpAgent(url, client).call({"input": {}}, ctx))
    assert not isinstance(info.value, TransientAgentError)  # retrying would loop again
    return info.value


def test_a_redirect_loop_is_named_as_one() -> None:
    error = call("http://agent.test/run", httpx.Response(302, headers={"Location": "/run"}))
    assert str(error).startswith(
        "HTTP 302 from http://agent.test/run: a redirect to http://agent.test/run (itself: a "
        "redirect loop), which caseforge does not follow"
    )
    assert "invalid JSON" not in str(error)


def test_a_redirect_elsewhere_names_the_location() -> None:
    moved = httpx.Response(308, headers={"Location": "https://agent.test/v2/run"})
    error = call("http://agent.test/run", moved)
    assert "HTTP 308 from http://agent.test/run: a redirect to https://agent.test/v2/run," in str(
        error
    )
    assert "point the agent's URL at the endpoint itself" in str(error)


def test_a_redirect_without_location() -> None:
    error = call("http://agent.test/run", httpx.Response(303))
    assert "HTTP 303 from http://agent.test/run: a redirect with no Location" in str(error)
