"""A shared PostgreSQL store: created when empty, migrated only by `caseforge store upgrade`,
a newer one refused, and connection problems in one line that never shows the password."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.errors import EnvError
from caseforge.store import migrate
from caseforge.store.db import RunStore
from tests.helpers import caseforge_process, free_port
from tests.postgres import Cluster

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _revision(url: str) -> str | None:
    store = RunStore(url, check_schema=False)
    try:
        return migrate.current_revision(store.engine)
    finally:
        store.close()


def _downgrade(url: str, revision: str) -> None:
    from alembic import command

    store = RunStore(url)
    with store.engine.begin() as conn:
        command.downgrade(migrate._config(conn), revision)
    store.close()


def test_an_empty_database_gets_the_tables_when_first_opened(pg_url: str) -> None:
    RunStore(pg_url).close()
    assert _revision(pg_url) == migrate.head_revision()


def test_an_older_shared_store_is_refused_until_store_upgrade(pg_url: str) -> None:
    _downgrade(pg_url, "0004")
    with pytest.raises(EnvError) as refused:
        RunStore(pg_url)
    message = str(refused.value)
    assert "revision 0004" in message and "caseforge store upgrade" in message
    assert _revision(pg_url) == "0004"  # refused, not migrated under the team
    upgraded = runner.invoke(app, ["store", "upgrade", "--store", pg_url])
    assert upgraded.exit_code == 0, upgraded.output
    assert f"upgraded from revision 0004 to {migrate.head_revision()}" in upgraded.output
    assert "***" in upgraded.output and pg_url.split(":")[2].split("@")[0] not in upgraded.output
    RunStore(pg_url).close()  # now it opens
    again = runner.invoke(app, ["store", "upgrade", "--store", pg_url])
    assert "nothing to do" in again.output


def test_a_store_from_a_newer_caseforge_is_refused_even_by_upgrade(pg_url: str) -> None:
    store = RunStore(pg_url)
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    store.close()
    for argv in (["runs", "--store", pg_url], ["store", "upgrade", "--store", pg_url]):
        result = runner.invoke(app, argv)
        assert result.exit_code == 5, result.output
        assert "written by a newer caseforge" in result.output
    assert _revision(pg_url) == "9999"


def test_every_migration_goes_down_and_up_again_on_postgresql(pg_url: str) -> None:
    _downgrade(pg_url, "base")
    store = RunStore(pg_url, check_schema=False)
    with store.engine.connect() as conn:
        assert set(conn.dialect.get_table_names(conn)) <= {"alembic_version"}
    store.close()
    RunStore(pg_url).close()  # an empty database again: created
    assert _revision(pg_url) == migrate.head_revision()


def test_processes_opening_a_new_shared_store_at_once_all_get_it(pg_url: str) -> None:
    code = (
        "import sys; from caseforge.store.db import RunStore; "
        "s = RunStore(sys.argv[1]); s.list_runs(); s.close()"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code, pg_url], env=env, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    ended = [(p.wait(timeout=120), p.communicate()[1].decode()) for p in procs]
    assert [code for code, _ in ended] == [0, 0, 0, 0], [err for _, err in ended]
    assert _revision(pg_url) == migrate.head_revision()


def test_a_store_another_process_created_while_we_looked_is_opened(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race the test above can lose: our first read of the revision came before the
    # other process's commit (none yet), our look for the tables after it (there).
    from sqlalchemy import create_engine

    RunStore(pg_url).close()  # the other process: tables and revision, committed
    real = migrate.current_revision
    reads = []

    def first_before_the_commit(engine: object) -> str | None:
        reads.append(engine)
        return None if len(reads) == 1 else real(engine)  # type: ignore[arg-type]

    monkeypatch.setattr(migrate, "current_revision", first_before_the_commit)
    engine = create_engine(pg_url)
    try:
        migrate.require_current(engine, pg_url)  # it was refused as "pre-migration"
    finally:
        engine.dispose()
    assert len(reads) == 2


@pytest.mark.parametrize("problem", ["wrong password", "nothing listening", "no database"])
def test_connection_problems_are_one_line_exit_5_without_the_password(
    pg_cluster: Cluster, problem: str
) -> None:
    secret = "s3cret-" + pg_cluster.password[-4:]
    port = pg_cluster.port
    if problem == "wrong password":
        url = f"postgresql://postgres:{secret}@127.0.0.1:{port}/postgres"
        says = "password authentication failed"
    elif problem == "nothing listening":
        port = free_port()
        url = f"postgresql://postgres:{secret}@127.0.0.1:{port}/postgres"
        says = "127.0.0.1"
    else:
        url = f"postgresql://postgres:{pg_cluster.password}@127.0.0.1:{port}/nowhere"
        secret = pg_cluster.password
        says = "nowhere"
    done = caseforge_process("runs", "--store", url)
    output = done.stdout + done.stderr
    assert done.returncode == 5, output
    assert "Traceback" not in output and secret not in output
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert says in lines[0] and f"127.0.0.1:{port}" in lines[0]
