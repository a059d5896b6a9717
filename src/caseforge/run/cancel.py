"""Stopping a run from outside: a :class:`Cancellation` the caller sets and the run obeys.

The run installs no signal handler, so it can run inside pytest, a notebook or a server.
Whoever owns the process maps its stops onto a cancellation: the CLI maps SIGINT and
SIGTERM (``cli/signals.py``); a test or a notebook calls :meth:`Cancellation.cancel` from
another thread. A cancelled run stops starting case-trials, abandons the ones in flight
(a command agent's process group is killed; an in-process agent's thread is left to end
on its own), stores what finished, is marked ``stopped`` (``--resume`` finishes it), and
raises :class:`~caseforge.errors.Interrupted`.

``cancel`` may be called from a signal handler: it takes no lock and only sets an event
and calls what :meth:`Cancellation.watch` registered (the run's own callback schedules the
stop on its event loop with ``call_soon_threadsafe``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from caseforge.errors import Interrupted


class Cancellation:
    """A stop request: set once, from any thread or a signal handler."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = "cancelled"  # how the stop is named: SIGINT, SIGTERM, cancelled
        self._watchers: list[Callable[[], None]] = []
        # Whether the run is in a phase that stops by itself once cancelled (it is driving
        # case-trials on its event loop). Outside such a phase a signal handler may instead
        # interrupt the main thread at once (the CLI raises Interrupted from its handler).
        self.stops_itself = False
        # Set by the run when its event loop has taken the stop: a signal handler that sees
        # it unset after a while knows the loop is blocked (an async agent that never
        # awaits) and may interrupt the main thread instead.
        self.taken = threading.Event()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled") -> None:
        """Ask the run to stop. Safe from a signal handler and from any thread."""
        if self._event.is_set():
            return
        self.reason = reason
        self._event.set()
        for watcher in list(self._watchers):
            watcher()

    def check(self) -> None:
        """Raise :class:`~caseforge.errors.Interrupted` if a stop was asked for: the run
        calls it between the steps of its set-up."""
        if self._event.is_set():
            raise Interrupted(self.reason)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled (or ``timeout`` seconds pass); whether it was."""
        return self._event.wait(timeout)

    @contextlib.contextmanager
    def watch(self, callback: Callable[[], None]) -> Iterator[None]:
        """Call ``callback`` on cancellation while the block runs (at once if already)."""
        self._watchers.append(callback)
        try:
            if self._event.is_set():
                callback()
            yield
        finally:
            self._watchers.remove(callback)
