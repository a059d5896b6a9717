"""`caseforge serve` at start-up: its options, and the token it prints beyond loopback
(checked without binding any public address: uvicorn and the port probe are stand-ins)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from caseforge.cli import app, serve_cmd
from tests.serve.conftest import Served

runner = CliRunner()


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    import uvicorn

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append({"app": app, **kw}))
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
    from fastapi.testclient import TestClient

    web = TestClient(started[0]["app"], follow_redirects=False)
    assert web.get("/").status_code == 401
    assert web.get("/", params={"token": token}).status_code == 303


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["--port", "0"], 2, "--port must be from 1 to 65535"),
        (["--port", "70000"], 2, "--port must be from 1 to 65535"),
        (["--editor-url", "vscode://file/"], 2, "--editor-url must hold {path}"),
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
