"""Options shared by several commands: where the run store is."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from caseforge.case.load import require_suite_folder
from caseforge.errors import EnvError, UsageError
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


def output_folder(path: Path | None, flag: str) -> None:
    """A folder the user named for files written after a long run: made now (and its
    writing tried), so a folder that cannot be written is said before any case-trial runs
    or any run is recorded. A path that is a file, or runs through one, is a usage error
    (2); a folder that cannot be made or written, an environment one (5)."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: is a file; name a folder for report.json")
    made = [p for p in (path, *path.parents) if not p.exists()]
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".caseforge-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except (FileExistsError, NotADirectoryError):
        raise UsageError(f"{flag} {path}: a file is in the way; name a folder") from None
    except OSError as exc:
        for folder in made:  # leave nothing behind: only the folders made here, if empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise EnvError(f"{flag} {path}: cannot write there: {exc.strerror or exc}") from None


def output_file(path: Path | None, flag: str) -> Path | None:
    """A file the user named to write: a folder there is a usage error, said before any work."""
    if path is not None and path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; name a file to write")
    return path
