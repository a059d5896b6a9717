"""The store as it stood when migrations took over: runs, run_cases and results.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("suite", sa.String(200), nullable=False),
        sa.Column("suite_path", sa.Text, nullable=False),
        sa.Column("group_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.String(40)),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("dataset_commit", sa.String(64)),
        sa.Column("dataset_dirty", sa.Boolean),
        sa.Column("agent", sa.Text, nullable=False),
        sa.Column("config_name", sa.String(200)),
        sa.Column("config_json", sa.Text, nullable=False),
        sa.Column("trials", sa.Integer, nullable=False),
        sa.Column("split", sa.String(10), nullable=False),
        sa.Column("caseforge_version", sa.String(40), nullable=False),
        sa.Column("options_json", sa.Text, nullable=False),
    )
    op.create_index("ix_runs_suite", "runs", ["suite"])
    op.create_table(
        "run_cases",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("case_id", sa.String(200), primary_key=True),
        sa.Column("case_json", sa.Text, nullable=False),
    )
    op.create_table(
        "results",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("case_id", sa.String(200), primary_key=True),
        sa.Column("trial", sa.Integer, primary_key=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("latency_s", sa.Float, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("response_json", sa.Text),
        sa.Column("outcomes_json", sa.Text),
        sa.Column("checks_json", sa.Text, nullable=False),
        sa.Column("finished_at", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("results")
    op.drop_table("run_cases")
    op.drop_table("runs")
