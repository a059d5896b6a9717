"""Bounded logs of what a suite's code wrote: a head and a tail kept, the middle counted.

A command agent that writes to stderr for minutes, or an in-process agent that prints in
a loop, must not grow caseforge without limit. A :class:`BoundedLog` keeps the first
``head`` and the last ``tail`` bytes and counts what it dropped between them, so memory
stays at ``head + tail`` whatever is written; ``caseforge show`` prints the kept part and
the count.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 64 * 1024


@dataclass
class BoundedLog:
    """The first ``head`` and last ``tail`` bytes of a stream, and how many were dropped."""

    head: int = HEAD_BYTES
    tail: int = TAIL_BYTES
    _start: bytearray = field(default_factory=bytearray)
    _end: bytearray = field(default_factory=bytearray)
    dropped: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def write(self, data: bytes) -> None:
        """Keep ``data`` if it falls in the head or the tail; count it otherwise."""
        with self._lock:
            self._write(data)

    def _write(self, data: bytes) -> None:
        room = self.head - len(self._start)
        if room > 0:
            self._start += data[:room]
            data = data[room:]
            if not data:
                return
        if len(data) >= self.tail:
            self.dropped += len(self._end) + len(data) - self.tail
            self._end = bytearray(data[-self.tail :])
            return
        self._end += data
        over = len(self._end) - self.tail
        if over > 0:
            del self._end[:over]
            self.dropped += over

    @property
    def written(self) -> int:
        """How many bytes were written in all."""
        return len(self._start) + self.dropped + len(self._end)

    def text(self) -> str:
        """What was kept, as text, with a line saying how much was dropped between."""
        start = bytes(self._start).decode("utf-8", "replace")
        if not self.dropped:
            return start + bytes(self._end).decode("utf-8", "replace")
        end = bytes(self._end).decode("utf-8", "replace")
        return f"{start}\n[… {self.dropped:,} bytes dropped …]\n{end}"

    def last(self, size: int) -> str:
        """The last ``size`` characters kept (a one-line error's context)."""
        return self.text()[-size:]

    def __bool__(self) -> bool:
        return bool(self._start)
