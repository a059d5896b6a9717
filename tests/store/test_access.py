"""A store another process has locked, a store this user may not write, and store URLs in
messages: each is one line with the README's exit code, and the read-only commands still
read a store they may not write.

The read-only cases run caseforge as an unprivileged user. Under root (as in CI) that is
``setpriv`` to ``nobody``, on a copy of the store and suite in a folder ``nobody`` can read
but not write; otherwise the copy is made read-only with chmod. Neither is ever skipped."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.store.db import RunStore, shown_url
from tests.helpers import caseforge_process, write_toy_suite

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
CASE = {"id": "a", "input": {}, "expect": {"category": {"mode": "exact", "value": "refund"}}}
CONFIG = {"name": "access", "agent": {"callable": "tests.run.toy_agent:run"}, "trials": 1}


def write_suite(root: Path) -> Path:
    return write_toy_suite(root, [CASE], CONFIG)


def one_run(suite: Path, url: str) -> str:
    done = runner.invoke(app, ["run", str(suite), "-q", "--store", url])
    assert done.exit_code == 0, done.output
    store = RunStore(url)
    try:
        [info] = store.list_runs()
    finally:
        store.close()
    return info.id


def caseforge(*argv: str, user: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own (as ``user``, a command prefix, when given)."""
    env = {"CASEFORGE_STORE": None, "PYTHONDONTWRITEBYTECODE": "1"}
    return caseforge_process(*argv, env=env, prefix=user or (), cwd=ROOT)


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# --- a store another process holds locked ------------------------------------------------

HOLD_LOCK = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")  # the write lock, held until our stdin closes
print("locked", flush=True)
sys.stdin.read()
db.execute("ROLLBACK")
"""


def test_a_locked_store_stops_run_with_one_line_exit_5(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    db = tmp_path / "store.db"
    url = f"sqlite:///{db}"
    one_run(suite, url)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        result = caseforge("run", str(suite), "-q", "--store", url)
        line = one_line(result)
        # The store is read (WAL), so a reader is not blocked by the lock:
        listed = caseforge("runs", "--store", url, "--json")
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    assert result.returncode == 5, result.stderr
    assert line.startswith(f"{url}: the run store is locked: another process held its write")
    assert "try again when it is done" in line
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1  # nothing recorded


# --- a store this user may not write ------------------------------------------------------


@pytest.fixture
def unprivileged() -> Iterator[tuple[list[str], Path]]:
    """A command prefix that runs as a user who may read but not write the folder it
    yields (made world-readable under /tmp, which ``nobody`` can reach), and the folder."""
    folder = Path(tempfile.mkdtemp(prefix="caseforge-ro-"))
    if os.geteuid() == 0:
        assert shutil.which("setpriv"), "setpriv (util-linux) runs the test as nobody"
        user = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
    else:
        user = []
    try:
        yield user, folder
    finally:
        for path in [folder, *folder.rglob("*")]:
            if path.is_dir():
                path.chmod(stat.S_IRWXU)
        shutil.rmtree(folder)


def _lock_down(folder: Path, user: list[str]) -> None:
    """Readable and not writable by the user the test runs caseforge as."""
    for path in sorted([folder, *folder.rglob("*")], key=lambda p: -len(p.parts)):
        if user:  # root owns it: others may read and enter, not write
            path.chmod(0o755 if path.is_dir() else 0o644)
        else:  # we own it: nobody writes it, us included
            path.chmod(0o555 if path.is_dir() else 0o444)


def test_a_read_only_store_refuses_run_and_still_reads(
    tmp_path: Path, unprivileged: tuple[list[str], Path]
) -> None:
    user, folder = unprivileged
    made = tmp_path / "store.db"
    run_id = one_run(write_suite(folder / "suite"), f"sqlite:///{made}")
    shutil.copy(made, folder / "store.db")  # closed cleanly: no -wal or -shm beside it
    _lock_down(folder, user)
    url = f"sqlite:///{folder / 'store.db'}"
    before = sorted(p.name for p in folder.iterdir())

    refused = caseforge("run", str(folder / "suite"), "-q", "--store", url, user=user)
    assert refused.returncode == 5, refused.stderr
    line = one_line(refused)
    assert line.startswith(f"{url}: the run store is read-only here"), line

    for argv in (["report", "latest"], ["show", "latest"], ["runs"], ["runs", "--json"]):
        read = caseforge(*argv, "--store", url, user=user)
        assert read.returncode == 0, f"{argv}: {read.stderr}"
        assert run_id in read.stdout, f"{argv}: {read.stdout}"
        assert "Traceback" not in read.stderr
    served = caseforge_serve_read_only(url, run_id, user)
    assert served.returncode == 0 and served.stdout.strip() == "1 case(s)", served.stderr
    assert sorted(p.name for p in folder.iterdir()) == before  # no -wal, -shm, nothing


def test_a_store_folder_that_cannot_be_written_is_one_line_exit_5(
    unprivileged: tuple[list[str], Path],
) -> None:
    """Moved from tests/cli/test_mistakes.py, where it was skipped under root (as in CI) and
    ran `runs`, which reads a store and now says there is none yet instead."""
    user, folder = unprivileged
    write_suite(folder / "suite")
    (folder / "locked").mkdir()
    _lock_down(folder, user)
    url = f"sqlite:///{folder / 'locked' / 'store.db'}"
    result = caseforge("run", str(folder / "suite"), "-q", "--store", url, user=user)
    assert result.returncode == 5, result.stderr
    line = one_line(result)
    assert line.startswith(f"{url}: the run store is read-only here (its folder "), line
    assert not (folder / "locked" / "store.db").exists()


def caseforge_serve_read_only(
    url: str, run_id: str, user: list[str]
) -> subprocess.CompletedProcess[str]:
    """What ``serve --read-only`` does with a run: its store opened read-only, its digest
    built in memory (a writable store would keep it)."""
    script = (
        "import sys\n"
        "from caseforge.serve import Catalog\n"
        "catalog = Catalog.open([], sys.argv[1], read_only=True)\n"
        "digest = catalog.digest(sys.argv[2])\n"
        "print(f'{digest.report.summary.cases} case(s)')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CASEFORGE_STORE"}
    return subprocess.run(
        [*user, sys.executable, "-c", script, url, run_id],
        cwd=ROOT,
        env={**env, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_run_out_that_cannot_be_written_is_found_before_anything_runs(
    tmp_path: Path, unprivileged: tuple[list[str], Path]
) -> None:
    user, folder = unprivileged
    write_suite(folder / "suite")
    (folder / "out").mkdir()
    _lock_down(folder, user)
    writable = Path(tempfile.mkdtemp(prefix="caseforge-rw-"))
    try:
        writable.chmod(0o777)
        url = f"sqlite:///{writable / 'store.db'}"
        result = caseforge(
            "run", str(folder / "suite"), "-q", "--store", url, "--out", str(folder / "out"),
            user=user,
        )  # fmt: skip
        assert result.returncode == 5, result.stderr
        assert one_line(result).startswith(f"--out {folder / 'out'}: cannot write there")
        assert not (writable / "store.db").exists()  # no store opened, no run recorded
        assert list((folder / "out").iterdir()) == []
    finally:
        shutil.rmtree(writable)


# --- store URLs in messages ----------------------------------------------------------------

SECRET = "s3cret-pw"
PG = f"postgresql://ci:{SECRET}@127.0.0.1:1/caseforge"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (PG, "postgresql://ci:***@127.0.0.1:1/caseforge"),
        (f"postgresql+psycopg://ci:{SECRET}@db/x", "postgresql+psycopg://ci:***@db/x"),
        (f"postgresql://ci:{SECRET}@h@db/x", "postgresql://ci:***@db/x"),  # an @ in it
        (f"postgresql://ci:{SECRET}@db:notaport/x", "postgresql://ci:***@db:notaport/x"),
        (f"postgresql://ci@db/x?password={SECRET}&sslmode=off", "?password=***&sslmode=off"),
        ("sqlite:////tmp/x.db", "sqlite:////tmp/x.db"),
    ],
)
def test_shown_url_never_holds_the_password(url: str, shown: str) -> None:
    assert SECRET not in shown_url(url) and shown in shown_url(url)


@pytest.mark.parametrize(
    "argv",
    [
        ["runs"],
        ["report", "latest"],
        ["show", "latest"],
        ["compare", "r1", "r2"],
        ["baseline", "latest", "--write", "{tmp}/b.json"],
        ["gate", "latest", "--baseline", "{tmp}/b.json"],
        ["history", "{suite}"],
        ["run", "{suite}", "-q"],
        ["rescore", "latest"],
        ["label", "latest"],
        ["store", "upgrade"],
    ],
)
@pytest.mark.parametrize("how", ["--store", "CASEFORGE_STORE"])
def test_no_command_prints_a_store_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], how: str
) -> None:
    suite = write_suite(tmp_path / "suite")
    args = [a.replace("{tmp}", str(tmp_path)).replace("{suite}", str(suite)) for a in argv]
    for url in (PG, PG.replace("127.0.0.1:1", "127.0.0.1:port")):  # unreachable; unparsable
        if how == "--store":
            result = runner.invoke(app, [*args, "--store", url])
        else:
            monkeypatch.setenv("CASEFORGE_STORE", url)
            result = runner.invoke(app, args)
        assert result.exit_code in (2, 5), result.output
        assert SECRET not in result.output
        assert "ci:***@127.0.0.1" in result.output, result.output
        assert "Traceback" not in result.output
