"""Per-trial workspace of the support-refund suite: a fresh database, and what was left in it.

``prepare`` (the suite's ``workspace_setup``) copies a seeded CloudLedger database into
the trial folder. The database is seeded once per process into a template file by
``data/seed.py`` and copied per trial, which is a plain file copy.

``probe`` (the suite's ``outcome_probe``) reads the refund requests waiting for a
supervisor's approval from the trial's copy: ``None`` when there are none, one
``{"invoice_id", "amount_yuan"}`` dict when there is one, a list of them when several.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import sqlite3
import sys
import tempfile
import threading
from contextlib import closing
from pathlib import Path
from types import ModuleType
from typing import Any

from cloudledger_agent.tools import DB_NAME

SUITE_DIR = Path(__file__).resolve().parent.parent
SEED_PATH = SUITE_DIR / "data" / "seed.py"
_SEED_MODULE = "cloudledger_agent_seed_data"

_lock = threading.Lock()
_template: Path | None = None


def _load_seed() -> ModuleType:
    """Import ``data/seed.py`` by path, under a module name no other suite uses."""
    if _SEED_MODULE in sys.modules:
        return sys.modules[_SEED_MODULE]
    spec = importlib.util.spec_from_file_location(_SEED_MODULE, SEED_PATH)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {SEED_PATH}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_SEED_MODULE] = module  # dataclasses look their module up while it runs
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_SEED_MODULE]
        raise
    return module


def _remove_template(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def template_db() -> Path:
    """The seeded database of this process (built on first use, rebuilt if it vanished)."""
    global _template
    with _lock:
        if _template is not None and _template.is_file():
            return _template
        seed = _load_seed()
        folder = Path(tempfile.mkdtemp(prefix="cloudledger-template-"))
        atexit.register(_remove_template, folder)
        path = folder / DB_NAME
        with closing(sqlite3.connect(path)) as conn:
            seed.build(conn)
        _template = path
        return path


def prepare(workspace: Path, case: Any = None) -> None:
    """Put a fresh copy of the seeded database at ``workspace / "cloudledger.db"``."""
    workspace = Path(workspace)
    workspace.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template_db(), workspace / DB_NAME)


def pending_refunds(db_path: Path) -> list[dict[str, Any]]:
    """The ``pending_approval`` refund requests in a database, oldest first."""
    if not db_path.is_file():
        return []
    with closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            "SELECT invoice_id, amount_cents FROM refund_requests"
            " WHERE status = 'pending_approval' ORDER BY id"
        ).fetchall()
    return [{"invoice_id": inv, "amount_yuan": round(cents / 100, 2)} for inv, cents in rows]


def probe(workspace: Path, result: Any = None, case: Any = None) -> dict[str, Any]:
    """``{"refund": X}``: the pending refund requests the trial left (None, one, or a list)."""
    rows = pending_refunds(Path(workspace) / DB_NAME)
    refund: Any = None if not rows else rows[0] if len(rows) == 1 else rows
    return {"refund": refund}
