"""``caseforge store upgrade``: migrate a store's schema to this caseforge's, on purpose;
``caseforge store prune``: remove old runs.

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
store_app = App(help="The run store: migrate its schema, prune old runs.")


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


@store_app.command("prune")
def prune(
    keep: Annotated[
        int | None,
        typer.Option(
            "--keep", metavar="N", help="Keep the newest N finished runs of each suite and config."
        ),
    ] = None,
    older_than: Annotated[
        float | None,
        typer.Option("--older-than", metavar="DAYS", help="Remove runs started DAYS days ago."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")
    ] = False,
    baseline: Annotated[
        list[Path] | None,
        typer.Option(
            "--baseline",
            metavar="FILE",
            help="Keep this baseline's run too (repeatable; the suites' own are always kept).",
        ),
    ] = None,
    store_url: StoreOpt = None,
    suite: Annotated[
        Path | None, typer.Option("--suite", help="The store of this suite folder.")
    ] = None,
) -> None:
    """Remove old runs from the store: never an unfinished run, never a baseline's run (those
    given with --baseline, and every baseline file in the folders of the store's suites)."""
    from caseforge.compare.retention import plan_prune, plan_text
    from caseforge.compare.retention import prune as remove

    url = store_url or default_store_url(suite)
    store = RunStore(url, create=False)
    try:
        plan = plan_prune(store, keep, older_than, list(baseline or []))
        if not dry_run:
            remove(store, plan)
    finally:
        store.close()
    out.print(plan_text(plan, dry_run, shown_url(url)), markup=False)
