"""Threads for a suite's own synchronous code: sync agents, workspace hooks, outcome
probes and simulated users.

Python cannot stop a thread, and the standard pool joins its threads at exit (and
``asyncio.run`` joins the default executor's), so one call that hangs past its timeout
would keep caseforge running for ever after the run is stored. These threads are daemons:
a call still running when caseforge exits is abandoned (it was already recorded as timed
out, or the run as stopped).

A call runs in a copy of the caller's context, so what the suite's code prints reaches its
own case-trial's log (``run/capture.py``). ``SystemExit`` and ``KeyboardInterrupt`` raised
by that code are its failure, never caseforge's: they reach the caller wrapped in
:class:`SuiteExit`, an ordinary exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import queue
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar, TypeVarTuple

from caseforge.errors import SuiteExit, suite_exit

T = TypeVar("T")
P = ParamSpec("P")
Ts = TypeVarTuple("Ts")


class DaemonThreadPool(Executor):
    """At most ``size`` daemon threads, started as work arrives."""

    def __init__(self, size: int, name: str = "suite") -> None:
        self._size = max(1, size)
        self._name = name
        self._work: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        self._work.put(functools.partial(_settle, future, functools.partial(fn, *args, **kwargs)))
        if len(self._threads) < self._size:
            thread = threading.Thread(target=self._worker, name=self._name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return future

    def _worker(self) -> None:
        while (work := self._work.get()) is not None:
            work()

    def shutdown(self, wait: bool = False, *, cancel_futures: bool = True) -> None:
        """Let idle threads end; a thread still in a call is abandoned, never joined."""
        for _ in self._threads:
            self._work.put(None)


def _settle(future: Future[T], call: Callable[[], T]) -> None:
    """Run ``call`` for ``future`` (unless it was cancelled first): its result or error."""
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(call())
    except (SystemExit, KeyboardInterrupt) as exc:
        future.set_exception(SuiteExit(exc))
    except BaseException as exc:  # handed to the awaiting coroutine
        future.set_exception(exc)


async def in_thread(pool: Executor, fn: Callable[[*Ts], T], /, *args: *Ts) -> T:
    """``fn(*args)`` on ``pool``, in a copy of this context (what it prints stays with it)."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    return await loop.run_in_executor(pool, functools.partial(context.run, fn, *args))


@contextlib.contextmanager
def exits_contained(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """While the block runs, a task created on ``loop`` (an async agent's own, from
    ``gather``, ``create_task`` or ``wait_for``) that raises ``SystemExit`` or
    ``KeyboardInterrupt`` fails with :class:`SuiteExit` instead: asyncio re-raises those
    two out of the event loop, which would end caseforge with the agent's exit code. A real
    Ctrl-C under Python's own SIGINT handler (a library caller's) still stops the run."""
    previous = loop.get_task_factory()

    def factory(
        loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], **kwargs: Any
    ) -> asyncio.Future[Any]:
        if previous is not None:
            return previous(loop, _contained(coro), **kwargs)
        return asyncio.Task(_contained(coro), loop=loop, **kwargs)

    loop.set_task_factory(factory)  # type: ignore[arg-type]
    try:
        yield
    finally:
        loop.set_task_factory(previous)


async def _contained(coro: Coroutine[object, object, T]) -> T:
    try:
        return await coro
    except (SystemExit, KeyboardInterrupt) as exc:
        failure = suite_exit(exc)
        if failure is None:
            raise
        raise failure from None
