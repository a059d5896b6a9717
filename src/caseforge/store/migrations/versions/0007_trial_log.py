"""Each stored case-trial keeps what the agent's side wrote: a command agent's stderr, an
in-process agent's prints (the head and tail of each, and how many bytes were dropped).

A check's ``actual`` is kept to 2 KB from here on, with ``actual_bytes`` and ``actual_ref``
naming its full size and where the whole value is (the trial's stored response); rows
written before keep their full ``actual``, and every reader takes both shapes, so the
upgrade rewrites no row.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("log_json", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("log_json")
