"""Requests-per-minute and tokens-per-minute limits over a sliding 60-second window."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

WINDOW_S = 60.0


class Limiter(Protocol):
    """What a model client waits on before each request (a :class:`RateLimiter`, or one
    that asks a limiter shared by several processes)."""

    async def acquire(self, tokens: int = 0) -> None: ...


class RateLimiter:
    """``await limiter.acquire(tokens)`` waits until the call fits both budgets."""

    def __init__(
        self,
        rpm: int | None = None,
        tpm: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        window_s: float = WINDOW_S,
    ) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self.window_s = window_s  # rpm and tpm count over this window (a minute)
        self.clock = clock
        self.sleep = sleep
        self.calls: deque[tuple[float, int]] = deque()
        self.waited_s = 0.0
        self._lock = asyncio.Lock()

    def _wait_needed(self, tokens: int) -> float:
        now = self.clock()
        while self.calls and now - self.calls[0][0] >= self.window_s:
            self.calls.popleft()
        waits = [0.0]
        if self.rpm is not None and len(self.calls) >= self.rpm:
            waits.append(self.calls[len(self.calls) - self.rpm][0] + self.window_s - now)
        if self.tpm is not None and self.calls:
            used = sum(t for _, t in self.calls)
            # Drop the oldest calls until this one fits (a single call over tpm runs alone).
            excess = used + tokens - self.tpm
            for start, spent in self.calls:
                if excess <= 0:
                    break
                waits.append(start + self.window_s - now)
                excess -= spent
        return max(waits)

    async def acquire(self, tokens: int = 0) -> None:
        if self.rpm is None and self.tpm is None:
            return
        async with self._lock:
            while (wait := self._wait_needed(tokens)) > 0:
                self.waited_s += wait
                await self.sleep(wait)
            self.calls.append((self.clock(), tokens))
