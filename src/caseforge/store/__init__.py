"""The run store: runs, their case snapshots and results, behind SQLAlchemy and Alembic.

Names are imported on first use, so importing one module of the package does not
load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.store.db import RunStore as RunStore

_WHERE = {
    "RunStore": "caseforge.store.db",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.store", _WHERE)
