"""A watchdog process that kills the command agents' process groups if caseforge dies.

caseforge kills a command's process group itself when a case-trial ends, times out or is
interrupted. A ``kill -9`` gives it no chance to, and a parent-death signal would reach
only the direct child, not a ``sh -c`` wrapper's children. So one small process per run
holds the read end of a pipe whose write end only caseforge has: caseforge writes
``+PGID`` when it starts a command and ``-PGID`` when that command's group is gone. When the
pipe reaches end of file (caseforge exited, however it died), the watchdog kills every
group still listed, then exits.

The one gap is the instant between a command starting and its group being written down.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading

_PROGRAM = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    line = line.strip()
    if line[:1] == "+":
        groups.add(int(line[1:]))
    elif line[:1] == "-":
        groups.discard(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""


class Watchdog:
    """Started on the first ``watch``; ``close`` ends it (killing what is still listed)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def watch(self, group: int) -> None:
        self._send(f"+{group}\n")

    def release(self, group: int) -> None:
        self._send(f"-{group}\n")

    def _send(self, line: str) -> None:
        with self._lock:
            if self._proc is None:
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", _PROGRAM],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # a Ctrl-C or SIGTERM to the job does not reach it
                )
            assert self._proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                self._proc.stdin.write(line.encode())
                self._proc.stdin.flush()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
