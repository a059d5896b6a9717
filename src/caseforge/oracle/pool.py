"""Calling a suite's oracles in worker processes, each call with a timeout.

An oracle is the suite's own code, so caseforge never runs it in its own process: one that
calls ``sys.exit()``, prints, hangs or crashes the interpreter must cost only its own
finding. :class:`OraclePool` starts ``min(cores, 4)`` workers (``fork`` where the process
has no other thread, else ``spawn``). Each imports the oracles module once and answers
calls in batches, one answer per call as it goes, so the pool always knows which call is
running. A call that takes longer than ``oracle_timeout_s`` has its worker killed and
replaced, and the answer names the oracle and the case; a worker that dies (``os._exit``,
a segfault) costs the call it was running. The rest of its batch goes to another worker.

What an oracle prints is captured and handed back with its answer (the CLI writes it to
stderr, prefixed with the oracle's name); a worker's file descriptor 1 points at stderr,
so not even a C library's write reaches caseforge's stdout. Each worker also reports the
files outside the suite folder and outside the installed packages that it imported or
opened, for the cache's key (``oracle/cache.py``). Workers ignore SIGINT (caseforge
stops them) and die with caseforge (``PR_SET_PDEATHSIG`` on Linux, else a watching
thread).
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING

from caseforge.errors import describe_exit
from caseforge.jsontypes import JSONValue

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, SpawnContext
    from multiprocessing.process import BaseProcess

    from caseforge.oracle.registry import OracleFn

# What a worker sends back for one call: ("answer", key, value, alternatives, error,
# what it printed, files it read outside the suite, whether the answer may be cached).
AnswerMessage = tuple[str, int, JSONValue, list[JSONValue], str | None, str, list[str], bool]

OUTPUT_BYTES = 16 * 1024  # what is kept of one call's printing (its head and tail)
BATCH = 32  # calls sent to a worker at once, at most


@dataclass(frozen=True)
class OracleCall:
    """One oracle to call: ``name(input, **args)``; ``key`` is the caller's own."""

    key: int
    name: str
    input: dict[str, object]
    args: dict[str, object]
    case_id: str = ""


@dataclass
class OracleAnswer:
    """What a call gave: the expected value and its alternatives (JSON-normal), or an
    error; what it printed; and whether the answer may be cached (a timeout or a crash
    may not be the oracle's fault every time)."""

    value: JSONValue = None
    others: list[JSONValue] = field(default_factory=list)
    error: str | None = None
    output: str = ""
    cacheable: bool = True


@dataclass
class ModuleInfo:
    """The oracles module as a worker found it: the names it registers, or why it did not
    load, and what it printed while loading."""

    names: list[str] | None
    error: str | None = None
    output: str = ""


def pool_size(calls: int) -> int:
    return max(1, min(os.cpu_count() or 1, 4, calls))


class OraclePool:
    """Workers that import ``module`` and answer :class:`OracleCall` s."""

    def __init__(self, module: Path, suite_dir: Path, timeout_s: float, workers: int = 1):
        self.module = module.resolve()
        self.suite_dir = suite_dir.resolve()
        self.timeout_s = timeout_s
        self.size = max(1, workers)
        self.files: set[str] = set()  # outside the suite, read or imported by a worker
        self._info: ModuleInfo | None = None
        self._workers: list[_Worker] = []
        fork = threading.active_count() == 1 and os.name == "posix"
        self._context: ForkContext | SpawnContext = (
            multiprocessing.get_context("fork") if fork else multiprocessing.get_context("spawn")
        )

    def __enter__(self) -> OraclePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def module_info(self) -> ModuleInfo:
        """Start one worker and say what the module registers (or why it fails)."""
        if self._info is None:
            worker = self._start()
            self._info = worker.wait_loaded(self.timeout_s)
            self.files.update(worker.take_files())
            if self._info.names is None:
                worker.kill()
                self._workers.remove(worker)
        return self._info

    def run(self, calls: list[OracleCall]) -> Iterator[tuple[OracleCall, OracleAnswer]]:
        """Each call with its answer, in the order they finish."""
        info = self.module_info()
        if info.names is None or not calls:
            return
        pending: deque[OracleCall] = deque(calls)
        size = max(1, min(BATCH, len(calls) // (self.size * 4) or 1))
        starting = [self._start() for _ in range(min(self.size, len(calls)) - len(self._workers))]
        for worker in starting:  # they load the module side by side
            if worker.wait_loaded(self.timeout_s).names is None:
                worker.kill()
                self._workers.remove(worker)
        busy: dict[Connection, _Worker] = {}

        def busy_conn(ready: object) -> Connection:
            assert isinstance(ready, Connection)
            return ready

        def assign(worker: _Worker) -> None:
            if pending:
                worker.send([pending.popleft() for _ in range(min(size, len(pending)))])
                busy[worker.conn] = worker

        for worker in self._workers:
            assign(worker)
        while busy:
            soonest = min(w.deadline(self.timeout_s) for w in busy.values())
            for ready in wait(list(busy), timeout=max(0.0, soonest - time.monotonic())):
                conn = busy_conn(ready)
                worker = busy[conn]
                try:
                    message = conn.recv()
                except (EOFError, OSError):  # it died: os._exit(), a crash
                    del busy[conn]
                    yield self._replace(worker, pending, timed_out=False)
                else:
                    yield worker.answered(message)
                    self.files.update(worker.take_files())
                    if worker.batch:
                        continue
                    del busy[conn]
                    assign(worker)
                    continue
                if pending and (fresh := self._fresh()) is not None:
                    assign(fresh)
            for conn, worker in list(busy.items()):
                if worker.deadline(self.timeout_s) <= time.monotonic():
                    del busy[conn]
                    yield self._replace(worker, pending, timed_out=True)
                    if pending and (fresh := self._fresh()) is not None:
                        assign(fresh)
            if not busy and pending and not self._workers:  # no worker could start
                for call in pending:
                    yield call, OracleAnswer(error="no worker process could start", cacheable=False)
                pending.clear()

    def _replace(
        self, worker: _Worker, pending: deque[OracleCall], timed_out: bool
    ) -> tuple[OracleCall, OracleAnswer]:
        """Kill ``worker``: the call it was running gets an error naming why, the rest of
        its batch goes back to the front of the queue."""
        code = worker.kill()
        self._workers.remove(worker)
        call = worker.batch.popleft()
        pending.extendleft(reversed(worker.batch))
        worker.batch.clear()
        if timed_out:
            error = (
                f"timed out after {self.timeout_s:g} s (oracle_timeout_s in caseforge.yaml); "
                "its process was killed"
            )
        else:
            error = f"its process ended (exit code {code}): os._exit(), or a crash"
        return call, OracleAnswer(error=error, cacheable=False)

    def _fresh(self) -> _Worker | None:
        """A replacement worker, loaded; None if it cannot load (the calls left then go to
        the workers still alive, or are answered as unable to run)."""
        worker = self._start()
        if worker.wait_loaded(self.timeout_s).names is None:
            worker.kill()
            self._workers.remove(worker)
            return None
        return worker

    def _start(self) -> _Worker:
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=_serve,
            args=(child, str(self.module), str(self.suite_dir)),
            name="caseforge-oracle",
            daemon=True,
        )
        process.start()
        child.close()
        worker = _Worker(process, parent, self.module)
        self._workers.append(worker)
        return worker

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
        self._workers.clear()


class _Worker:
    """The parent's side of one worker process."""

    def __init__(self, process: BaseProcess, conn: Connection, module: Path) -> None:
        self.module = module
        self.process = process
        self.conn = conn
        self.batch: deque[OracleCall] = deque()
        self.info: ModuleInfo | None = None
        self.started = time.monotonic()
        self.last = self.started  # the last answer, or when the batch was sent
        self._files: list[str] = []

    def wait_loaded(self, timeout_s: float) -> ModuleInfo:
        """Wait for the worker to import the module: what it registers, or why not."""
        if self.info is not None:
            return self.info
        if not self.conn.poll(max(0.0, self.started + timeout_s - time.monotonic())):
            self.kill()
            self.info = ModuleInfo(
                None,
                f"{self.module}: importing the oracles module took longer than {timeout_s:g} s "
                "(oracle_timeout_s in caseforge.yaml); its process was killed",
            )
            return self.info
        try:
            _, names, error, output, files = self.conn.recv()
        except (EOFError, OSError):
            code = self.kill()
            self.info = ModuleInfo(
                None,
                f"{self.module}: importing the oracles module ended its process "
                f"(exit code {code}): os._exit(), or a crash",
            )
            return self.info
        self._files += files
        self.info = ModuleInfo(names, error, output)
        return self.info

    def send(self, calls: list[OracleCall]) -> None:
        self.batch.extend(calls)
        self.last = time.monotonic()
        self.conn.send([(c.key, c.name, c.input, c.args) for c in calls])

    def deadline(self, timeout_s: float) -> float:
        return self.last + timeout_s

    def answered(self, message: AnswerMessage) -> tuple[OracleCall, OracleAnswer]:
        _, key, value, others, error, output, files, keyed = message
        call = self.batch.popleft()
        assert call.key == key, "a worker answers its batch in order"
        self.last = time.monotonic()
        self._files += files
        return call, OracleAnswer(value, others, error, output, cacheable=keyed)

    def take_files(self) -> list[str]:
        files, self._files = self._files, []
        return files

    def kill(self) -> int | None:
        """Kill the worker and whatever it started (its own process group)."""
        pid = self.process.pid  # None only before it started
        if pid is not None:
            with contextlib.suppress(Exception):
                os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.process.kill()
        self.process.join(30)
        with contextlib.suppress(Exception):
            self.conn.close()
        code: int | None = self.process.exitcode
        return code

    def stop(self) -> None:
        """Ask an idle worker to end; kill one still in a call, and one that does not end."""
        if self.batch:
            self.kill()
            return
        with contextlib.suppress(Exception):
            self.conn.send(None)
        self.process.join(1)
        if self.process.is_alive():
            self.kill()
        with contextlib.suppress(Exception):
            self.conn.close()


# --- in the worker process ----------------------------------------------------------------


def _serve(conn: Connection, module: str, suite_dir: str) -> None:
    """A worker's life: load the module, then answer batches until told to stop."""
    _die_with_parent()
    with contextlib.suppress(OSError):
        os.setsid()  # its own process group: what an oracle starts is killed with it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # caseforge stops the workers itself
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with contextlib.suppress(OSError):
        os.dup2(2, 1)  # nothing an oracle writes reaches caseforge's stdout
    reads = _Reads(Path(suite_dir))
    sys.addaudithook(reads.hook)
    from caseforge.oracle.registry import OracleError, expectation, load_oracles

    found: dict[str, OracleFn] = {}
    error: str | None = None
    with _captured() as printed:
        try:
            found = load_oracles(Path(module))
        except OracleError as exc:
            error = str(exc)
    reads.imported()  # modules loaded before this process began (a fork) read no file now
    names = sorted(found) if error is None else None
    conn.send(("loaded", names, error, printed.text(), reads.take()))
    if error is not None:
        return
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        for key, name, case_input, args in batch:
            value: JSONValue = None
            others: list[JSONValue] = []
            failure: str | None = None
            with _captured() as printed:
                try:
                    computed = found[name](dict(case_input), **args)
                    raw, alternatives = expectation(computed)
                    value, others = _normal(raw), [_normal(a) for a in alternatives]
                except Exception as exc:
                    failure = f"failed: {exc!r}"
                except (SystemExit, KeyboardInterrupt) as exc:  # its own exit: its failure
                    failure = describe_exit(exc)
            keyed = not reads.outside and failure is None  # an error may not happen twice
            answer = ("answer", key, value, others, failure, printed.text(), reads.take(), keyed)
            conn.send(answer)


def _normal(value: object) -> JSONValue:
    """JSON-normal form (what validate compares): dates and other objects as strings."""
    normal: JSONValue = json.loads(json.dumps(value, default=str))
    return normal


class _Printed(io.TextIOBase):
    """A call's stdout and stderr: its head and tail kept (``OUTPUT_BYTES``)."""

    def __init__(self) -> None:
        from caseforge.logs import BoundedLog

        self.log = BoundedLog(OUTPUT_BYTES // 2, OUTPUT_BYTES // 2)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.log.write(text.encode("utf-8", "replace"))
        return len(text)

    def text(self) -> str:
        return self.log.text()


@contextlib.contextmanager
def _captured() -> Iterator[_Printed]:
    printed = _Printed()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        yield printed


# Audit events after which an answer depends on more than files: another process, the
# network. (Environment variables and the clock have no event: the docs say so.)
_UNKEYED = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
     "socket.connect", "socket.getaddrinfo", "urllib.Request"}
)  # fmt: skip


class _Reads:
    """Files an oracle imports or opens outside the suite folder and outside the installed
    Python (its standard library and site-packages): they belong in the cache's key."""

    def __init__(self, suite_dir: Path) -> None:
        self.skip = tuple(
            os.path.join(folder, "")  # a whole component: /srv/suite is not /srv/suite_data
            for folder in {
                str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)
            }
            | {str(suite_dir)}
        )
        self.found: set[str] = set()
        self.new: list[str] = []
        # Set once the oracle reached outside files: a process, the network. What it read
        # there has no key, so no answer computed from then on is kept in the cache.
        self.outside = False

    def hook(self, event: str, args: tuple[object, ...]) -> None:
        if event in _UNKEYED:
            self.outside = True
            return
        if event == "sqlite3.connect":  # a database file is read as a file is
            args = (args[0], "r") if args else args
        elif event != "open":
            return
        target = args[0] if args else None
        if not isinstance(target, str | bytes) or not target:
            return
        mode = args[1] if len(args) > 1 else "r"
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            return
        path = os.path.abspath(os.fsdecode(target))
        if path in self.found:
            return
        self.found.add(path)
        real = os.path.realpath(path)
        # A file not there counts too (its absence is what was read); a folder does not.
        if (real + os.sep).startswith(self.skip) or os.path.isdir(real):
            return
        self.new.append(real)

    def imported(self) -> None:
        """Count the files of every module already imported, as if opened now."""
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str):
                self.hook("open", (path, "r"))

    def take(self) -> list[str]:
        new, self.new = self.new, []
        return new


def _die_with_parent() -> None:
    """End this worker when caseforge ends, however it ends."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            if os.getppid() != parent:  # the parent died before the call
                os._exit(1)
            return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
