"""Each stored case-trial keeps the agent's OpenTelemetry spans: ``{"spans": [...],
"dropped": N}``, the spans as ``caseforge.tracing.spans.SpanData`` (ids, name, times,
status, attributes, events), at most 2,000 of them, and how many more were dropped. Rows
written before have none (null), as does a case-trial whose agent sent no span.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("spans_json", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("spans_json")
