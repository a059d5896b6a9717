"""The store's schema is owned by migrations: fresh, legacy and newer stores."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine

from caseforge.errors import CaseforgeError
from caseforge.store import migrate
from caseforge.store.db import RunStore
from caseforge.store.schema import metadata
from tests.helpers import caseforge_process


def schema_diff(url: str) -> list[object]:
    engine = create_engine(url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    engine.dispose()
    return list(diff)


def test_a_fresh_store_is_migrated_to_head_and_matches_the_tables(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    store = RunStore(url)
    assert migrate.current_revision(store.engine) == migrate.head_revision()
    store.close()
    assert schema_diff(url) == []


def test_a_store_from_before_migrations_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "legacy.db"
    url = f"sqlite:///{path}"
    engine = create_engine(url)
    metadata.create_all(engine)
    engine.dispose()
    with sqlite3.connect(path) as db:  # an old store: no outcomes column, one run already in
        db.execute("ALTER TABLE results DROP COLUMN outcomes_json")
        db.execute("ALTER TABLE runs DROP COLUMN suite_identity")  # added by migration 0002
        db.execute("ALTER TABLE results DROP COLUMN fixtures_json")  # added by migration 0003
        db.execute("DROP TABLE run_digests")  # added by migration 0004
        db.execute("DROP TABLE run_digest_cases")  # added by migration 0005
        db.execute("DROP TABLE run_shards")  # added by migration 0006
        db.execute("ALTER TABLE results DROP COLUMN log_json")  # added by migration 0007
        db.execute("ALTER TABLE results DROP COLUMN spans_json")  # added by migration 0008
        db.execute(
            "INSERT INTO runs (id, suite, suite_path, group_id, created_at, status, agent,"
            " config_json, trials, split, caseforge_version, options_json)"
            " VALUES ('r1', 's', '/s', 'r1', '2026-01-01', 'finished', 'a', '{}', 1, 'dev',"
            " '0.0.1', '{}')"
        )
    store = RunStore(url)
    assert store.get_run("r1").suite == "s"  # the data survived
    assert migrate.current_revision(store.engine) == migrate.head_revision()
    store.close()
    assert schema_diff(url) == []


def test_a_store_written_by_a_newer_caseforge_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    url = f"sqlite:///{path}"
    RunStore(url).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    with pytest.raises(CaseforgeError) as raised:
        RunStore(url)
    assert raised.value.exit_code == 5
    assert "9999_from_the_future" in str(raised.value) and "newer caseforge" in str(raised.value)

    result = caseforge_process("runs", "--store", url)
    assert result.returncode == 5
    assert "newer caseforge" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    with sqlite3.connect(path) as db:  # refused, not touched
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [
            ("9999_from_the_future",)
        ]


def test_opening_an_up_to_date_store_runs_no_migration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    RunStore(url).close()
    import alembic.command

    def boom(*_args: object, **_kw: object) -> None:
        raise AssertionError("upgrade ran on an up-to-date store")

    monkeypatch.setattr(alembic.command, "upgrade", boom)
    RunStore(url).close()


def test_every_migration_has_a_downgrade_back_to_empty(tmp_path: Path) -> None:
    from alembic import command

    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = RunStore(url)
    with store.engine.begin() as conn:
        command.downgrade(migrate._config(conn), "base")
    with store.engine.connect() as conn:
        tables = set(conn.dialect.get_table_names(conn))
    assert tables <= {"alembic_version"}
    with store.engine.begin() as conn:  # and back up again, migration by migration
        command.upgrade(migrate._config(conn), "head")
    store.close()
    assert schema_diff(url) == []


def test_processes_opening_a_new_store_at_once_all_get_a_migrated_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    code = (
        "import sys; from caseforge.store.db import RunStore; "
        "s = RunStore(sys.argv[1]); s.list_runs(); s.close()"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, url]) for _ in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    assert schema_diff(url) == []


def test_the_revisions_read_without_alembic_are_alembics() -> None:
    """Opening a store reads the migration files itself (alembic is imported only to
    migrate): what it reads must be what alembic reads."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(migrate._config())
    assert migrate.head_revision() == script.get_current_head()
    assert migrate.known_revisions() == {rev.revision for rev in script.walk_revisions()}


def test_the_migrations_build_what_a_new_store_is_given(store_url: str) -> None:
    """A new, empty store is given the newest tables at once (no alembic); every migration
    in turn, from nothing, must build exactly those, on SQLite and on PostgreSQL."""
    from alembic import command

    engine = create_engine(store_url)
    with engine.begin() as conn:
        command.upgrade(migrate._config(conn), "head")
    engine.dispose()
    assert schema_diff(store_url) == []
    fresh = RunStore(store_url)  # opened as it is: already at head
    assert migrate.current_revision(fresh.engine) == migrate.head_revision()
    fresh.close()
