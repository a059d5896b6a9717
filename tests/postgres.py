"""A throw-away PostgreSQL cluster on loopback for the tests, one per test session.

Debian's `postgresql` package (which `.ci/run` installs) gives the server binaries under
/usr/lib/postgresql/*/bin. initdb refuses to run as root, so as root the cluster is made
and run as the `postgres` user (`runuser -u postgres`). The server listens on 127.0.0.1 at
a free port, with password (SCRAM) authentication, fsync off, and its socket in the
cluster's own folder. It is stopped when the session ends.

Without the binaries the PostgreSQL tests are skipped, except under `CI=true`, where a
missing server is a failure.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import free_port

PASSWORD = "pg-" + secrets.token_hex(6)  # each session's own; tests check it never shows


@dataclass(frozen=True)
class Cluster:
    host: str
    port: int
    password: str
    bindir: Path

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        return f"postgresql+psycopg://{user}:{self.password}@{self.host}:{self.port}/{database}"

    def sql(self, statement: str, database: str = "postgres") -> None:
        """Run one statement as the superuser (outside a transaction: CREATE DATABASE)."""
        import psycopg

        with psycopg.connect(
            host=self.host, port=self.port, user="postgres", password=self.password,
            dbname=database, autocommit=True,
        ) as conn:  # fmt: skip
            conn.execute(statement)  # type: ignore[arg-type]


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if found:
        return Path(found[0]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_postgres(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL is needed in CI: {why} (.ci/run installs `postgresql`)")
    pytest.skip(f"PostgreSQL not available: {why}")


def start_cluster() -> Iterator[Cluster]:
    """Start the cluster, yield it, and stop it."""
    bindir = _bindir()
    if bindir is None:
        _unavailable("no initdb under /usr/lib/postgresql/*/bin or on PATH")
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("the psycopg driver is not installed (pip install -e '.[dev]')")
        return
    root = Path(tempfile.mkdtemp(prefix="caseforge-pg-"))
    data, password_file = root / "data", root / "password"
    password_file.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(password_file, "postgres")
    run = lambda argv: subprocess.run(  # noqa: E731
        _as_postgres(argv), check=True, capture_output=True, text=True
    )
    port = free_port()
    try:
        run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "scram-sha-256",
             f"--pwfile={password_file}", "--no-sync", "-E", "UTF8"])  # fmt: skip
        options = (
            f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        run([str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l",
             str(root / "server.log"), "-w", "-t", "60", "start"])  # fmt: skip
    except subprocess.CalledProcessError as exc:
        log = root / "server.log"
        detail = (exc.stderr or exc.stdout or "").strip().splitlines()[-1:] or [""]
        tail = log.read_text()[-500:] if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        _unavailable(f"the server did not start: {detail[0]} {tail}".strip())
        return
    cluster = Cluster("127.0.0.1", port, PASSWORD, bindir)
    try:
        yield cluster
    finally:
        subprocess.run(
            _as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            check=False,
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(cluster: Cluster) -> str:
    """A new empty database in the cluster; its URL."""
    name = f"t_{secrets.token_hex(5)}"
    cluster.sql(f"CREATE DATABASE {name}")
    return cluster.url(name)
