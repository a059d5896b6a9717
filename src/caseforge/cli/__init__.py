"""The ``caseforge`` command line. Commands are thin: parse, call the library, print.

A ``CaseforgeError`` raised by a command becomes its one-line message and its exit code in
one place, :class:`caseforge.cli.command.App`. Each command's module is imported only when
that command runs (``cli/root.py``), so start-up costs what the command needs.
"""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caseforge.cli.root import app


def main() -> None:
    """The ``caseforge`` entry point: SIGINT and SIGTERM handled (``cli/signals.py``),
    then the command."""
    if sys.argv[1:] == ["--version"]:  # asked for by scripts and checks: no parser needed
        from caseforge._version import __version__

        print(f"caseforge {__version__}")
        return
    # A command is one short process that builds many objects and frees few: collecting
    # every 700 allocations (Python's default) cost a 2,000-case run a sixth of its time.
    gc.set_threshold(20_000, 50, 50)
    from caseforge.cli.root import app
    from caseforge.cli.signals import install
    from caseforge.errors import Interrupted

    install()
    try:
        app()
    except Interrupted as stop:  # a signal outside any command (while parsing, say)
        sys.stderr.write(stop.text + "\n")
        sys.exit(stop.exit_code)


def __getattr__(name: str) -> object:
    if name == "app":  # the typer app, imported when first asked for
        from caseforge.cli.root import app

        return app
    raise AttributeError(f"module 'caseforge.cli' has no attribute {name!r}")


__all__ = ["app", "main"]
