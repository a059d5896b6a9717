"""Options shared by several commands: where the run store is."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from caseforge.case.load import require_suite_folder
from caseforge.errors import UsageError
from caseforge.store.db import default_store_url

StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Run store URL (default: CASEFORGE_STORE, else .caseforge/ at the git top).",
    ),
]
StoreSuiteOpt = Annotated[
    Path | None,
    typer.Option(
        "--suite",
        help="Read runs from this suite's store (default: the current directory's).",
    ),
]


def store_url(store: str | None, suite: Path | None) -> str | None:
    """The store a command that takes a RUN opens: ``--store``, else the ``--suite`` folder's
    store, else (None) the default one of the current directory."""
    if store:
        return store
    if suite is None:
        return None
    require_suite_folder(suite)  # `--suite nowhere` says so, not "no runs in the store"
    return default_store_url(suite)


def output_file(path: Path | None, flag: str) -> Path | None:
    """A file the user named to write: a folder there is a usage error, said before any work."""
    if path is not None and path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; name a file to write")
    return path
