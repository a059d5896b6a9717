"""``caseforge store upgrade``: migrate a store's schema to this caseforge's, on purpose.

A SQLite store upgrades itself when it is opened. A shared PostgreSQL store does not: the
first teammate with a newer caseforge would otherwise migrate it under everyone else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from caseforge.cli.command import App
from caseforge.cli.options import StoreOpt
from caseforge.store.db import RunStore, default_store_url, shown_url

out = Console(highlight=False, soft_wrap=True)
store_app = App(help="The run store: migrate its schema.")


@store_app.command("upgrade")
def upgrade(
    store_url: StoreOpt = None,
    suite: Annotated[
        Path | None, typer.Option("--suite", help="The store of this suite folder.")
    ] = None,
) -> None:
    """Migrate the store (default: CASEFORGE_STORE, else .caseforge/) to this caseforge's
    schema. Everyone who uses a shared store then needs this caseforge or newer."""
    url = store_url or default_store_url(suite)
    store = RunStore(url, check_schema=False)
    try:
        before, after = store.upgrade()
    finally:
        store.close()
    where = shown_url(url)
    if before == after:
        out.print(f"{where}: already at revision {after}, nothing to do", markup=False)
    else:
        out.print(f"{where}: upgraded from revision {before or 'none'} to {after}", markup=False)
