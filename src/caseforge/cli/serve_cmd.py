"""``caseforge serve``: the local web app."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from caseforge.cli.options import StoreOpt
from caseforge.errors import EnvError, UsageError

DEFAULT_PORT = 8471  # not 8000 (DESIGN's example HTTP agent) nor 7575 (inspect view)
out = Console(highlight=False, soft_wrap=True)


def serve(
    suites: Annotated[
        list[Path] | None, typer.Argument(metavar="[SUITE]...", help="Suite folders to serve.")
    ] = None,
    store: StoreOpt = None,
    host: Annotated[
        str, typer.Option(help="Listen here; beyond loopback a token is required.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port.")] = DEFAULT_PORT,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            metavar="NAME",
            help="Also answer requests that name this server NAME (repeatable).",
        ),
    ] = None,
    token_uses: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Beyond loopback: the token can be traded for a session N times (default: any).",
        ),
    ] = None,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="Turn review and labelling off.")
    ] = False,
    editor_url: Annotated[
        str | None,
        typer.Option(help="An 'open in editor' link, e.g. 'vscode://file/{path}:{line}'."),
    ] = None,
    reviewer: Annotated[
        str | None,
        typer.Option(
            help="Who reviews and labels, kept in what they write (default: git's user.name)."
        ),
    ] = None,
) -> None:
    """Serve runs, trials, comparisons and labels in a browser (needs caseforge[serve])."""
    try:
        import uvicorn  # noqa: F401 (here for the message below; _listen uses it)

        from caseforge.serve import Catalog, Guard, create_app
    except ImportError as exc:
        raise EnvError(
            f"caseforge serve needs the serve extra ({exc.name} is missing): "
            "pip install 'caseforge[serve]'"
        ) from None
    if not 0 < port < 65536:
        raise UsageError(f"--port must be from 1 to 65535, not {port}")
    if editor_url is not None and ("{path}" not in editor_url):
        raise UsageError("--editor-url must hold {path} (and may hold {line})")
    guard = Guard.for_host(host, read_only, allow_host or (), token_uses)
    catalog = Catalog.open(list(suites or []), store, editor_url, reviewer, read_only)
    _check_port(host, port)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + (f"?token={guard.token}" if guard.token else "")

    def ready() -> None:
        out.print(f"caseforge serve: {url}  (Ctrl-C stops it)", markup=False)
        if not catalog.reviewer and not read_only:
            out.print(
                "no reviewer name (git's user.name is unset): pass --reviewer to review or label"
            )
        if guard.token:
            uses = f"{token_uses} time(s) (--token-uses)" if token_uses else "any number of times"
            out.print(
                "listening beyond loopback: the URL above trades its token for a session "
                f"cookie, {uses}; requests must name this server as one of: "
                f"{guard.hosts.describe()}",
                markup=False,
            )
        elif guard.hosts.names:
            out.print(f"answering the names {guard.hosts.describe()}", markup=False)

    _listen(create_app(catalog, guard), host, port, ready)


def _listen(app: object, host: str, port: int, ready: Callable[[], None]) -> None:
    """Serve ``app`` until Ctrl-C; ``ready`` runs once the server is listening, so the URL
    printed there can be opened at once (and a script can wait for it)."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                ready()

    server = Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))  # type: ignore[arg-type]
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C, after a graceful shutdown
        server.run()


def _check_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise EnvError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc} (pass another --port)"
            ) from None
