"""`caseforge serve` at start-up: its options, and the token it prints beyond loopback
(checked without binding any public address: the server and the port probe are stand-ins;
test_security.py starts the real one on loopback)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from caseforge.cli import app, serve_cmd
from tests.serve.conftest import Served

runner = CliRunner()


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def listen(app: object, host: str, port: int, ready: Callable[[], None]) -> None:
        calls.append({"app": app, "host": host, "port": port})
        ready()  # what the real server does once it listens

    monkeypatch.setattr(serve_cmd, "_listen", listen)
    monkeypatch.setattr(serve_cmd, "_check_port", lambda host, port: None)
    return calls


def test_loopback_needs_no_token(started: list[dict[str, Any]], world: Served) -> None:
    done = runner.invoke(app, ["serve", str(world.suites["xss"]), "--store", world.store])
    assert done.exit_code == 0, done.output
    assert "http://127.0.0.1:8471/  (Ctrl-C" in done.output and "token" not in done.output
    assert started[0]["host"] == "127.0.0.1" and started[0]["port"] == 8471


def test_beyond_loopback_a_token_is_printed_and_required(
    started: list[dict[str, Any]], world: Served
) -> None:
    done = runner.invoke(app, ["serve", "--store", world.store, "--host", "0.0.0.0"])
    assert done.exit_code == 0, done.output
    token = done.output.split("?token=")[1].split()[0]
    assert len(token) >= 24
    assert "for a session cookie, any number of times" in done.output
    assert "any IP address" in done.output
    from fastapi.testclient import TestClient

    web = TestClient(started[0]["app"], base_url="http://192.0.2.10:8471", follow_redirects=False)
    assert web.get("/").status_code == 401
    assert web.get("/", params={"token": token}).status_code == 303
    assert web.get("/", headers={"Host": "evil.example:8471"}).status_code == 403


def test_token_uses_and_allow_host_reach_the_server(
    started: list[dict[str, Any]], world: Served
) -> None:
    argv = ["serve", "--store", world.store, "--host", "0.0.0.0", "--token-uses", "1"]
    done = runner.invoke(app, [*argv, "--allow-host", "box.example", "--allow-host", "10.1.2.3"])
    assert done.exit_code == 0, done.output
    assert "for a session cookie, 1 time(s) (--token-uses)" in done.output
    assert "box.example" in done.output
    token = done.output.split("?token=")[1].split()[0]
    from fastapi.testclient import TestClient

    first = TestClient(started[0]["app"], base_url="http://box.example:8471")
    assert first.get("/", params={"token": token}).status_code == 200  # traded, redirected
    second = TestClient(started[0]["app"], base_url="http://box.example:8471")
    assert second.get("/", params={"token": token}).status_code == 401
    done = runner.invoke(app, ["serve", "--store", world.store, "--allow-host", "box.example"])
    assert done.exit_code == 0, done.output
    assert "answering the names localhost, 127.0.0.1, [::1], box.example" in done.output
    web = TestClient(started[-1]["app"], base_url="http://box.example:8471")
    assert web.get("/api/runs").status_code == 200


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["--port", "0"], 2, "--port must be from 1 to 65535"),
        (["--port", "70000"], 2, "--port must be from 1 to 65535"),
        (["--editor-url", "vscode://file/"], 2, "--editor-url must hold {path}"),
        (["--host", "0.0.0.0", "--token-uses", "0"], 2, "--token-uses must be 1 or more, not 0"),
        (["--token-uses", "2"], 2, "on 127.0.0.1 there is no token"),
        (["--allow-host", "box:8471"], 2, "--allow-host 'box:8471': give a host name or an IP"),
        (["--allow-host", "a b"], 2, "--allow-host 'a b': give a host name or an IP address"),
        (["{tmp}"], 1, "no suite config here"),
    ],
)
def test_bad_options_are_one_line(
    started: list[dict[str, Any]], tmp_path: Path, argv: list[str], code: int, says: str
) -> None:
    done = runner.invoke(app, ["serve", *[a.replace("{tmp}", str(tmp_path)) for a in argv]])
    assert done.exit_code == code, done.output
    assert says in done.output and "Traceback" not in done.output
    assert started == []


def test_a_port_in_use_is_an_environment_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = runner.invoke(
            app, ["serve", "--store", f"sqlite:///{tmp_path / 's.db'}", "--port", str(port)]
        )
    assert done.exit_code == 5 and f"cannot listen on 127.0.0.1:{port}" in done.output


def test_the_reviewer_comes_from_the_option_else_from_git(
    started: list[dict[str, Any]], world: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = str(world.suites["xss"])
    done = runner.invoke(app, ["serve", suite, "--store", world.store, "--reviewer", "bo"])
    assert done.exit_code == 0, done.output
    assert started[-1]["app"].state.catalog.reviewer == "bo"
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Chị Lan\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    done = runner.invoke(app, ["serve", suite, "--store", world.store])
    assert started[-1]["app"].state.catalog.reviewer == "Chị Lan"
    gitconfig.write_text("", encoding="utf-8")
    done = runner.invoke(app, ["serve", suite, "--store", world.store])
    assert started[-1]["app"].state.catalog.reviewer == ""
    assert "pass --reviewer to review or label" in done.output
