"""Oracle answers kept between ``caseforge validate`` runs, under ``.caseforge/cache/oracles``.

Recomputing every oracle is most of ``validate`` on a real suite, and an unchanged suite
gives the same answers. So an answer is kept under a key that changes whenever anything
the oracle could read changes:

- the suite's *fingerprint*: the content of every file under the suite folder except its
  cases (each answer's own key holds its case's input) and caseforge's state; the
  caseforge and Python versions; and the installed packages (the modification times of
  the ``site-packages`` folders, which every install or upgrade changes);
- the files outside the suite folder (and outside the installed Python) that the oracle
  module imported, opened or connected to as a SQLite database when the answers were
  computed, each by its content (a file that was not there, by its absence): the
  workers report them (``oracle/pool.py``), the cache keeps them in a *manifest* beside
  the fingerprint, and an answer counts only while each of them is unchanged. A key that
  missed an imported helper would hide exactly the drift ``validate`` exists to find;
- the oracle's name, its arguments and the case's input.

What has no key is not kept: an answer computed after the oracle started a process or
reached the network (the workers watch for it), and an oracle's error (it may not happen
twice). Environment variables and the clock are not part of the key either; an oracle that
reads them is not deterministic, and ``--no-cache`` is the way to recompute it.

A file's content hash is reused while its size and modification time are the same (as
git does), so an unchanged suite costs a ``stat`` per file. Only the newest fingerprint's
answers are kept. The cache is an optimisation: one that cannot be read or written is
skipped, never an error. ``validate --no-cache`` recomputes everything (and refreshes it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

from caseforge._version import __version__
from caseforge.oracle.pool import OracleAnswer, OracleCall

# Folders of a suite that are not the oracle's inputs: its cases (each answer's key holds
# its case's input), caseforge's state, and tools' caches.
SKIPPED = {
    "cases", ".caseforge", "__pycache__", ".git", ".hg", ".pytest_cache", ".mypy_cache",
    ".venv", "venv", "node_modules", ".tox", ".nox",
}  # fmt: skip

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, sha TEXT);
CREATE TABLE IF NOT EXISTS manifests (base TEXT PRIMARY KEY, names TEXT, outside TEXT);
CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL);
"""


class OracleCache:
    """The answers of one suite's oracles module, keyed as the module docstring says."""

    def __init__(self, folder: Path, suite_dir: Path, module: Path) -> None:
        self.suite_dir = suite_dir.resolve()
        self.module = module.resolve()
        self.db: sqlite3.Connection | None = None
        with contextlib.suppress(OSError, sqlite3.Error):
            folder.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(folder / "answers.db", timeout=30, isolation_level=None)
            db.executescript(_SCHEMA)
            self.db = db
        self.base = self._base() if self.db is not None else ""
        self.fingerprint: str | None = None  # set once the manifest holds
        self.names: list[str] | None = None
        self.outside: set[str] = set()  # the manifest's files outside the suite

    def open(self) -> bool:
        """Whether the answers kept for this fingerprint still count (their manifest's
        outside files are unchanged); sets ``names``, the oracles the module registers."""
        row = self._one("SELECT names, outside FROM manifests WHERE base = ?", (self.base,))
        if row is None:
            return False
        names, outside = json.loads(str(row[0])), json.loads(str(row[1]))
        current = {path: self._sha(Path(path)) for path in outside}
        if current != outside:
            return False
        self.names = names
        self.outside = set(outside)
        self.fingerprint = self._fingerprint(outside)
        return True

    def get(self, call: OracleCall) -> OracleAnswer | None:
        if self.fingerprint is None:
            return None
        row = self._one("SELECT answer FROM answers WHERE key = ?", (self._key(call),))
        if row is None:
            return None
        data = json.loads(str(row[0]))
        return OracleAnswer(data["value"], data["others"], data["error"])

    def save(
        self, names: list[str], outside: set[str], answers: list[tuple[OracleCall, OracleAnswer]]
    ) -> None:
        """Keep this fingerprint's manifest and its answers (and only them)."""
        if self.db is None:
            return
        hashes = {path: self._sha(Path(path)) for path in sorted(outside)}
        fingerprint = self._fingerprint(hashes)
        rows = [
            (
                self._key(call, fingerprint),
                json.dumps({"value": a.value, "others": a.others, "error": a.error}),
            )
            for call, a in answers
            if a.cacheable
        ]
        with contextlib.suppress(sqlite3.Error), self._transaction() as db:
            if fingerprint != self.fingerprint:  # a new fingerprint: the old answers go
                db.execute("DELETE FROM answers")
                db.execute("DELETE FROM manifests")
            db.execute(
                "INSERT OR REPLACE INTO manifests VALUES (?, ?, ?)",
                (self.base, json.dumps(names), json.dumps(hashes)),
            )
            db.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?)", rows)
        self.fingerprint = fingerprint

    def close(self) -> None:
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.close()
            self.db = None

    # --- keys -------------------------------------------------------------------------------

    def _base(self) -> str:
        """The suite's own files, the module's path, the versions and the packages."""
        digest = hashlib.sha256()
        for part in (__version__, sys.version, str(self.module)):
            digest.update(part.encode() + b"\0")
        for folder in sorted(_site_folders()):
            with contextlib.suppress(OSError):
                digest.update(f"{folder}:{os.stat(folder).st_mtime_ns}\0".encode())
        self._execute("BEGIN")  # one commit for the hashes a first run stores
        for path in _suite_files(self.suite_dir):
            rel = path.relative_to(self.suite_dir).as_posix()
            digest.update(f"{rel}\0{self._sha(path)}\0".encode())
        self._execute("COMMIT")
        return digest.hexdigest()

    def _fingerprint(self, outside: dict[str, str | None]) -> str:
        digest = hashlib.sha256(self.base.encode())
        digest.update(json.dumps(outside, sort_keys=True).encode())
        return digest.hexdigest()

    def _key(self, call: OracleCall, fingerprint: str | None = None) -> str:
        what = json.dumps(
            [fingerprint or self.fingerprint, call.name, call.args, call.input],
            sort_keys=True,
            default=str,
            ensure_ascii=False,
        )
        return hashlib.sha256(what.encode()).hexdigest()

    def _sha(self, path: Path) -> str | None:
        """A file's content hash, reused while its size and time are unchanged."""
        try:
            stat = path.stat()
        except OSError:
            return None
        row = self._one("SELECT size, mtime, sha FROM files WHERE path = ?", (str(path),))
        if row is not None and row[0] == stat.st_size and row[1] == stat.st_mtime_ns:
            return str(row[2])
        digest = hashlib.sha256()
        try:
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except OSError:
            return None
        sha = digest.hexdigest()
        self._execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)",
            (str(path), stat.st_size, stat.st_mtime_ns, sha),
        )
        return sha

    def _execute(self, sql: str, args: tuple[object, ...] = ()) -> None:
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute(sql, args)

    def _one(self, sql: str, args: tuple[object, ...]) -> tuple[object, ...] | None:
        if self.db is None:
            return None
        try:
            row: tuple[object, ...] | None = self.db.execute(sql, args).fetchone()
        except sqlite3.Error:
            return None
        return row

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        assert self.db is not None
        self.db.execute("BEGIN")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")


def _suite_files(suite_dir: Path) -> Iterator[Path]:
    """Every file of the suite folder the oracle may read, in a stable order."""
    for folder, dirs, files in os.walk(suite_dir):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        for name in sorted(files):
            if not name.endswith((".pyc", ".swp", "~")) and not name.startswith(".#"):
                yield Path(folder) / name


def _site_folders() -> set[str]:
    return {
        p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)
    }
