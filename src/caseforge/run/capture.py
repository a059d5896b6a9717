"""What a suite's in-process code prints during a run goes to its case-trial's log, never
into caseforge's own output.

While a run drives, ``sys.stdout`` and ``sys.stderr`` are proxies (:func:`routed`). A
write made while a case-trial runs (its agent, workspace hook, outcome probe or simulated
user, on the event loop or on one of the suite's threads, which run in a copy of the
trial's context) lands in that trial's :class:`~caseforge.logs.BoundedLog`, found through
a context variable; the log is stored with the trial and ``caseforge show`` prints it.
Anything else written on the main thread is caseforge's own and goes where it always did;
a thread the suite started itself, outside any case-trial, writes to stderr, and so does
the session itself while it drives (a check mode of the suite's own that prints while it
grades), so stdout carries only caseforge's output (a report a script reads, say).

What code writes to file descriptors 1 and 2 directly (a C library, a subprocess it
starts without pipes) is not seen here: only a command agent's own stdout and stderr are
read by caseforge (``agent/transports.py``).
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO

from caseforge.logs import BoundedLog

_TRIAL_LOG: contextvars.ContextVar[BoundedLog | None] = contextvars.ContextVar(
    "caseforge_trial_log", default=None
)
# Set while the session drives: what the suite's code prints outside any case-trial's own
# context (a check mode of its own grading, say) goes to stderr, never to stdout.
_DRIVING: contextvars.ContextVar[bool] = contextvars.ContextVar("caseforge_driving", default=False)


class _Routed(io.TextIOBase):
    """A stand-in for ``sys.stdout`` or ``sys.stderr`` that routes each write."""

    def __init__(self, real: TextIO, stray: TextIO) -> None:
        self.real = real
        self.stray = stray  # where a suite thread's write outside any case-trial goes

    def write(self, text: str) -> int:
        log = _TRIAL_LOG.get()
        if log is not None:
            log.write(text.encode("utf-8", "replace"))
            return len(text)
        if threading.current_thread() is threading.main_thread() and not _DRIVING.get():
            return self.real.write(text)
        return self.stray.write(text)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self.real.flush()

    def isatty(self) -> bool:
        return self.real.isatty()

    def fileno(self) -> int:
        return self.real.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.real, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


_lock = threading.Lock()
_users = 0
_saved: tuple[TextIO, TextIO] | None = None


@contextlib.contextmanager
def routed() -> Iterator[None]:
    """Route ``sys.stdout`` and ``sys.stderr`` while the block runs (nested and concurrent
    blocks share one pair of proxies; the last to leave puts the streams back)."""
    global _users, _saved
    with _lock:
        if _users == 0:
            out, err = sys.stdout, sys.stderr
            _saved = (out, err)
            sys.stdout = _Routed(out, err)
            sys.stderr = _Routed(err, err)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _saved is not None:
                if isinstance(sys.stdout, _Routed):
                    sys.stdout = _saved[0]
                if isinstance(sys.stderr, _Routed):
                    sys.stderr = _saved[1]
                _saved = None


@contextlib.contextmanager
def driving() -> Iterator[None]:
    """While the block runs, this context's own prints go to stderr (the session's: it
    grades with the suite's check modes and runs the judge)."""
    token = _DRIVING.set(True)
    try:
        yield
    finally:
        _DRIVING.reset(token)


@contextlib.contextmanager
def trial_log(log: BoundedLog) -> Iterator[BoundedLog]:
    """What is printed in this context goes to ``log``: the case-trial's code on the event
    loop, and what caseforge runs on its own threads for it (they run in a copy of this
    context). A thread the suite's code starts itself does not inherit it: its prints go to
    stderr."""
    token = _TRIAL_LOG.set(log)
    try:
        yield log
    finally:
        _TRIAL_LOG.reset(token)
