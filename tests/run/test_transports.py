"""The command and HTTP transports, end to end through the runner, and --agent overrides."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from caseforge.agent.context import AgentContext
from caseforge.agent.transports import (
    AgentError,
    HttpAgent,
    TransientAgentError,
    is_transient,
    resolve_agent,
)
from caseforge.errors import CaseforgeError
from caseforge.run.runner import Runner, RunOptions
from caseforge.run.trial import RetryPolicy
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite
from tests.run.test_runner import trials_of

REPO = Path(__file__).resolve().parents[2]
COMMAND = f"cmd:{sys.executable} -m tests.run.toy_agent"


def run(store: RunStore, **options: Any) -> Any:
    options.setdefault("retry", RetryPolicy(attempts=3, backoff_s=0.001))
    return asyncio.run(Runner(RunOptions(**options), store).run())


@pytest.fixture(autouse=True)
def importable_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    # Command agents run `python -m tests.run.toy_agent` from the suite folder.
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_command_agent_success_crash_bad_json_and_hang(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    root = toy_suite(
        [
            {"id": "ok", "input": {}},
            {"id": "crash", "input": {"behaviour": "crash"}},
            {"id": "junk", "input": {"behaviour": "bad_output"}},
            {"id": "hang", "input": {"behaviour": "hang"}},
        ]
    )
    # The agents that answer get all the time a busy machine needs to start Python (3 s
    # was not enough under load); only the one that hangs is held to a short timeout.
    outcome = run(
        store, suite_dir=root, agent=COMMAND, timeout_s=300, case_ids=["ok", "crash", "junk"]
    )
    trials = trials_of(store, outcome)
    hung = run(store, suite_dir=root, agent=COMMAND, timeout_s=3, case_ids=["hang"])
    trials.update(trials_of(store, hung))
    assert trials[("ok", 1)]["status"] == "pass"
    crash = trials[("crash", 1)]
    assert crash["status"] == "error" and "exited with status 3" in crash["error"]
    assert "Traceback: something broke" in crash["error"]  # the stderr tail is kept
    assert "invalid JSON" in trials[("junk", 1)]["error"]
    assert "timed out after 3 s" in trials[("hang", 1)]["error"]


def test_command_agent_from_the_suite_config(toy_suite: MakeToySuite, store: RunStore) -> None:
    root = toy_suite(
        [{"id": "ok", "input": {}}],
        agent={"command": [sys.executable, "-m", "tests.run.toy_agent"]},
    )
    assert trials_of(store, run(store, suite_dir=root))[("ok", 1)]["status"] == "pass"


class _Handler(BaseHTTPRequestHandler):
    calls: ClassVar[list[dict[str, Any]]] = []
    fail_first: ClassVar[int] = 0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append(body)
        if len(type(self).calls) <= type(self).fail_first:
            self.send_response(503)
            self.end_headers()
            return
        answer = {"output": {"category": body["input"].get("want", "refund")}, "reply": "hi"}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.calls = []
    _Handler.fail_first = 0
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/run"
    httpd.shutdown()


def test_http_agent_posts_the_protocol_and_retries_5xx(
    toy_suite: MakeToySuite, store: RunStore, server: str
) -> None:
    _Handler.fail_first = 1  # one 503 first: retried, then passes
    root = toy_suite(
        [{"id": "ok", "input": {"want": "refund"}, "clock": "2026-10-12T10:00:00+08:00"}]
    )
    outcome = run(store, suite_dir=root, agent=server)
    assert trials_of(store, outcome)[("ok", 1)]["status"] == "pass"
    request = _Handler.calls[-1]
    assert set(request) >= {"case_id", "trial", "seed", "clock", "config", "input"}
    assert request["case_id"] == "ok" and request["trial"] == 1
    assert request["clock"] == "2026-10-12T10:00:00+08:00"
    assert len(_Handler.calls) == 2


def test_http_status_mapping() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        status = int(request.url.path.strip("/"))
        return httpx.Response(status, json={"output": {}} if status == 200 else {"e": 1})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    ctx = AgentContext("c", 1, 1, dt.datetime.now(dt.UTC), {}, Path("/tmp/x"))

    async def call(status: int) -> Any:
        return await HttpAgent(f"http://agent.test/{status}", client).call({"input": {}}, ctx)

    assert asyncio.run(call(200)).output == {}
    with pytest.raises(TransientAgentError):
        asyncio.run(call(429))
    with pytest.raises(TransientAgentError):
        asyncio.run(call(502))
    with pytest.raises(AgentError) as info:
        asyncio.run(call(400))
    assert not isinstance(info.value, TransientAgentError)


def test_is_transient() -> None:
    assert is_transient(ConnectionResetError())
    assert is_transient(httpx.ConnectError("refused"))
    assert not is_transient(ValueError("bug"))
    error = type("RateLimitError", (Exception,), {"status_code": 429})()
    assert is_transient(error)


def test_agent_specs_are_checked(tmp_path: Path) -> None:
    with pytest.raises(CaseforgeError, match="not module:callable"):
        resolve_agent(None, "no_colon_here", tmp_path)
    with pytest.raises(CaseforgeError, match="cannot import"):
        resolve_agent(None, "not_a_module_xyz:run", tmp_path)
    with pytest.raises(CaseforgeError, match="no `agent:` configured"):
        resolve_agent(None, None, tmp_path)
    assert resolve_agent(None, "http://127.0.0.1:1/run", tmp_path).description.startswith("http")
    assert resolve_agent(None, "cmd:python agent.py", tmp_path).description == "cmd:python agent.py"


def test_a_broken_agent_module_is_one_line_and_records_no_run(
    toy_suite: MakeToySuite, store: RunStore, tmp_path: Path
) -> None:
    root = toy_suite([{"id": "a", "input": {}}], agent={"callable": "broken_agent_xyz:run"})
    (root / "broken_agent_xyz.py").write_text("def run(input, ctx)\n    return 1\n")
    with pytest.raises(CaseforgeError) as info:
        run(store, suite_dir=root)
    message = str(info.value)
    assert "SyntaxError" in message and "broken_agent_xyz.py:1" in message and "\n" not in message
    assert store.list_runs() == []


def test_the_request_a_command_agent_gets_is_exactly_the_documented_agent_request(
    toy_suite: MakeToySuite, store: RunStore, tmp_path: Path
) -> None:
    import re

    from caseforge.agent.protocol import AgentRequest

    (tmp_path / "toy_ws_hook.py").write_text(
        "def prepare(ws, case):\n    (ws / 'seed').write_text('x')\n", encoding="utf-8"
    )
    page = Path(__file__).parents[2] / "docs" / "reference" / "agent-protocol.md"
    example = page.read_text(encoding="utf-8").split("## The request", 1)[1]
    documented = set(re.findall(r'"(\w+)":', example.split("```json", 1)[1].split("```", 1)[0]))
    fields = set(AgentRequest.model_fields)
    for hook in (None, "toy_ws_hook:prepare"):
        root = toy_suite(
            [{"id": "a", "input": {"behaviour": "echo"}, "seed": 7}],
            agent={"command": [sys.executable, "-m", "tests.run.toy_agent"]},
            **({"workspace_setup": hook} if hook else {}),
        )
        sys.path.insert(0, str(tmp_path))
        try:
            outcome = asyncio.run(Runner(RunOptions(suite_dir=root), store).run())
        finally:
            sys.path.remove(str(tmp_path))
        [row] = list(store.results(outcome.runs[0].run_id))
        request = json.loads(row["response_json"])["output"]["request"]
        AgentRequest.model_validate(request)  # no key the model does not document
        # No context/ folder, and not a conversation: those keys are not sent.
        expected = (fields if hook else fields - {"workspace"}) - {"context", "messages", "turn"}
        assert set(request) == expected
        assert request["case_seed"] == 7 and request["trial"] == 1
    unsent = {"workspace", "context", "messages", "turn"}
    assert documented - {"ticket", "customer_id", "version"} == fields - unsent
