"""Bring a store's schema to the code's newest migration when it is opened.

A store with no ``alembic_version`` table but with caseforge's tables was written before
migrations took over: its missing nullable columns are added and it is stamped with the
baseline revision, then upgraded like any other. A store whose revision the code does not
know was written by a newer caseforge and is refused rather than guessed at.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine

from caseforge.errors import EnvError
from caseforge.store.schema import metadata

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).with_name("migrations")
BASELINE = "0001"
_REVISION = re.compile(r"^revision = [\"']([^\"']+)[\"']", re.M)
_DOWN = re.compile(r"^down_revision = (?:[\"']([^\"']+)[\"']|None)", re.M)


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config  # alembic itself only when a store is migrated

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@cache
def _revisions() -> dict[str, str | None]:
    """Each migration's revision and the one it revises, read from the migration files
    (opening a store needs only these; alembic, 0.1 s to import, only to migrate one). A
    test holds them to alembic's own reading."""
    found: dict[str, str | None] = {}
    for path in sorted((MIGRATIONS / "versions").glob("*.py")):
        text_ = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text_), _DOWN.search(text_)
        assert revision is not None and down is not None, f"{path}: no revision line"
        found[revision.group(1)] = down.group(1)
    return found


@cache
def head_revision() -> str:
    """The newest migration this caseforge ships: the one no other revises."""
    revisions = _revisions()
    revised = {down for down in revisions.values() if down is not None}
    [head] = [rev for rev in revisions if rev not in revised]
    return head


@cache
def known_revisions() -> frozenset[str]:
    return frozenset(_revisions())


def current_revision(engine: Engine) -> str | None:
    """The revision a store is at (None: no ``alembic_version`` table, or no row)."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
        return str(row[0]) if row is not None else None


def _refuse_newer(current: str | None, url: str) -> None:
    if current is not None and current not in known_revisions():
        raise EnvError(
            f"{url}: the store's schema is at revision {current!r}, which this caseforge "
            f"does not know (it knows up to {head_revision()!r}): it was written by a newer "
            "caseforge. Upgrade caseforge, or point CASEFORGE_STORE at another store."
        )


def require_current(engine: Engine, url: str) -> None:
    """A shared store (PostgreSQL) is used as it is: at the code's revision it opens; an
    empty database gets caseforge's tables, since nobody can be locked out of it yet; an
    older one is refused until ``caseforge store upgrade`` migrates it for the whole team,
    so that the first teammate with a newer caseforge does not migrate it under the others."""
    current = current_revision(engine)
    if current == head_revision():
        return
    # Another process may be creating the tables right now. Its tables and its revision
    # become visible together, when its transaction commits: so look for the tables first,
    # then read the revision again. Read the other way round, a store created in between
    # looked like a pre-migration one, and was refused.
    with engine.connect() as conn:
        has_tables = inspect(conn).has_table("runs")
    current = current_revision(engine)
    if current == head_revision():
        return
    _refuse_newer(current, url)
    empty = current is None and not has_tables
    if empty:
        upgrade(engine, url)
        return
    raise EnvError(
        f"{url}: the shared store's schema is at revision {current or 'none (pre-migration)'}"
        f" and this caseforge needs {head_revision()}: migrate it once for the team with "
        "`caseforge store upgrade --store URL` (teammates then need this caseforge or newer)"
    )


def upgrade(engine: Engine, url: str) -> tuple[str | None, str]:
    """Upgrade the store at ``engine`` to :func:`head_revision`, or refuse a newer one;
    the revisions before and after."""
    current = current_revision(engine)
    if current == head_revision():
        return current, current
    _refuse_newer(current, url)
    # Shards and second terminals open the same store at once: one migrates, the others
    # wait for it and then find the store at head.
    with _migration_lock(engine):
        current = current_revision(engine)
        if current == head_revision():
            return current, current
        with engine.begin() as conn:
            if current is None and not inspect(conn).has_table("runs"):
                # A new, empty store gets the newest schema at once (as every migration in
                # turn would leave it: tests/store/test_migrations.py holds the two equal),
                # without importing alembic: a first run pays 0.02 s, not 0.15 s.
                metadata.create_all(conn)
                conn.execute(
                    text("CREATE TABLE IF NOT EXISTS alembic_version "
                         "(version_num VARCHAR(32) NOT NULL PRIMARY KEY)")
                )  # fmt: skip
                conn.execute(
                    text("INSERT INTO alembic_version (version_num) VALUES (:head)"),
                    {"head": head_revision()},
                )
                return current, head_revision()
            from alembic import command

            if current is None:  # caseforge's tables from before migrations took over
                _add_missing_columns(conn)
                command.stamp(_config(conn), BASELINE)
            command.upgrade(_config(conn), "head")
    return current, head_revision()


@contextlib.contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """Hold a lock that only one migrating process gets at a time.

    SQLite runs DDL outside the transaction pysqlite opens, so two processes could each see
    half of the other's migration; a lock file beside the database serialises them. Other
    databases take an advisory lock where they have one.
    """
    if engine.dialect.name == "sqlite":
        database = engine.url.database
        if not database or database == ":memory:":
            yield
            return
        import fcntl

        with open(f"{database}.migrate-lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(hashtext('caseforge-migrate'))"))
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(hashtext('caseforge-migrate'))"))
                conn.commit()
        return
    yield


def _add_missing_columns(conn: Connection) -> None:
    """Columns added (all nullable) before migrations existed, missing from older stores.

    Only the baseline's columns: later ones are their own migrations' to add.
    """
    inspector = inspect(conn)
    baseline = _baseline_columns()
    for table in metadata.sorted_tables:
        if not inspector.has_table(table.name):
            continue
        present = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            wanted = column.name in baseline.get(table.name, set())
            if wanted and column.name not in present and column.nullable:
                kind = column.type.compile(dialect=conn.dialect)
                conn.execute(text(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}'))


@cache
def _baseline_columns() -> dict[str, set[str]]:
    """Each table's columns as the baseline migration creates them (on a scratch database)."""
    from alembic import command
    from sqlalchemy import create_engine

    scratch = create_engine("sqlite://")
    with scratch.begin() as conn:
        command.upgrade(_config(conn), BASELINE)
        inspector = inspect(conn)
        found = {
            t: {c["name"] for c in inspector.get_columns(t)} for t in inspector.get_table_names()
        }
    scratch.dispose()
    return found
