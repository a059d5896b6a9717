"""SIGINT and SIGTERM, as a terminal, CI, ``timeout`` and supervisors send them.

``caseforge`` installs one handler for both when it starts (:func:`install`), so a stop
never depends on how the process was started. A shell starts a background job with SIGINT
*ignored*; Python then installs no ``KeyboardInterrupt`` handler, and anything built on
SIGINT (asyncio's own handling, re-sending SIGTERM as SIGINT) silently does nothing. Here
SIGTERM has its own handler whatever SIGINT's state; an ignored SIGINT stays ignored (that
is what the shell asked for).

What the handler does depends on the phase:

- While a run drives its case-trials (its :class:`~caseforge.run.cancel.Cancellation` says
  ``stops_itself``), the handler cancels it: the run stores what finished, is marked
  ``stopped`` and raises :class:`~caseforge.errors.Interrupted`.
- Anywhere else (start-up, loading the suite, planning, writing reports, any other
  command), it raises :class:`~caseforge.errors.Interrupted` in the main thread at once,
  and the code on the way out cleans up (a run already recorded is marked ``stopped``).
- A second signal while the first is being handled ends the process at once.

The command's guard (``cli/command.py``) prints ``interrupted (SIGTERM)…`` and exits 143
for SIGTERM, 130 for SIGINT.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from caseforge.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, Interrupted
from caseforge.run.cancel import Cancellation

_NAMES = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}


class SignalStop:
    """The process's one handler for SIGINT and SIGTERM."""

    def __init__(self) -> None:
        self.installed = False
        self.received: str | None = None  # the first signal's name, once one came
        self._target: Cancellation | None = None
        self._forced = False  # the signal re-sent because the run's loop did not take it
        self._asked = threading.Event()  # set by the handler: the watcher starts its clock
        self._signum = signal.SIGTERM.value

    def install(self) -> None:
        """Handle SIGTERM, and SIGINT unless the process was started with it ignored."""
        if threading.current_thread() is not threading.main_thread():
            return
        signal.signal(signal.SIGTERM, self._handle)
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, self._handle)
        self.installed = True

    @contextlib.contextmanager
    def cancelling(self, cancellation: Cancellation) -> Iterator[None]:
        """While the block runs, a signal cancels ``cancellation`` when the run it belongs
        to stops by itself, and interrupts the main thread otherwise.

        The thread that watches whether the run's loop takes the stop is started here, not
        in the handler: starting a thread takes a lock the interrupted main thread may
        hold."""
        asked, over = threading.Event(), threading.Event()
        watcher = threading.Thread(
            target=self._unless_taken, args=(cancellation, asked, over), name="stop", daemon=True
        )
        watcher.start()
        self._asked = asked
        self._target = cancellation
        try:
            yield
        finally:
            self._target = None  # first: a signal from here on raises, touching no event
            over.set()
            asked.set()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = _NAMES.get(signal.Signals(signum), f"signal {signum}")
        if self._forced:  # the run's loop is blocked: interrupt what blocks it
            self._forced = False
            target = self._target
            if target is not None and target.taken.is_set():
                return  # the loop took the stop meanwhile: it stops by itself
            raise Interrupted(name)
        if self.received is not None:  # a second stop while the first is handled
            code = EXIT_TERMINATED if name == "SIGTERM" else EXIT_INTERRUPTED
            with contextlib.suppress(OSError):
                os.write(2, f"interrupted again ({name}): stopping now\n".encode())
            os._exit(code)
        self.received = name
        target = self._target
        if target is not None and target.stops_itself:
            target.cancel(name)
            self._signum = signum
            self._asked.set()
            return
        if target is not None:
            target.cancel(name)  # so a phase that starts meanwhile stops at once too
        raise Interrupted(name)

    def _unless_taken(
        self, target: Cancellation, asked: threading.Event, over: threading.Event
    ) -> None:
        """Once a stop is asked for: if the run's event loop has not taken it within
        TAKE_S, something blocks it (an async agent that never awaits), so send the signal
        again to the main thread, whose handler then raises Interrupted inside it."""
        asked.wait()
        if over.is_set() or target.taken.wait(TAKE_S) or over.is_set():
            return
        self._forced = True
        signal.pthread_kill(threading.main_thread().ident or 0, self._signum)


# How long the run's event loop has to take a stop before the main thread is interrupted.
TAKE_S = 0.5

STOP = SignalStop()


def install() -> None:
    """Install the handler (``caseforge``'s entry point does, before anything else)."""
    STOP.install()
