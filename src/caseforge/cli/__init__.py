"""The ``caseforge`` command line. Commands are thin: parse, call the library, print.

A ``CaseforgeError`` raised by a command becomes its one-line message and its exit code in
one place, :class:`caseforge.cli.command.App`.
"""

from __future__ import annotations

from caseforge.cli.app import app


def main() -> None:
    """The ``caseforge`` entry point: SIGINT and SIGTERM handled (``cli/signals.py``),
    then the command."""
    from caseforge.cli.signals import install

    install()
    app()


__all__ = ["app", "main"]
