"""The ``caseforge`` command line. Commands are thin: parse, call the library, print."""

from __future__ import annotations

import sys

from caseforge.cli.app import app
from caseforge.errors import CaseforgeError


def main() -> None:
    """Entry point: a user mistake prints one-line errors and exits 1 (5 for an environment
    error), never a traceback."""
    try:
        app()
    except CaseforgeError as exc:
        print(exc.text, file=sys.stderr)
        sys.exit(exc.exit_code)


__all__ = ["app", "main"]
