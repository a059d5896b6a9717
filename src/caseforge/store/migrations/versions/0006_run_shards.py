"""The shard ledger: one row per shard of a run split with ``--shard I/N``, so the run is
finished only when every one of its N shards is.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_shards",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("shard", sa.Integer, primary_key=True),
        sa.Column("shards", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("host", sa.String(200)),
        sa.Column("started_at", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.String(40)),
    )


def downgrade() -> None:
    op.drop_table("run_shards")
