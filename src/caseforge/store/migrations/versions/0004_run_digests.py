"""A finished run's digest: what the run screen needs, stored once, so that opening a run of
100,000 case-trials does not decode every result.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_digests",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("digest_json", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("run_digests")
