"""The Host guard against DNS rebinding, and the token traded for a session cookie.

A rebinding page runs on the attacker's name, rebound to this machine's address, so its
requests reach the server with ``Host: evil.example:8471`` and an Origin to match. The guard
rules are unit-tested here (``HostNames``, ``Guard``), then through the app, then through the
real ``caseforge serve`` started in a subprocess on 127.0.0.1."""

from __future__ import annotations

import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from caseforge.errors import UsageError
from caseforge.network import host_of_header
from caseforge.serve import Catalog, Guard, create_app
from caseforge.serve.security import CSRF_COOKIE, SESSION_COOKIE, HostNames
from caseforge.synth.writer import load_queue
from tests.helpers import free_port
from tests.serve.conftest import REPO, Served

EVIL = "evil.example:8471"
LOOPBACK_HOSTS = [
    "127.0.0.1:8471",
    "127.0.0.1",
    "localhost:8471",
    "localhost",
    "[::1]:8471",
    "[::1]",
]


# -- the rules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("127.0.0.1:8471", "127.0.0.1"),
        ("LocalHost:8471", "localhost"),
        ("[::1]:8471", "::1"),
        ("[::1]", "::1"),
        ("[0:0:0:0:0:0:0:1]:8471", "::1"),
        ("evil.example:8471", "evil.example"),
        ("", None),
        ("::1", None),  # IPv6 without brackets
        ("[127.0.0.1]:8471", None),  # brackets are for IPv6
        ("evil.example:", None),
        ("evil.example:70000", None),
        ("evil.example:84a1", None),
        ("localhost.:8471", None),  # a trailing dot is another name
        ("evil@127.0.0.1:8471", None),
        ("127.0.0.1:8471/x", None),
        ("a b:8471", None),
        ("[::1:8471", None),
    ],
)
def test_host_headers_are_read_strictly(header: str, host: str | None) -> None:
    assert host_of_header(header) == host


def test_a_loopback_bind_answers_only_the_loopback_names() -> None:
    names = HostNames.for_bind("127.0.0.1")
    for header in LOOPBACK_HOSTS:
        assert names.allows(header), header
    machine = socket.gethostname()
    refused = [EVIL, "evil.example", "10.0.0.5:8471", "0.0.0.0:8471", "", "localhost.:8471"]
    if machine != "localhost":
        refused.append(f"{machine}:8471")  # the machine's own name is for a wider bind
    for header in refused:
        assert not names.allows(header), header


def test_beyond_loopback_the_machine_names_addresses_and_allowed_names_are_answered() -> None:
    names = HostNames.for_bind("0.0.0.0", ["Box.Example"])
    answered = [
        *LOOPBACK_HOSTS,
        f"{socket.gethostname()}:8471",
        f"{socket.getfqdn()}:8471",
        "192.0.2.10:8471",  # an address cannot be rebound to another machine
        "[2001:db8::7]:8471",
        "box.example:8471",
        "BOX.EXAMPLE",
    ]
    for header in answered:
        assert names.allows(header), header
    assert not names.allows(EVIL) and not names.allows("box.example.evil.example:8471")
    on_loopback = HostNames.for_bind("127.0.0.1", ["box.example"])
    assert on_loopback.allows("box.example:8471") and not on_loopback.allows("192.0.2.10:8471")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("box.example:8471", "give a host name or an IP address without a port"),
        ("http://box.example", "give a host name or an IP address"),
        ("box example", "give a host name or an IP address"),
        ("", "give a host name or an IP address"),
    ],
)
def test_a_bad_allow_host_is_a_usage_error(value: str, says: str) -> None:
    with pytest.raises(UsageError, match="--allow-host") as raised:
        Guard.for_host("127.0.0.1", allow_hosts=[value])
    assert says in raised.value.text


def test_the_token_is_traded_for_new_sessions_until_its_uses_are_spent() -> None:
    guard = Guard.for_host("0.0.0.0", token_uses=2)
    assert guard.token and Guard.for_host("127.0.0.1").token is None
    assert Guard.for_host("::1").token is None and Guard.for_host("localhost").token is None
    assert guard.trade("wrong") is None and guard.trade("é") is None  # no use spent
    first, second = guard.trade(guard.token), guard.trade(guard.token)
    assert first and second and first != second and guard.token not in (first, second)
    assert guard.trade(guard.token) is None and guard.used_up
    assert guard.in_session(first) and guard.in_session(second)
    assert not guard.in_session(guard.token) and not guard.in_session("")
    with pytest.raises(UsageError, match="--token-uses must be 1 or more, not 0"):
        Guard.for_host("0.0.0.0", token_uses=0)
    with pytest.raises(UsageError, match=r"on 127\.0\.0\.1 there is no token"):
        Guard.for_host("127.0.0.1", token_uses=3)


# -- through the app ----------------------------------------------------------------------


def _review_app(
    tmp_path: Path, guard: Guard | None = None, base_url: str = "http://127.0.0.1:8471"
) -> tuple[TestClient, Path]:
    """A copy of support-refund with its 12 pending drafts, served."""
    suite = tmp_path / "support-refund"
    shutil.copytree(REPO / "examples" / "support-refund", suite)
    catalog = Catalog.open([suite], f"sqlite:///{tmp_path / 'none.db'}", reviewer="ana")
    return TestClient(create_app(catalog, guard), base_url=base_url), suite


def test_a_rebound_name_can_neither_read_nor_reject_a_draft(tmp_path: Path) -> None:
    web, suite = _review_app(tmp_path)
    draft = load_queue(suite)[0].draft_id
    csrf = web.get("/").cookies.get(CSRF_COOKIE) or ""
    assert csrf
    for path in ("/", "/api/runs", "/suites/0/review", "/api/suites/0/review", "/static/app.css"):
        read = web.get(path, headers={"Host": EVIL})
        assert read.status_code == 403, path
        assert "does not answer to the name 'evil.example:8471'" in read.text
        assert "pending" not in read.text and CSRF_COOKIE not in read.headers.get("set-cookie", "")
    # The request that rejected a draft before: the CSRF token, and an Origin matching Host.
    reject = {"action": "reject", "reason": "spam"}
    rebound = {"Host": EVIL, "Origin": f"http://{EVIL}", "X-CSRF-Token": csrf}
    refused = web.post(f"/api/suites/0/review/{draft}", json=reject, headers=rebound)
    assert refused.status_code == 403
    form = web.post(f"/suites/0/review/{draft}", data=reject, headers=rebound)
    assert form.status_code == 403
    assert load_queue(suite)[0].status == "pending"  # nothing changed
    own = {"Origin": "http://127.0.0.1:8471", "X-CSRF-Token": csrf}
    done = web.post(f"/api/suites/0/review/{draft}", json=reject, headers=own)
    assert done.status_code == 200, done.text  # the same request, on this server's name
    assert load_queue(suite)[0].status == "rejected"


def test_loopback_names_with_and_without_the_port_are_answered(world: Served) -> None:
    catalog = Catalog.open(list(world.suites.values()), world.store, reviewer="x")
    web = TestClient(create_app(catalog), base_url="http://127.0.0.1:8471")
    for host in LOOPBACK_HOSTS:
        assert web.get("/api/runs", headers={"Host": host}).status_code == 200, host
    assert web.get("/api/runs", headers={"Host": "box.example:8471"}).status_code == 403
    allowed = Guard.for_host("127.0.0.1", allow_hosts=["box.example"])
    web = TestClient(create_app(catalog, allowed), base_url="http://box.example:8471")
    assert web.get("/api/runs").status_code == 200
    assert web.get("/api/runs", headers={"Host": EVIL}).status_code == 403


def _session_cookie(response: Any) -> tuple[str, str]:
    """The session id a response sets, and the attributes it sets it with."""
    line = next(
        v for k, v in response.headers.multi_items() if k == "set-cookie" and SESSION_COOKIE in v
    )
    value, _, attributes = line.partition(";")
    return value.split("=", 1)[1], attributes.lower()


def test_beyond_loopback_the_token_is_traded_for_a_session_cookie(tmp_path: Path) -> None:
    guard = Guard.for_host("0.0.0.0")
    assert guard.token
    web, _ = _review_app(tmp_path, guard, "http://192.0.2.10:8471")  # an address of this machine
    web.follow_redirects = False
    assert web.get("/").status_code == 401
    assert web.get("/api/runs").status_code == 401
    assert web.get("/", params={"token": "wrong"}).status_code == 401
    entered = web.get("/suites/0", params={"token": guard.token})
    assert entered.status_code == 303 and entered.headers["location"].endswith("/suites/0")
    session, attributes = _session_cookie(entered)
    assert session != guard.token and len(session) >= 32
    assert "httponly" in attributes and "samesite=strict" in attributes
    assert web.get("/").status_code == 200 and web.get("/api/runs").status_code == 200
    assert web.get("/", headers={"Host": EVIL}).status_code == 403  # a session is no Host

    other = TestClient(web.app, base_url="http://192.0.2.10:8471", follow_redirects=False)
    shared = other.get("/", params={"token": guard.token})  # the URL, shared with a colleague
    assert shared.status_code == 303 and _session_cookie(shared)[0] != session
    assert other.get("/").status_code == 200

    for name in (SESSION_COOKIE, "caseforge_token"):  # the token itself is not a session
        stranger = TestClient(web.app, base_url="http://192.0.2.10:8471")
        stranger.cookies.set(name, guard.token)
        assert stranger.get("/").status_code == 401, name
        assert stranger.get("/api/runs").status_code == 401, name


def test_token_uses_1_refuses_the_second_trade(tmp_path: Path) -> None:
    guard = Guard.for_host("0.0.0.0", token_uses=1)
    assert guard.token
    web, _ = _review_app(tmp_path, guard)
    web.follow_redirects = False
    assert web.get("/", params={"token": guard.token}).status_code == 303
    again = web.get("/", params={"token": guard.token})  # this browser has its session
    assert again.status_code == 303 and SESSION_COOKIE not in again.headers.get("set-cookie", "")
    second = TestClient(web.app, base_url="http://127.0.0.1:8471", follow_redirects=False)
    refused = second.get("/", params={"token": guard.token})
    assert refused.status_code == 401 and "used 1 time(s) (--token-uses)" in refused.text
    assert second.get("/").status_code == 401
    assert web.get("/").status_code == 200  # the first browser keeps its session


# -- through the real `caseforge serve` ---------------------------------------------------


class Serving:
    """``caseforge serve`` in a subprocess, its output (stderr too, so neither pipe fills)
    read line by line on a thread."""

    def __init__(self, argv: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        env.pop("CASEFORGE_STORE", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "caseforge", "serve", *argv],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.seen: list[str] = []
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, start: str, timeout: float = 120) -> str:
        """The first line starting with ``start``; the server prints its URL once listening."""
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                raise AssertionError(f"caseforge serve ended: {''.join(self.seen)}")
            self.seen.append(line)
            if line.startswith(start):
                return line

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def serving() -> Iterator[list[Serving]]:
    started: list[Serving] = []
    yield started
    for server in started:
        server.stop()


def test_the_real_server_answers_its_names_and_refuses_a_rebound_one(
    tmp_path: Path, serving: list[Serving]
) -> None:
    suite = tmp_path / "support-refund"
    shutil.copytree(REPO / "examples" / "support-refund", suite)
    port = free_port()
    server = Serving(
        [str(suite), "--store", f"sqlite:///{tmp_path / 'none.db'}", "--port", str(port),
         "--reviewer", "ana", "--allow-host", "caseforge.test"]
    )  # fmt: skip
    serving.append(server)
    line = server.wait_for("caseforge serve: ")
    assert f"http://127.0.0.1:{port}/  (Ctrl-C" in line and "token" not in line
    draft = load_queue(suite)[0].draft_id
    base = f"http://127.0.0.1:{port}"
    evil = f"evil.example:{port}"
    with httpx.Client(base_url=base, timeout=60) as web:
        for path in ("/", "/api/runs", "/api/suites/0/review"):
            assert web.get(path, headers={"Host": evil}).status_code == 403, path
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
            assert web.get("/api/runs", headers={"Host": host}).status_code == 200, host
        assert web.get("/", headers={"Host": f"caseforge.test:{port}"}).status_code == 200
        csrf = web.cookies.get(CSRF_COOKIE) or ""
        assert csrf
        reject = {"action": "reject", "reason": "spam"}
        url = f"/api/suites/0/review/{draft}"
        rebound = {"Host": evil, "Origin": f"http://{evil}", "X-CSRF-Token": csrf}
        assert web.post(url, json=reject, headers=rebound).status_code == 403
        assert load_queue(suite)[0].status == "pending"
        own = {"Origin": base, "X-CSRF-Token": csrf}
        done = web.post(url, json=reject, headers=own)
        assert done.status_code == 200, done.text
    assert load_queue(suite)[0].status == "rejected"
