"""The typer app class every caseforge command is registered on, and the group that loads
each command's module only when that command runs."""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import typer
import typer.core

from caseforge.errors import CaseforgeError, EnvError, Interrupted, UsageError

F = TypeVar("F", bound=Callable[..., Any])


def _say(text: str) -> None:
    """One line on stderr, as it is (no markup)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


BROKEN_PIPE = 141  # as a shell reports a command SIGPIPE stopped: 128 + 13


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush at exit finds no closed
    pipe to complain about."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


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
                    _say(exc.text)
                    raise typer.Exit(exc.exit_code) from None
                except BrokenPipeError:  # stdout's reader went away (`| head`): no error here
                    _quiet_stdout()
                    raise typer.Exit(BROKEN_PIPE) from None
                except OSError as exc:  # a read or write the command did not expect to fail
                    error = os_error(exc)
                    _say(error.text)
                    raise typer.Exit(error.exit_code) from None
                except Interrupted as stop:  # SIGINT or SIGTERM (cli/signals.py)
                    _say(stop.text)
                    raise typer.Exit(stop.exit_code) from None

            register(guarded)
            return fn

        return wrap


@dataclass(frozen=True)
class LazyCommand:
    """A command known by name and one-line help, whose module is imported when it runs:
    ``caseforge.cli.<module>.<attribute>``, a command function or a typer app of its own."""

    name: str
    module: str
    attribute: str
    help: str

    def load(self) -> typer.core.TyperCommand | typer.core.TyperGroup:
        target = getattr(importlib.import_module(f"caseforge.cli.{self.module}"), self.attribute)
        if isinstance(target, typer.Typer):
            group = typer.main.get_group(target)
            group.name = self.name
            return group
        single = App(add_completion=False, pretty_exceptions_enable=False)
        single.command(name=self.name)(target)
        command = typer.main.get_command(single)
        assert isinstance(command, typer.core.TyperCommand)
        return command

    def stub(self) -> typer.core.TyperCommand:
        """What the top-level ``--help`` lists: the name and the help, nothing imported."""
        return typer.core.TyperCommand(name=self.name, help=self.help)


class LazyGroup(typer.core.TyperGroup):
    """The root group: commands from ``lazy`` are loaded on first use."""

    lazy: Mapping[str, LazyCommand] = {}
    _listing = False

    @classmethod
    def of(cls, lazy: Mapping[str, LazyCommand]) -> type[LazyGroup]:
        """This group class over the commands ``lazy`` names."""
        return type("CaseforgeGroup", (cls,), {"lazy": lazy})

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.commands, *(name for name in self.lazy if name not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        entry = self.lazy.get(cmd_name)
        if entry is None:
            return None
        if self._listing:
            return entry.stub()
        command = self.commands[cmd_name] = entry.load()
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True  # the commands panel lists names and help: import none
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
