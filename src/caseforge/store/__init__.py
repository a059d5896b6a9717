"""The run store: runs, their case snapshots and results, behind SQLAlchemy and Alembic."""

from caseforge.store.db import RunStore

__all__ = ["RunStore"]
