"""The typer app class every caseforge command is registered on."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from caseforge.errors import CaseforgeError

F = TypeVar("F", bound=Callable[..., Any])
_err = Console(stderr=True, highlight=False, soft_wrap=True)


class App(typer.Typer):
    """A typer app whose commands turn a ``CaseforgeError`` into its one-line message on
    stderr and its exit code (the README's table). This is the one place that happens."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        register = super().command(*args, **kwargs)

        def wrap(fn: F) -> F:
            @functools.wraps(fn)
            def guarded(*a: Any, **k: Any) -> Any:
                try:
                    return fn(*a, **k)
                except CaseforgeError as exc:
                    _err.print(exc.text, markup=False)
                    raise typer.Exit(exc.exit_code) from None

            register(guarded)
            return fn

        return wrap
