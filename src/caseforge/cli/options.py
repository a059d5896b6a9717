"""Options shared by several commands: where the run store is (the library's own
``store_url``, ``output_folder`` and ``output_file`` are re-exported for the commands)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from caseforge.files import output_file, output_folder
from caseforge.store.db import store_url

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


__all__ = ["StoreOpt", "StoreSuiteOpt", "output_file", "output_folder", "store_url"]
