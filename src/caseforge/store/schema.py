"""The store's tables as the code expects them at the newest migration.

The schema is owned by the migrations in ``store/migrations/versions``: change a table here
*and* add a migration (``alembic -c src/caseforge/store/alembic.ini revision -m "…"``), never
one without the other. ``tests/store/test_migrations.py`` proves the two agree.
"""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Float, Integer, MetaData, String, Table, Text

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("suite", String(200), nullable=False, index=True),
    Column("suite_path", Text, nullable=False),
    Column("suite_identity", Text),  # JSON of case.identity.SuiteIdentity (migration 0002)
    Column("group_id", String(64), nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("finished_at", String(40)),
    Column("status", String(20), nullable=False),
    Column("dataset_commit", String(64)),
    Column("dataset_dirty", Boolean),
    Column("agent", Text, nullable=False),
    Column("config_name", String(200)),
    Column("config_json", Text, nullable=False),
    Column("trials", Integer, nullable=False),
    Column("split", String(10), nullable=False),
    Column("caseforge_version", String(40), nullable=False),
    Column("options_json", Text, nullable=False),
)

run_cases = Table(
    "run_cases",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("case_id", String(200), primary_key=True),
    Column("case_json", Text, nullable=False),
)

results = Table(
    "results",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("case_id", String(200), primary_key=True),
    Column("trial", Integer, primary_key=True),
    Column("status", String(20), nullable=False),
    Column("error", Text),
    Column("latency_s", Float, nullable=False),
    Column("cost_usd", Float, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("response_json", Text),
    Column("outcomes_json", Text),
    Column("checks_json", Text, nullable=False),
    Column("finished_at", String(40), nullable=False),
    Column("fixtures_json", Text),  # the trial's fixture use (migration 0003)
    Column("log_json", Text),  # what the agent's side wrote: {text, dropped} (migration 0007)
    Column("spans_json", Text),  # the agent's OpenTelemetry spans: {spans, dropped} (0008)
)


run_digests = Table(
    "run_digests",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("digest_json", Text, nullable=False),  # compare.digest.RunDigest (migration 0004)
)


# One row per case of a digest, in the run's case order (migration 0005). ``codes`` has one
# letter per trial (P pass, F fail, E error, I incomplete), so the grid's filters are SQL.
run_digest_cases = Table(
    "run_digest_cases",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("case_id", String(200), nullable=False),
    Column("category", String(200), nullable=False),
    Column("tags_json", Text, nullable=False),
    Column("split", String(20)),
    Column("expect_digest", String(64)),
    Column("codes", Text, nullable=False),
    Column("search_text", Text, nullable=False),
    Column("checks_json", Text, nullable=False),
    Column("items_json", Text, nullable=False),
)


# The shard ledger (migration 0006): each shard of a run split with --shard I/N, and its
# state (running, stopped, finished). The run is finished when all N of its shards are.
run_shards = Table(
    "run_shards",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("shard", Integer, primary_key=True),
    Column("shards", Integer, nullable=False),
    Column("status", String(20), nullable=False),
    Column("host", String(200)),
    Column("started_at", String(40), nullable=False),
    Column("finished_at", String(40)),
)
