"""Reaching an agent: a Python callable, a command (one process per case-trial), or HTTP.

All three carry the same JSON (see :mod:`caseforge.agent.protocol`). A failure that is
worth retrying (HTTP 429/5xx, a reset connection) raises :class:`TransientAgentError`;
anything else the agent gets wrong raises :class:`AgentError` and becomes an ``error``
for that case-trial.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import os
import re
import shlex
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import httpx

from caseforge.agent.context import AgentContext
from caseforge.agent.protocol import (
    AgentProtocolError,
    AgentRequestDict,
    AgentResult,
    parse_response,
)
from caseforge.agent.threads import DaemonThreadPool, in_thread
from caseforge.agent.watchdog import Watchdog
from caseforge.case.load import CONFIG_FILE
from caseforge.case.positions import locate_in_yaml
from caseforge.case.suite import AgentSpec
from caseforge.errors import CaseforgeError, Problem, UsageError, suite_exit
from caseforge.logs import BoundedLog

STDERR_TAIL = 2000


class AgentError(CaseforgeError):
    """The agent failed this case-trial (crash, bad exit, invalid response)."""

    def __init__(self, message: str, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.stderr_tail = stderr_tail


class TransientAgentError(AgentError):
    """A failure worth retrying: rate limits, server errors, reset connections."""


class Agent(Protocol):
    """A transport: ``await agent.call(request, ctx)`` returns the agent's result."""

    description: str
    in_process: bool

    async def call(self, request: AgentRequestDict, ctx: AgentContext) -> AgentResult: ...

    async def aclose(self) -> None: ...


def is_transient(exc: BaseException) -> bool:
    """Whether a failure should be retried with backoff."""
    if isinstance(exc, TransientAgentError):
        return True
    if isinstance(exc, AgentError | asyncio.TimeoutError | AgentProtocolError):
        return False
    if isinstance(exc, ConnectionError | httpx.TransportError):
        return True
    status = getattr(exc, "status_code", None)
    if status is None:
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
    return isinstance(status, int) and (status == 429 or 500 <= status < 600)


class CallableAgent:
    """A Python function ``agent(input, ctx)``, sync (run in a thread) or async."""

    in_process = True

    def __init__(self, fn: Callable[..., object], description: str, threads: int = 8) -> None:
        self.fn = fn
        self.description = description
        call = getattr(type(fn), "__call__", None)  # noqa: B004 (async callable objects)
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)
        self._pool: DaemonThreadPool | None = None
        self._threads = threads

    async def call(self, request: AgentRequestDict, ctx: AgentContext) -> AgentResult:
        ctx.messages, ctx.turn = request.get("messages"), request.get("turn")
        response: object
        if self.is_async:
            pending = self.fn(request["input"], ctx)
            response = await pending if inspect.isawaitable(pending) else pending
        else:
            if self._pool is None:
                self._pool = DaemonThreadPool(self._threads, name="agent")
            response = await in_thread(self._pool, self.fn, request["input"], ctx)
        return parse_response(response)

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class CommandAgent:
    """A command that reads one JSON request on stdin and writes one response on stdout."""

    in_process = False

    def __init__(self, argv: list[str], cwd: Path) -> None:
        if not argv:
            raise CaseforgeError("the agent command is empty")
        self.argv = argv
        self.cwd = cwd
        self.description = "cmd:" + shlex.join(argv)
        self.watchdog = Watchdog()  # kills the groups left if caseforge itself is killed

    async def call(self, request: AgentRequestDict, ctx: AgentContext) -> AgentResult:
        payload = json.dumps(request, ensure_ascii=False, default=str).encode("utf-8")
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *self.argv,
                cwd=self.cwd,
                env=trace_environment(ctx),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                # Its own process group, so a `sh -c` wrapper's children go with it.
                start_new_session=True,
            )
        )
        try:
            proc = await asyncio.shield(spawn)
        except OSError as exc:
            raise AgentError(f"cannot start {self.argv[0]!r}: {exc.strerror}") from None
        except asyncio.CancelledError:
            # Cancelled while starting: asyncio would kill only the process, not its group,
            # so a wrapper's children would outlive the run. Let the start finish, then kill
            # the whole group.
            with contextlib.suppress(OSError):
                started = await spawn
                _kill_group(started.pid)
                await started.wait()
            raise
        self.watchdog.watch(proc.pid)
        log = ctx.log if ctx.log is not None else BoundedLog()
        try:
            stdout = await _exchange(proc, payload, log)
        finally:
            # Cancelled (a timeout, Ctrl-C, SIGTERM) or done: leave nothing of it behind.
            _kill_group(proc.pid)
            if proc.returncode is None:
                await proc.wait()
            self.watchdog.release(proc.pid)
        tail = log.last(STDERR_TAIL)
        if proc.returncode != 0:
            raise AgentError(f"the agent command exited with status {proc.returncode}", tail)
        try:
            data = json.loads(stdout)
        except ValueError:
            shown = bytes(stdout[:200]).decode("utf-8", "replace")
            raise AgentError(f"the agent printed invalid JSON: {shown!r}", tail) from None
        try:
            return parse_response(data)
        except AgentProtocolError as exc:
            raise AgentError(str(exc), tail) from None

    async def aclose(self) -> None:
        self.watchdog.close()


MAX_REPLY_BYTES = 256 * 1024 * 1024  # what a command may write to stdout for one case-trial


async def _exchange(proc: asyncio.subprocess.Process, payload: bytes, log: BoundedLog) -> bytearray:
    """Send the request, and read the response and stderr as they come: stderr into the
    trial's bounded log (its head and tail; a command that writes for minutes costs no
    memory), stdout up to MAX_REPLY_BYTES. Returns once the command has exited."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr

    async def feed() -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it read no more
            stdin.write(payload)
            await stdin.drain()
        stdin.close()

    async def drain() -> None:
        while chunk := await stderr.read(1 << 16):
            log.write(chunk)

    writer, errors = asyncio.ensure_future(feed()), asyncio.ensure_future(drain())
    try:
        out = bytearray()
        while chunk := await stdout.read(1 << 20):
            out += chunk
            if len(out) > MAX_REPLY_BYTES:
                raise AgentError(
                    f"the agent command wrote more than {MAX_REPLY_BYTES // 2**20} MB to "
                    "stdout for one case-trial; it was stopped"
                )
        await errors
        await writer
        await proc.wait()
        return out
    finally:
        for task in (writer, errors):
            task.cancel()


TRACES_ENDPOINT = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"


def trace_environment(ctx: AgentContext) -> dict[str, str] | None:
    """A command's environment: caseforge's own, with the agent call's ``TRACEPARENT`` (the
    W3C trace context, as OpenTelemetry's environment carrier names it) and, unless the user
    set it, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` pointing at the run's receiver. None
    (inherit caseforge's) when there is no trace to pass on."""
    if ctx.traceparent is None and ctx.otlp_traces_url is None:
        return None
    env = dict(os.environ)
    if ctx.traceparent is not None:
        env["TRACEPARENT"] = ctx.traceparent
        env.pop("TRACESTATE", None)  # caseforge's own, if any, is not this trace's
    if ctx.otlp_traces_url is not None and not env.get(TRACES_ENDPOINT):
        env[TRACES_ENDPOINT] = ctx.otlp_traces_url
    return env


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pid, signal.SIGKILL)


class HttpAgent:
    """An endpoint that accepts the request JSON by POST and answers the response JSON."""

    in_process = False

    def __init__(self, url: str, client: httpx.AsyncClient | None = None) -> None:
        self.url = url
        self.description = url
        self.client = client or httpx.AsyncClient(timeout=None)

    async def call(self, request: AgentRequestDict, ctx: AgentContext) -> AgentResult:
        headers = {"traceparent": ctx.traceparent} if ctx.traceparent else None
        response = await self.client.post(self.url, json=request, headers=headers)
        if response.status_code == 429 or response.status_code >= 500:
            raise TransientAgentError(f"HTTP {response.status_code} from {self.url}")
        if 300 <= response.status_code < 400:  # a redirect, not an answer
            location = response.headers.get("location")
            target = str(response.url.join(location)) if location else None
            where = f" to {target}" if target else " with no Location"
            if target == str(response.url):
                where += " (itself: a redirect loop)"
            raise AgentError(
                f"HTTP {response.status_code} from {self.url}: a redirect{where}, which caseforge "
                "does not follow (a POST is not replayed elsewhere): point the agent's URL at "
                "the endpoint itself"
            )
        if response.status_code >= 400:
            raise AgentError(f"HTTP {response.status_code} from {self.url}: {response.text[:200]}")
        try:
            data = response.json()
        except ValueError:
            raise AgentError(f"{self.url} answered invalid JSON: {response.text[:200]!r}") from None
        try:
            return parse_response(data)
        except AgentProtocolError as exc:
            raise AgentError(str(exc)) from None

    async def aclose(self) -> None:
        await self.client.aclose()


def configured_object(spec: str, suite_dir: Path, *loc: str) -> Any:
    """:func:`import_object` for a ``module:attribute`` the suite's ``caseforge.yaml`` names
    at ``loc`` (``agent``, ``callable``): a failure is one line naming the file, the line
    and the field."""
    try:
        return import_object(spec, suite_dir)
    except CaseforgeError as exc:
        path = suite_dir / CONFIG_FILE
        line, col = locate_in_yaml(path, loc)
        raise CaseforgeError(Problem(path, line, col, ".".join(loc), exc.text)) from None


def import_object(spec: str, suite_dir: Path) -> Any:
    """Import ``module:attribute`` with the suite folder on ``sys.path``."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise CaseforgeError(f"{spec!r}: expected `module:function`")
    folder = str(suite_dir.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # its import-time prints: not stdout
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CaseforgeError(f"{spec!r}: cannot import {module_name!r}: {exc}") from None
    except (SystemExit, KeyboardInterrupt) as exc:  # the module's own exit, at import
        failure = suite_exit(exc)
        if failure is None:
            raise
        raise CaseforgeError(f"{spec!r}: importing {module_name!r} {failure}") from None
    except Exception as exc:  # a syntax or runtime error in the user's module: say where
        where, text = "", str(exc)
        if isinstance(exc, SyntaxError) and exc.filename:
            where, text = f" ({exc.filename}:{exc.lineno})", str(exc.msg)
        else:
            frames = traceback.extract_tb(exc.__traceback__)
            if frames:
                where = f" ({frames[-1].filename}:{frames[-1].lineno})"
        raise CaseforgeError(
            f"{spec!r}: importing {module_name!r} failed: {type(exc).__name__}: {text}{where}"
        ) from None
    shadowed = _shadowed(spec, module_name, suite_dir)
    if shadowed is not None and module_name.split(".")[0] in sys.stdlib_module_names:
        raise CaseforgeError(shadowed)  # the suite's file can never be the one imported
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise CaseforgeError(shadowed or f"{spec!r}: {module_name!r} has no {attribute!r}")
        target = getattr(target, part)
    return target


def _shadowed(spec: str, module_name: str, suite_dir: Path) -> str | None:
    """When the suite holds a module of this name but Python imported another one (the
    standard library's ``queue``, or a module of that name imported earlier, such as
    another suite's copy): which file was imported, and what to rename. Only a standard
    library module is refused outright; another one is named when it lacks the attribute."""
    top = module_name.split(".")[0]
    ours = next(
        (p for p in (suite_dir / f"{top}.py", suite_dir / top) if p.exists()),
        None,
    )
    imported = sys.modules.get(top)
    if ours is None or imported is None:
        return None
    folder = suite_dir.resolve()
    places = [getattr(imported, "__file__", None), *(getattr(imported, "__path__", None) or [])]
    if any(p and Path(p).resolve().is_relative_to(folder) for p in places):
        return None  # the suite's own
    where = getattr(imported, "__file__", None) or "built into Python"
    whose = "Python's own" if top in sys.stdlib_module_names else "another"
    new_name = f"{suite_dir.resolve().name.replace('-', '_')}_{top}"
    rest = spec.partition(":")[2]
    return (
        f"{spec!r}: the module {top!r} that Python imported is {whose} ({where}), not the "
        f"suite's {ours}: rename {ours.name} (say, to {new_name}{ours.suffix}) and the agent "
        f"to {new_name}{module_name[len(top) :]}:{rest}"
    )


def resolve_agent(
    spec: AgentSpec | None, override: str | None, suite_dir: Path, threads: int = 8
) -> Agent:
    """The transport for ``--agent`` (``module:callable``, ``cmd:…``, ``http(s)://…``) or
    the suite's ``agent:`` setting."""
    if override:
        return _override(override, suite_dir, threads)
    if spec is None:
        raise CaseforgeError(
            f"{suite_dir / 'caseforge.yaml'}: no `agent:` configured; "
            "set one or pass --agent module:callable | cmd:COMMAND | http://URL"
        )
    if spec.http:
        return HttpAgent(spec.http)
    if spec.command:
        where = f"{suite_dir / 'caseforge.yaml'}: agent.command"
        command = spec.command
        argv = _split(command, where, CaseforgeError) if isinstance(command, str) else list(command)
        return CommandAgent(argv, suite_dir)
    assert spec.callable is not None
    fn = configured_object(spec.callable, suite_dir, "agent", "callable")
    if not callable(fn):
        path = suite_dir / CONFIG_FILE
        line, col = locate_in_yaml(path, ("agent", "callable"))
        raise CaseforgeError(
            Problem(path, line, col, "agent.callable", f"{spec.callable!r} is not callable")
        )
    return CallableAgent(fn, spec.callable, threads)


def _override(spec: str, suite_dir: Path, threads: int) -> Agent:
    """``--agent SPEC``: each mistake in it is a usage error naming ``--agent``."""
    hint = "use module:callable, cmd:COMMAND or http(s)://HOST/PATH"
    if spec.startswith(("http://", "https://")):
        if not httpx.URL(spec).host:
            raise UsageError(f"--agent {spec!r}: the URL names no host; {hint}")
        return HttpAgent(spec)
    if spec.startswith("cmd:"):
        argv = _split(spec[4:], "--agent", UsageError)
        if not argv:
            raise UsageError(f"--agent {spec!r}: the command is empty; {hint}")
        return CommandAgent(argv, suite_dir)
    scheme = spec.partition("://")[0]
    if "://" in spec:
        raise UsageError(
            f"--agent {spec!r}: {scheme}:// is not a transport caseforge speaks; {hint}"
        )
    meant = _url_meant(spec)
    if meant is not None:
        raise UsageError(f"--agent {spec!r}: not a URL (did you mean {meant}?); {hint}")
    module, sep, attribute = spec.partition(":")
    if not sep or not module or not attribute:
        raise UsageError(f"--agent {spec!r}: not module:callable; {hint}")
    try:
        return _callable(spec, suite_dir, threads)
    except CaseforgeError as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(f"--agent: {exc.text}") from None


def _url_meant(spec: str) -> str | None:
    """The URL an ``--agent`` that almost is one meant (``http//h:8000`` → ``http://h:8000``),
    or None: an ``http``/``https`` scheme with its ``://`` mistyped."""
    found = re.match(r"(?i)^(https?)(:/|//?|:?\\+)(?=[^/\\])(.+)$", spec)
    if found is None:
        return None
    return f"{found.group(1).lower()}://{found.group(3)}"


def _split(command: str, where: str, error: type[CaseforgeError]) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError as exc:  # an unclosed quote
        raise error(f"{where}: cannot read the command {command!r}: {exc}") from None


def _callable(spec: str, suite_dir: Path, threads: int) -> CallableAgent:
    fn = import_object(spec, suite_dir)
    if not callable(fn):
        raise CaseforgeError(f"{spec!r} is not callable")
    return CallableAgent(fn, spec, threads)
