"""A finished run's digest keeps one row per case in its own table, so the run screen reads
one page of cases (filtered in SQL) instead of decoding every case of the run.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_digest_cases",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("case_id", sa.String(200), nullable=False),
        sa.Column("category", sa.String(200), nullable=False),
        sa.Column("tags_json", sa.Text, nullable=False),
        sa.Column("split", sa.String(20)),
        sa.Column("expect_digest", sa.String(64)),
        sa.Column("codes", sa.Text, nullable=False),
        sa.Column("search_text", sa.Text, nullable=False),
        sa.Column("checks_json", sa.Text, nullable=False),
        sa.Column("items_json", sa.Text, nullable=False),
    )
    # Digests of the earlier layout held their cases inline; they are rebuilt on first view.
    op.execute("DELETE FROM run_digests")


def downgrade() -> None:
    op.drop_table("run_digest_cases")
    op.execute("DELETE FROM run_digests")
