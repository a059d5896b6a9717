"""The run store: runs, the cases as they were, and every case-trial's raw response and grades.

SQLite by default (``.caseforge/caseforge.db`` at the top of the git work tree, which is
git-ignored); any SQLAlchemy URL works (``CASEFORGE_STORE=postgresql://…``). Results are
written in batches as they finish, so a crash loses at most the last batch, and
``--resume`` re-runs only the case-trials that were never written.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Required, TypedDict, Unpack, cast
from urllib.parse import quote

from sqlalchemy import (
    create_engine,
    delete,
    event,
    func,
    insert,
    literal,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.engine import Connection, Engine, ExceptionContext, RowMapping, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, NoSuchModuleError
from sqlalchemy.sql.elements import ColumnElement

from caseforge.case.identity import SuiteIdentity
from caseforge.case.load import require_suite_folder
from caseforge.errors import EnvError, UsageError
from caseforge.jsontypes import JSONObject
from caseforge.paths import STATE_DIR, ensure_state_dir, suite_paths
from caseforge.results.records import ResultRow
from caseforge.store import migrate
from caseforge.store.schema import (
    results,
    run_cases,
    run_digest_cases,
    run_digests,
    run_shards,
    runs,
)

if TYPE_CHECKING:
    from sqlalchemy import Table

UNFINISHED = ("running", "stopped")


class NewRun(TypedDict, total=False):
    """What :meth:`RunStore.create_run` records of a new run (the ``runs`` columns; ``id``
    and ``group_id`` default to a new id, ``config`` and ``options`` are stored as JSON)."""

    id: str
    suite: Required[str]
    suite_path: Required[str]
    suite_identity: SuiteIdentity | None
    group_id: str
    dataset_commit: str | None
    dataset_dirty: bool | None
    agent: Required[str]
    config_name: str | None
    config: Mapping[str, object]
    trials: Required[int]
    split: Required[str]
    caseforge_version: Required[str]
    options: Mapping[str, object]


class ShardRow(TypedDict):
    """One row of the shard ledger (``run_shards``)."""

    run_id: str
    shard: int
    shards: int
    status: str
    host: str | None
    started_at: str
    finished_at: str | None


class DigestCaseColumns(TypedDict):
    """What a digest keeps of one case (``run_digest_cases`` but ``run_id`` and
    ``position``), its JSON columns as text."""

    case_id: str
    category: str
    tags_json: str
    split: str | None
    expect_digest: str | None
    codes: str
    search_text: str
    checks_json: str
    items_json: str


class DigestCaseRow(DigestCaseColumns):
    """One row of ``run_digest_cases``."""

    run_id: str
    position: int


# (case_id, codes, expect_digest, tags_json, split, checks_json, items_json)
DigestOutcomeRow = tuple[str, str, str | None, str, str | None, str, str]
# (case_id, codes_a, codes_b, expect_digest_a, expect_digest_b, checks_json_a, checks_json_b),
# the checks only for a case whose outcome flipped
DigestPairRow = tuple[str, str, str, str | None, str | None, str | None, str | None]


@dataclass(frozen=True)
class DigestPairs:
    """Two runs' digests joined by case id (:meth:`RunStore.digest_pairs`)."""

    pairs: list[DigestPairRow]
    added: list[str]  # only in run b
    removed: list[str]  # only in run a


@dataclass(frozen=True)
class RunInfo:
    """A run's metadata."""

    id: str
    suite: str
    suite_path: str
    group_id: str
    created_at: str
    finished_at: str | None
    status: str
    dataset_commit: str | None
    dataset_dirty: bool | None
    agent: str
    config_name: str | None
    config: dict[str, object]
    trials: int
    split: str
    caseforge_version: str
    options: JSONObject
    suite_identity: SuiteIdentity | None = None


STATUS_CODES = {"pass": "P", "fail": "F", "error": "E", "incomplete": "I"}


def _passing(codes: str) -> bool:
    """A majority of the trials passed (compare's rule for a case)."""
    return codes.count("P") * 2 > len(codes)


@dataclass(frozen=True)
class CaseQuery:
    """Which cases of a run the grid shows: ``show`` (all, failing: any trial not passing,
    errors: any trial an error, flaky: some trial passing and some failing or an error), a
    ``tag`` the case carries, and ``q``, a text in its id or its input's lower-cased JSON.
    :meth:`matches` and :meth:`conditions` say the same, in Python and in SQL."""

    show: str = "all"
    tag: str = ""
    q: str = ""

    def matches(self, codes: str, tags: Sequence[str], case_id: str, text: str) -> bool:
        if self.show == "failing" and not codes.replace("P", ""):
            return False
        if self.show == "errors" and "E" not in codes:
            return False
        if self.show == "flaky" and not ("P" in codes and ("F" in codes or "E" in codes)):
            return False
        if self.tag and self.tag not in tags:
            return False
        needle = self.q.lower()
        return not needle or needle in case_id or needle in text

    def conditions(self, t: Table) -> list[ColumnElement[bool]]:
        found: list[ColumnElement[bool]] = []
        if self.show == "failing":
            found.append(func.replace(t.c.codes, "P", "") != "")
        elif self.show == "errors":
            found.append(t.c.codes.contains("E"))
        elif self.show == "flaky":
            found.append(t.c.codes.contains("P"))
            found.append(or_(t.c.codes.contains("F"), t.c.codes.contains("E")))
        if self.tag:
            tag = json.dumps(self.tag, ensure_ascii=False)
            found.append(t.c.tags_json.contains(tag, autoescape=True))
        if self.q:
            needle = self.q.lower()
            found.append(
                or_(
                    t.c.case_id.contains(needle, autoescape=True),
                    t.c.search_text.contains(needle, autoescape=True),
                )
            )
        return found


class DefaultStoreUrl(str):
    """The URL of the default store, ``.caseforge/caseforge.db`` at the git top: the one
    store whose folder caseforge creates without being asked. A store URL the user gave
    (``--store``, ``CASEFORGE_STORE``) must name a folder that exists."""

    __slots__ = ()


def default_store_url(start: Path | None = None) -> str:
    """``CASEFORGE_STORE``, else SQLite in ``.caseforge/`` at the git top (or cwd)."""
    env = os.environ.get("CASEFORGE_STORE")
    if env:
        return env

    return DefaultStoreUrl(f"sqlite:///{suite_paths(start or Path.cwd()).db.resolve()}")


def new_run_id(now: dt.datetime | None = None) -> str:
    """A sortable, unique run id: ``20261129-174512-3fa2c1``."""
    now = now or dt.datetime.now(dt.UTC)
    return now.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def utcnow(precise: bool = False) -> str:
    """The real wall clock to the second (or the microsecond), even while an in-process
    agent's clock is frozen."""
    time_machine = sys.modules.get("time_machine")  # only imported when a clock is frozen
    if time_machine is not None and time_machine.escape_hatch.is_travelling():
        now = time_machine.escape_hatch.time.time()
    else:
        now = time.time()
    if precise:
        return dt.datetime.fromtimestamp(now, dt.UTC).isoformat(timespec="microseconds")
    seconds = int(now)
    if seconds != _NOW[0]:  # formatted once a second, not once per stored case-trial
        _NOW[:] = [seconds, dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat()]
    return str(_NOW[1])


_NOW: list[int | str] = [0, ""]


def _engine(url: str, read_only: bool = False) -> Engine:
    """An engine for ``url``, or a one-line error: a URL that does not parse or names no
    database caseforge can reach is a usage error; a missing driver, an environment one.
    Only the default store's folder is created; a folder the user named must exist. With
    ``read_only``, a SQLite file is opened read-only (see :func:`_read_only_engine`)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise UsageError(
            f"{shown_url(url)!r} is not a store URL: use sqlite:///PATH or "
            "postgresql+psycopg://HOST/DB (in --store or CASEFORGE_STORE)"
        ) from None
    if parsed.drivername.startswith("sqlite") and not parsed.database:
        raise UsageError(
            f"{shown_url(url)!r} names no file, so every run would be lost when caseforge "
            "exits: use sqlite:///PATH (in --store or CASEFORGE_STORE)"
        )
    if parsed.drivername.startswith("sqlite") and parsed.database != ":memory:":
        database = Path(str(parsed.database))
        if read_only:
            return _read_only_engine(url, database)
        _store_folder(url, database.parent)
        _require_writable(url, database)
    if parsed.drivername in ("postgresql", "postgres"):  # psycopg 3, caseforge[postgres]
        parsed = parsed.set(drivername="postgresql+psycopg")
    try:
        return create_engine(parsed, future=True)
    except NoSuchModuleError:
        raise UsageError(
            f"{shown_url(url)}: no database dialect {parsed.drivername!r}: use sqlite:///PATH "
            "or postgresql+psycopg://HOST/DB"
        ) from None
    except ImportError as exc:
        raise EnvError(
            f"{shown_url(url)}: the database driver is not installed ({exc.name or exc}): "
            "install it (for PostgreSQL: pip install 'caseforge[postgres]')"
        ) from None


def _store_folder(url: str, folder: Path) -> None:
    """The folder of a SQLite store: the default one is made (with its ``.gitignore``); one
    the user named must be there, or the URL is a usage error naming it."""
    if isinstance(url, DefaultStoreUrl) or folder.is_dir():
        try:
            ensure_state_dir(folder)  # in an existing `.caseforge/`, only its .gitignore
        except OSError as exc:
            raise EnvError(
                f"{folder}: cannot create the store's folder: {exc.strerror or exc}"
            ) from None
        return
    what = "is a file, not a folder" if folder.exists() else "does not exist"
    raise UsageError(
        f"{folder}: the folder of the store {shown_url(url)} {what}: create it, or name "
        "another store (--store, CASEFORGE_STORE); only the default store's folder, "
        ".caseforge/ at the git top, is made for you"
    )


def _require_writable(url: str, database: Path) -> None:
    """A command that writes runs needs the SQLite file, and its folder (where SQLite keeps
    its WAL files), writable: say so in one line before SQLite fails halfway."""
    if database.exists() and not os.access(database, os.W_OK):
        where = f"{database} cannot be written"
    elif not os.access(database.parent, os.W_OK | os.X_OK):
        where = f"its folder {database.parent} cannot be written"
    else:
        return
    raise EnvError(
        f"{shown_url(url)}: the run store is read-only here ({where}): this command stores "
        "runs, so give it a store it can write (--store, CASEFORGE_STORE); report, show, runs "
        "and serve --read-only can read this one"
    )


def _read_only_engine(url: str, database: Path) -> Engine:
    """A SQLite store opened only to read: ``mode=ro``, so a file and folder caseforge may
    not write still open, and never a journal-mode change (the store is in WAL mode, which
    a read-only connection cannot set). A WAL store whose folder cannot be written lacks the
    shared-memory file a reader needs: then ``immutable=1``, which reads the file as it is
    (a store that is not being written; SQLite checkpoints the WAL when a run closes it)."""
    reason = ""
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        target = f"file:{quote(str(database))}?{flags}"
        try:  # the probe: SQLite opens lazily, and says what is wrong at the first read
            probe = sqlite3.connect(target, uri=True, timeout=BUSY_TIMEOUT_S)
            try:
                probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                probe.close()
        except sqlite3.OperationalError as exc:  # SQLITE_READONLY_DIRECTORY, CANTOPEN…
            reason = str(exc)
            continue
        except sqlite3.DatabaseError as exc:  # not a database at all: immutable will not help
            reason = str(exc)
            break

        def connect(target: str = target) -> sqlite3.Connection:
            return sqlite3.connect(
                target, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False
            )

        engine = create_engine(make_url(url), creator=connect, future=True)
        event.listen(engine, "handle_error", _sqlite_errors(shown_url(url)))
        return engine
    raise EnvError(
        f"{shown_url(url)}: cannot open the run store: {reason} "
        "(check the path or server, its permissions, and CASEFORGE_STORE / --store)"
    )


def _require_existing(url: str) -> None:
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return  # _engine names the mistake
    database = parsed.database
    on_disk = parsed.drivername.startswith("sqlite") and database not in (None, "", ":memory:")
    if on_disk and not Path(str(database)).exists():
        raise UsageError(
            f"no runs in the store {shown_url(url)}: there is no store file yet (a run "
            f"creates it; name another with --store, or a suite's with --suite){_nearby()}"
        )


def _nearby() -> str:
    """The suites below the current folder that hold a store (a run outside a git
    repository keeps its runs in its suite's ``.caseforge/``), as a hint."""
    try:
        found = sorted(
            p.parent.parent.name
            for p in Path.cwd().glob(f"*/{STATE_DIR}/caseforge.db")
            if p.is_file()
        )
    except OSError:
        return ""
    if not found:
        return ""
    if len(found) == 1:
        return f"; the suite {found[0]} has runs of its own: add --suite {found[0]}"
    shown = ", ".join(f"--suite {name}" for name in found[:3])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return f"; these suites have runs of their own: {shown}{more}"


_USER_PASSWORD = re.compile(r"^(?P<head>[^:/?#]+://[^:/?#@]*):[^/?#]*@")
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&](?:password|sslpassword)=)[^&#]*", re.IGNORECASE)


def shown_url(url: str) -> str:
    """The URL without its password (``postgresql://user:***@host/db``), for every message
    and every line printed; also a URL that does not parse, and a password given in the
    query string."""
    shown = _USER_PASSWORD.sub(r"\g<head>:***@", url)
    return _QUERY_PASSWORD.sub(r"\g<head>***", shown)


def _reason(exc: DatabaseError) -> str:
    return str(exc.orig).splitlines()[0] if exc.orig is not None else str(exc).splitlines()[0]


BUSY_TIMEOUT_S = 5  # how long SQLite waits for another process's write lock


def _sqlite_errors(shown: str) -> Callable[[ExceptionContext], None]:
    """A ``handle_error`` listener for a SQLite store: the two errors another process or
    the file's permissions cause, wherever a statement meets them, become one line naming
    the store (exit 5) instead of a traceback; others are left to the caller."""

    def handle(context: ExceptionContext) -> None:
        error = context.original_exception
        if not isinstance(error, sqlite3.OperationalError):
            return
        text = str(error)
        if "database is locked" in text or "database table is locked" in text:
            raise EnvError(
                f"{shown}: the run store is locked: another process held its write lock for "
                f"more than {BUSY_TIMEOUT_S} s (another caseforge run, or a tool with the file "
                "open); try again when it is done, or name another store (--store)"
            )
        if "readonly database" in text:
            raise EnvError(
                f"{shown}: the run store is read-only here (attempt to write a readonly "
                "database): give a store this command can write (--store, CASEFORGE_STORE)"
            )

    return handle


_JSON_FIELDS = frozenset({"id", "suite_identity", "config", "options"})  # stored otherwise


class RunStore:
    """Runs and results behind SQLAlchemy."""

    def __init__(
        self,
        url: str | None = None,
        *,
        create: bool = True,
        check_schema: bool = True,
        read_only: bool = False,
    ) -> None:
        """Open the store at ``url``: a SQLite file is upgraded, a shared PostgreSQL store
        must be at this caseforge's schema (see ``migrate.require_current``). With
        ``create=False``, as commands that only read runs open it, a SQLite file that is not
        there is an error instead of a new empty store left behind. ``check_schema=False``
        is for ``caseforge store upgrade``, which then calls :meth:`upgrade`. ``read_only``
        (report, show, runs, serve --read-only) opens a SQLite file read-only, so a store
        this user may not write still reads; it implies ``create=False``."""
        self.url = url or default_store_url()
        self.read_only = read_only
        if not create or read_only:
            _require_existing(self.url)
        self.engine: Engine = _engine(self.url, read_only)
        if self.engine.dialect.name == "sqlite" and not self._read_only_sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
            event.listen(self.engine, "handle_error", _sqlite_errors(shown_url(self.url)))
        try:
            if not check_schema:
                pass
            elif self.shared:
                migrate.require_current(self.engine, shown_url(self.url))
            elif self._read_only_sqlite:
                self._require_readable_schema()
            else:
                migrate.upgrade(self.engine, shown_url(self.url))
        except DatabaseError as exc:  # unreachable, locked, or a file that is no database
            self.engine.dispose()
            raise EnvError(
                f"{shown_url(self.url)}: cannot open the run store: {_reason(exc)} "
                "(check the path or server, its permissions, and CASEFORGE_STORE / --store)"
            ) from None

    @property
    def _read_only_sqlite(self) -> bool:
        return self.read_only and self.engine.dialect.name == "sqlite"

    def _require_readable_schema(self) -> None:
        """A store opened read-only is read at this caseforge's schema. A newer one is
        refused (as on any open); an older one is upgraded first when this user can write
        it, as opening it used to, else refused naming what would upgrade it."""
        shown = shown_url(self.url)
        current = migrate.current_revision(self.engine)
        if current == migrate.head_revision():
            return
        if current is not None and current not in migrate.known_revisions():
            migrate.upgrade(self.engine, shown)  # refuses a newer store, before any write
        database = Path(str(self.engine.url.database))
        if os.access(database, os.W_OK) and os.access(database.parent, os.W_OK | os.X_OK):
            RunStore(self.url).close()  # upgraded in place, then read as it now is
            return
        raise EnvError(
            f"{shown}: the store's schema is at revision {current or 'none (pre-migration)'} "
            f"and this caseforge reads {migrate.head_revision()}, but the store is read-only "
            "here, so it cannot be upgraded: run any caseforge command that writes it (or "
            "`caseforge store upgrade --store URL`) where it can be written"
        )

    @property
    def shared(self) -> bool:
        """A server several people use (PostgreSQL), not one person's SQLite file: its
        schema is migrated only by ``caseforge store upgrade``."""
        return self.engine.dialect.name != "sqlite"

    def upgrade(self) -> tuple[str | None, str]:
        """Migrate the store to this caseforge's schema; the revisions before and after."""
        try:
            return migrate.upgrade(self.engine, shown_url(self.url))
        except DatabaseError as exc:
            raise EnvError(
                f"{shown_url(self.url)}: cannot upgrade the store: {_reason(exc)}"
            ) from None

    @property
    def thread_safe(self) -> bool:
        """Whether another thread may write: not an in-memory SQLite database, which each
        thread would see as a database of its own."""
        url = self.engine.url
        return not (url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"))

    def close(self) -> None:
        self.engine.dispose()

    # runs -----------------------------------------------------------------
    def create_run(self, cases: Sequence[tuple[str, str]] = (), **fields: Unpack[NewRun]) -> str:
        """Create a run, with its case snapshot (``(case_id, case_json)``) in the same
        transaction, so a second shard that finds the run also finds its cases. A run that
        exists already raises ``DatabaseError`` (the key on its id)."""
        run_id = fields.get("id") or new_run_id()
        identity = fields.get("suite_identity")
        row: dict[str, object] = {
            **{k: v for k, v in fields.items() if k not in _JSON_FIELDS},
            "id": run_id,
            # To the microsecond: `latest` must tell apart two runs started in one second.
            "created_at": utcnow(precise=True),
            "status": "running",
            "config_json": json.dumps(fields.get("config", {}), ensure_ascii=False),
            "options_json": json.dumps(fields.get("options", {}), ensure_ascii=False),
            "suite_identity": identity.model_dump_json() if identity is not None else None,
        }
        row.setdefault("group_id", run_id)
        with self.engine.begin() as conn:
            conn.execute(insert(runs).values(**row))
            snapshot = [{"run_id": run_id, "case_id": cid, "case_json": t} for cid, t in cases]
            if snapshot:
                conn.execute(insert(run_cases), snapshot)
        return run_id

    # shards ---------------------------------------------------------------
    def claim_shard(self, run_id: str, shard: int, shards: int, host: str) -> None:
        """Record that shard ``shard`` of ``shards`` of a run is running (again, on resume)."""
        now = utcnow(precise=True)
        with self.engine.begin() as conn:
            found = conn.execute(
                select(run_shards.c.shards).where(
                    run_shards.c.run_id == run_id, run_shards.c.shard == shard
                )
            ).first()
            if found is None:
                conn.execute(
                    insert(run_shards).values(
                        run_id=run_id, shard=shard, shards=shards, status="running",
                        host=host, started_at=now,
                    )
                )  # fmt: skip
            else:
                conn.execute(
                    update(run_shards)
                    .where(run_shards.c.run_id == run_id, run_shards.c.shard == shard)
                    .values(status="running", host=host, started_at=now, finished_at=None)
                )

    def end_shard(self, run_id: str, shard: int, status: str) -> str:
        """Record how shard ``shard`` ended, and mark the run from the whole ledger: finished
        once all of its shards are, stopped once none runs and one stopped, else running.
        Returns the run's status.

        One transaction, serialized per run, so two shards ending at once cannot each read
        the other as running and leave a finished run marked running: its first statement is
        a write (SQLite's write lock, taken before any read), then the run's row is locked
        (``FOR UPDATE`` on PostgreSQL, where the second shard then reads the first's commit).
        """
        with self.engine.begin() as conn:
            values: dict[str, str] = {"status": status}
            if status == "finished":
                values["finished_at"] = utcnow()
            conn.execute(
                update(run_shards)
                .where(run_shards.c.run_id == run_id, run_shards.c.shard == shard)
                .values(**values)
            )
            conn.execute(select(runs.c.id).where(runs.c.id == run_id).with_for_update())
            rows = conn.execute(
                select(run_shards.c.shards, run_shards.c.status).where(
                    run_shards.c.run_id == run_id
                )
            ).all()
            count = rows[0][0] if rows else 1
            statuses = [row[1] for row in rows]
            if len(statuses) == count and all(s == "finished" for s in statuses):
                overall = "finished"
            elif "running" in statuses or (len(statuses) < count and "stopped" not in statuses):
                overall = "running"
            else:
                overall = "stopped"
            self._set_status(conn, run_id, overall)
        return overall

    def shards(self, run_id: str) -> list[ShardRow]:
        """The run's shard ledger, by shard."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(run_shards).where(run_shards.c.run_id == run_id).order_by(run_shards.c.shard)
            )
            return [cast("ShardRow", dict(row._mapping)) for row in rows]

    def set_status(self, run_id: str, status: str) -> None:
        with self.engine.begin() as conn:
            self._set_status(conn, run_id, status)

    @staticmethod
    def _set_status(conn: Connection, run_id: str, status: str) -> None:
        values: dict[str, str] = {"status": status}
        if status == "finished":
            values["finished_at"] = utcnow()
        conn.execute(update(runs).where(runs.c.id == run_id).values(**values))
        if status != "finished":  # resumed: its digest no longer describes it
            conn.execute(delete(run_digests).where(run_digests.c.run_id == run_id))
            conn.execute(delete(run_digest_cases).where(run_digest_cases.c.run_id == run_id))

    def save_digest(
        self, run_id: str, digest_json: str, case_rows: Sequence[DigestCaseColumns] = ()
    ) -> None:
        """Keep a finished run's digest (see ``compare.digest``) and its per-case rows (the
        columns of ``run_digest_cases`` but ``run_id`` and ``position``), replacing older."""
        with self.engine.begin() as conn:
            conn.execute(delete(run_digests).where(run_digests.c.run_id == run_id))
            conn.execute(delete(run_digest_cases).where(run_digest_cases.c.run_id == run_id))
            rows = [
                {**row, "run_id": run_id, "position": position}
                for position, row in enumerate(case_rows)
            ]
            for start in range(0, len(rows), 5_000):
                conn.execute(insert(run_digest_cases), rows[start : start + 5_000])
            conn.execute(insert(run_digests).values(run_id=run_id, digest_json=digest_json))

    def digest_outcome_rows(self, run_id: str) -> list[DigestOutcomeRow]:
        """What a comparison reads of every digest row, in case order: ``(case_id, codes,
        expect_digest, tags_json, split, checks_json, items_json)`` (not the search text)."""
        t = run_digest_cases
        columns = (t.c.case_id, t.c.codes, t.c.expect_digest, t.c.tags_json, t.c.split)
        query = (
            select(*columns, t.c.checks_json, t.c.items_json)
            .where(t.c.run_id == run_id)
            .order_by(t.c.position)
        )
        with self.engine.connect() as conn:
            return [cast("DigestOutcomeRow", tuple(row)) for row in conn.execute(query)]

    def digest_pairs(self, run_a: str, run_b: str) -> DigestPairs:
        """Two runs' digest rows paired by case id, for a comparison: each common case's
        trials as letters and its expectations' digest on both sides, with the per-check
        counts only where its outcome flipped (a majority of its trials passing on one side
        and not on the other); and the ids only one side has, all in case id order.

        Each side is one read along the table's primary key (four short columns); the
        pairing is a hash join here. A join in SQL would need an index on the case id, which
        SQLite, given the key's run prefix, would not build: it looped 100,000 × 100,000."""
        t = run_digest_cases
        columns = (t.c.case_id, t.c.codes, t.c.expect_digest, t.c.checks_json)

        def side(conn: Connection, run_id: str) -> list[tuple[str, str, str | None, str]]:
            if self.engine.dialect.name == "sqlite":
                # The driver's cursor: SQLAlchemy's row objects cost six times the read
                # itself on 100,000 rows (0.3 s against 0.05 s).
                driver = conn.connection.driver_connection
                assert driver is not None  # an open connection has its driver's
                sql = (
                    f"SELECT case_id, codes, expect_digest, checks_json FROM {t.name} "
                    "WHERE run_id = ? ORDER BY position"
                )
                found: list[tuple[str, str, str | None, str]] = driver.execute(
                    sql, (run_id,)
                ).fetchall()
                return found
            query = select(*columns).where(t.c.run_id == run_id).order_by(t.c.position)
            return [(r[0], r[1], r[2], r[3]) for r in conn.execute(query).all()]

        with self.engine.connect() as conn:
            rows_a, rows_b = side(conn, run_a), side(conn, run_b)
        found_a = {row[0]: row for row in rows_a}
        in_b: set[str] = set()
        pairs: list[DigestPairRow] = []
        added: list[str] = []
        for case_id, codes_b, digest_b, checks_b in rows_b:
            in_b.add(case_id)
            other = found_a.get(case_id)
            if other is None:
                added.append(case_id)
                continue
            _, codes_a, digest_a, checks_a = other
            flipped = _passing(codes_a) != _passing(codes_b)
            pairs.append(
                (case_id, codes_a, codes_b, digest_a, digest_b,
                 checks_a if flipped else None, checks_b if flipped else None)
            )  # fmt: skip
        removed = sorted(c for c in found_a if c not in in_b)
        pairs.sort(key=lambda row: row[0])
        return DigestPairs(pairs, sorted(added), removed)

    def digest_cases(
        self,
        run_id: str,
        query: CaseQuery | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> tuple[int, list[DigestCaseRow]]:
        """How many of a digest's cases match ``query``, and those from ``offset`` (at most
        ``limit``), in the run's case order."""
        t = run_digest_cases
        where = [t.c.run_id == run_id, *(query.conditions(t) if query else [])]
        with self.engine.connect() as conn:
            total = conn.execute(select(func.count()).select_from(t).where(*where)).scalar_one()
            chosen = select(t).where(*where).order_by(t.c.position).offset(offset)
            if limit is not None:
                chosen = chosen.limit(limit)
            found = conn.execute(chosen)
            names = list(found.keys())  # once: a mapping row looks its keys up every time
            rows = [cast("DigestCaseRow", dict(zip(names, row, strict=True))) for row in found]
        return int(total), rows

    def digest(self, run_id: str) -> str | None:
        with self.engine.connect() as conn:
            value = conn.execute(
                select(run_digests.c.digest_json).where(run_digests.c.run_id == run_id)
            ).scalar()
        return str(value) if value is not None else None

    def all_runs(self) -> list[RunInfo]:
        """Every run of the store, newest first."""
        query = select(runs).order_by(runs.c.created_at.desc(), runs.c.id.desc())
        with self.engine.connect() as conn:
            return [_run_info(r) for r in conn.execute(query).mappings()]

    def delete_run(self, run_id: str) -> None:
        """Remove a run and everything stored of it, in one transaction (its results are
        deleted along the primary key, however many there are)."""
        with self.engine.begin() as conn:
            for table in (results, run_digest_cases, run_digests, run_cases, run_shards):
                conn.execute(delete(table).where(table.c.run_id == run_id))
            conn.execute(delete(runs).where(runs.c.id == run_id))

    def update_options(self, run_id: str, extra: JSONObject) -> None:
        """Merge ``extra`` into a run's recorded options (e.g. the judge used and its cost)."""
        info = self.get_run(run_id)
        options = {**info.options, **extra}
        with self.engine.begin() as conn:
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id)
                .values(options_json=json.dumps(options, ensure_ascii=False))
            )

    def resolve_run(self, ref: str) -> str:
        """The run id ``ref`` names: itself, or the newest run for ``latest``."""
        if ref != "latest":
            return ref
        newest = self.list_runs(limit=1)
        if not newest:
            raise UsageError(f"no runs in the store {shown_url(self.url)}")
        return newest[0].id

    def has_run(self, run_id: str) -> bool:
        with self.engine.connect() as conn:
            found = conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first()
        return found is not None

    def get_run(self, run_id: str) -> RunInfo:
        with self.engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).mappings().first()
        if row is None:
            raise UsageError(
                f"no run {run_id!r} in the store {shown_url(self.url)} "
                "(see `caseforge runs`, or name another store with --store)"
            )
        return _run_info(row)

    def list_runs(self, suite: str | None = None, limit: int = 50) -> list[RunInfo]:
        query = select(runs).order_by(runs.c.created_at.desc(), runs.c.id.desc()).limit(limit)
        if suite:
            query = query.where(runs.c.suite == suite)
        with self.engine.connect() as conn:
            return [_run_info(r) for r in conn.execute(query).mappings()]

    def latest_unfinished(self, suite: str, identity: SuiteIdentity | None = None) -> list[RunInfo]:
        """The newest unfinished run of ``suite`` (of that very suite, given its identity:
        another folder with the same ``name:`` does not count) and its group's other runs."""
        query = (
            select(runs)
            .where(runs.c.suite == suite, runs.c.status.in_(UNFINISHED))
            .order_by(runs.c.created_at.desc(), runs.c.id.desc())
        )
        with self.engine.connect() as conn:
            rows = [_run_info(r) for r in conn.execute(query).mappings()]
        if identity is not None:
            rows = [
                r for r in rows if r.suite_identity is None or r.suite_identity.same_suite(identity)
            ]
        if not rows:
            return []
        group = rows[0].group_id
        return [r for r in rows if r.group_id == group]

    def group(self, group_id: str) -> list[RunInfo]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(runs).where(runs.c.group_id == group_id).order_by(runs.c.id))
            return [_run_info(r) for r in rows.mappings()]

    # cases ----------------------------------------------------------------
    def save_cases(self, run_id: str, cases: Sequence[tuple[str, str]]) -> None:
        """Snapshot the case definitions used by a run (``(case_id, case_json)``)."""
        with self.engine.begin() as conn:
            existing = set(
                conn.execute(select(run_cases.c.case_id).where(run_cases.c.run_id == run_id))
                .scalars()
                .all()
            )
            rows = [
                {"run_id": run_id, "case_id": cid, "case_json": text}
                for cid, text in cases
                if cid not in existing
            ]
            if rows:
                conn.execute(insert(run_cases), rows)

    def case_count(self, run_id: str) -> int:
        """How many cases the run planned (its snapshot), done or not."""
        with self.engine.connect() as conn:
            found = conn.execute(
                select(func.count()).select_from(run_cases).where(run_cases.c.run_id == run_id)
            ).scalar_one()
        return int(found)

    def case(self, run_id: str, case_id: str) -> JSONObject | None:
        """One case of the run's snapshot, read by its key (None when the run has none)."""
        with self.engine.connect() as conn:
            text = conn.execute(
                select(run_cases.c.case_json).where(
                    run_cases.c.run_id == run_id, run_cases.c.case_id == case_id
                )
            ).scalar()
        if text is None:
            return None
        found: JSONObject = json.loads(text)
        return found

    def cases(self, run_id: str) -> dict[str, JSONObject]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(run_cases.c.case_id, run_cases.c.case_json).where(
                    run_cases.c.run_id == run_id
                )
            )
            return {cid: json.loads(text) for cid, text in rows}

    # results --------------------------------------------------------------
    def write_results(self, rows: Sequence[ResultRow]) -> None:
        """Insert finished case-trials in one transaction (safe from another thread)."""
        if not rows:
            return
        try:
            with self.engine.begin() as conn:
                if self.engine.dialect.name == "sqlite":
                    # The driver's executemany: SQLAlchemy's per-row parameter handling costs
                    # more than SQLite's insert itself, and a run writes one row per
                    # case-trial.
                    names = list(rows[0])
                    sql = (
                        f"INSERT INTO {results.name} ({', '.join(names)}) "
                        f"VALUES ({', '.join('?' for _ in names)})"
                    )
                    driver = conn.connection.driver_connection
                    assert driver is not None  # an open connection has its driver's
                    cursor = driver.cursor()
                    cursor.executemany(sql, [tuple(row.get(n) for n in names) for row in rows])
                else:
                    conn.execute(insert(results), list(rows))
        except (DatabaseError, sqlite3.Error) as exc:
            reason = _reason(exc) if isinstance(exc, DatabaseError) else str(exc)
            raise EnvError(
                f"{shown_url(self.url)}: cannot store {len(rows)} finished case-trial(s): "
                f"{reason}; the run stops, and --resume runs what was not stored"
            ) from None

    def done(self, run_id: str) -> set[tuple[str, int]]:
        """The (case_id, trial) pairs already stored for a run."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(results.c.case_id, results.c.trial).where(results.c.run_id == run_id)
            )
            return {(cid, trial) for cid, trial in rows}

    def count(self, run_id: str) -> int:
        with self.engine.connect() as conn:
            value = conn.execute(
                select(func.count()).select_from(results).where(results.c.run_id == run_id)
            ).scalar_one()
            return int(value)

    def statuses(self, run_id: str) -> list[tuple[str, int, str]]:
        """``(case_id, trial, status)`` of every stored case-trial of a run."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(results.c.case_id, results.c.trial, results.c.status).where(
                    results.c.run_id == run_id
                )
            )
            return [(cid, trial, status) for cid, trial, status in rows]

    def result(
        self, run_id: str, case_id: str | None = None, trial: int | None = None
    ) -> ResultRow | None:
        """One stored case-trial, read by its key (run, case, trial). Without ``trial``:
        the case's first trial that did not pass, else its first; without ``case_id`` too,
        the run's first such case-trial, by case and trial. None when nothing matches."""
        query = select(results).where(results.c.run_id == run_id)
        if case_id is not None:
            query = query.where(results.c.case_id == case_id)
        if trial is not None:
            query = query.where(results.c.trial == trial)
        query = query.order_by(results.c.case_id, results.c.trial).limit(1)
        with self.engine.connect() as conn:
            found = None
            if trial is None:  # the primary key's order: the scan stops at the first
                found = conn.execute(query.where(results.c.status != "pass")).first()
            if found is None:
                found = conn.execute(query).first()
            if found is None:
                return None
            return cast("ResultRow", dict(found._mapping))

    def next_result(
        self, run_id: str, case_id: str, trial: int, back: bool = False, failing: bool = False
    ) -> tuple[str, int] | None:
        """The stored case-trial after (``back``: before) ``(case_id, trial)`` in the run's
        order (by case, then trial); with ``failing``, the next one that did not pass. Read
        along the primary key, so it costs the rows skipped, never the run."""
        key = tuple_(results.c.case_id, results.c.trial)
        here = tuple_(literal(case_id), literal(trial))
        query = select(results.c.case_id, results.c.trial).where(
            results.c.run_id == run_id, key < here if back else key > here
        )
        if failing:
            query = query.where(results.c.status != "pass")
        if back:
            query = query.order_by(results.c.case_id.desc(), results.c.trial.desc())
        else:
            query = query.order_by(results.c.case_id, results.c.trial)
        with self.engine.connect() as conn:
            found = conn.execute(query.limit(1)).first()
        return (str(found[0]), int(found[1])) if found is not None else None

    def statuses_of(
        self, run_ids: Sequence[str], case_ids: Sequence[str]
    ) -> list[tuple[str, str, int, str]]:
        """``(run_id, case_id, trial, status)`` of some cases in some runs, by the primary
        key: what a page of cases shows of their history."""
        if not run_ids or not case_ids:
            return []
        query = select(results.c.run_id, results.c.case_id, results.c.trial, results.c.status)
        query = query.where(
            results.c.run_id.in_(list(run_ids)), results.c.case_id.in_(list(case_ids))
        )
        with self.engine.connect() as conn:
            return [(r, c, t, s) for r, c, t, s in conn.execute(query)]

    def failing_checks(
        self, run_id: str, case_ids: Sequence[str]
    ) -> dict[tuple[str, int], list[str]]:
        """The checks each case-trial of some cases did not pass (failed or erred; else
        those left unjudged), by ``(case_id, trial)``: what the grid's cells name."""
        if not case_ids:
            return {}
        query = select(results.c.case_id, results.c.trial, results.c.checks_json).where(
            results.c.run_id == run_id,
            results.c.case_id.in_(list(case_ids)),
            results.c.status != "pass",
        )
        found: dict[tuple[str, int], list[str]] = {}
        with self.engine.connect() as conn:
            for case_id, trial, text in conn.execute(query):
                checks = json.loads(text) if text else []
                named = [
                    str(c.get("name")) for c in checks if c.get("status") in ("fail", "error")
                ] or [
                    str(c.get("name")) for c in checks if c.get("status") not in ("pass", "skipped")
                ]
                found[(case_id, trial)] = named
        return found

    def mixed_cases(self, run_id: str, limit: int = 2_000) -> list[tuple[str, str]]:
        """``(case_id, codes)`` of the cases whose trials disagree (one passed, one did not)
        in a run with a digest: the candidates for flakiness, found in SQL."""
        t = run_digest_cases
        query = (
            select(t.c.case_id, t.c.codes)
            .where(
                t.c.run_id == run_id,
                t.c.codes.contains("P"),
                func.replace(t.c.codes, "P", "") != "",
            )
            .order_by(t.c.position)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [(c, codes) for c, codes in conn.execute(query)]

    def has_digest(self, run_id: str) -> bool:
        with self.engine.connect() as conn:
            found = conn.execute(
                select(run_digests.c.run_id).where(run_digests.c.run_id == run_id)
            ).first()
        return found is not None

    def results(
        self,
        run_id: str,
        case_id: str | None = None,
        case_ids: Sequence[str] | None = None,
    ) -> Iterator[ResultRow]:
        """Every stored case-trial of a run (or of one of its cases, or of some), by case
        and trial."""
        query = select(results).where(results.c.run_id == run_id)
        if case_id is not None:
            query = query.where(results.c.case_id == case_id)
        if case_ids is not None:
            query = query.where(results.c.case_id.in_(list(case_ids)))
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(results.c.case_id, results.c.trial))
            names = list(rows.keys())  # once: a mapping row looks its keys up every time
            for row in rows:
                yield cast("ResultRow", dict(zip(names, row, strict=True)))


def _run_info(row: RowMapping) -> RunInfo:
    return RunInfo(
        id=row["id"],
        suite=row["suite"],
        suite_path=row["suite_path"],
        group_id=row["group_id"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        status=row["status"],
        dataset_commit=row["dataset_commit"],
        dataset_dirty=row["dataset_dirty"],
        agent=row["agent"],
        config_name=row["config_name"],
        config=json.loads(row["config_json"]),
        trials=row["trials"],
        split=row["split"],
        caseforge_version=row["caseforge_version"],
        options=json.loads(row["options_json"]),
        suite_identity=SuiteIdentity.model_validate_json(row["suite_identity"])
        if row.get("suite_identity")
        else None,
    )


def _sqlite_pragmas(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_S * 1000}")
    cursor.close()


def store_url(store: str | None, suite: Path | None) -> str | None:
    """The store a command that takes a RUN opens: ``store`` (``--store``), else the suite
    folder's store (``--suite``), else None: the default one of the current directory."""
    if store:
        return store
    if suite is None:
        return None
    require_suite_folder(suite)  # `--suite nowhere` says so, not "no runs in the store"
    return default_store_url(suite)
