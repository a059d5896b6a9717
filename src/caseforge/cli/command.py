"""The typer app class every caseforge command is registered on."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from caseforge.errors import CaseforgeError, EnvError, Interrupted, UsageError

F = TypeVar("F", bound=Callable[..., Any])
_err = Console(stderr=True, highlight=False, soft_wrap=True)


def os_error(exc: OSError) -> CaseforgeError:
    """An I/O error as one line naming the path: a path that is not there (or is a folder
    where a file was expected, or the reverse) is a usage error; any other (permission, a
    full disk, an I/O fault) is an environment error."""
    where = exc.filename or "a file"
    what = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError | NotADirectoryError | IsADirectoryError):
        return UsageError(f"{where}: {what}; check the path")
    if isinstance(exc, PermissionError):
        return EnvError(f"{where}: {what}; check its permissions")
    return EnvError(f"{where}: {what}")


class App(typer.Typer):
    """A typer app whose commands turn a ``CaseforgeError`` into its one-line message on
    stderr and its exit code (the README's table), and a stop (``Interrupted``) into
    ``interrupted (SIGTERM)…`` and 143 or 130. This is the one place that happens."""

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
                except OSError as exc:  # a read or write the command did not expect to fail
                    error = os_error(exc)
                    _err.print(error.text, markup=False)
                    raise typer.Exit(error.exit_code) from None
                except Interrupted as stop:  # SIGINT or SIGTERM (cli/signals.py)
                    _err.print(stop.text, markup=False)
                    raise typer.Exit(stop.exit_code) from None

            register(guarded)
            return fn

        return wrap
