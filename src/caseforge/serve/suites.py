"""The suite screen's cases and validation, for suites of any size.

A page of cases is read from its files alone (a YAML file is one case, a JSONL file one per
line), so the first page of a 10,000-case suite costs its 100 files, not the suite. The
validation (``caseforge validate``, the same function) runs in a background thread, one per
suite, reporting its progress; while it runs the page shows how far it is, and once it is
done the cases, problems and category × split come from its result. The result is kept
while the suite's files are unchanged (their sizes and modification times: the key the
parsed-case cache, ``case/parsed.py``, keeps each file's parse under, so a suite edited in
one file re-parses that file only). A validation nobody has looked at for
:data:`ABANDON_S` seconds (the browser went away) is stopped at its next case."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.case.load import (
    LoadedCase,
    case_files,
    iter_case_file,
    load_config,
    suite_modes,
)
from caseforge.case.model import case_model
from caseforge.case.parsed import ParsedCases
from caseforge.case.validate import validate_suite
from caseforge.errors import CaseforgeError, Problem
from caseforge.serve.views import CaseRow, ValidationState

ABANDON_S = 30.0  # a validation nobody polled for this long is stopped
PROBLEMS_SHOWN = 200

log = logging.getLogger(__name__)

Fingerprint = tuple[tuple[str, int, int], ...]


class Abandoned(Exception):
    """Nobody looks at the validation any more: it stops."""


def fingerprint(suite_dir: Path) -> Fingerprint:
    """What a validation of the suite reads: its config, its case files and the suite's
    other files at the top (oracles, retired ids, checks), each by size and mtime."""
    found: list[tuple[str, int, int]] = []

    def walk(folder: Path, deep: bool) -> None:
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        if deep:
                            walk(Path(entry.path), True)
                        continue
                    stat = entry.stat()
                    found.append((entry.path, stat.st_size, stat.st_mtime_ns))

    walk(suite_dir, False)
    walk(suite_dir / "cases", True)
    return tuple(sorted(found))


def case_row(item: LoadedCase, suite_dir: Path) -> CaseRow:
    case = item.case
    path = item.path
    return CaseRow(
        id=case.id,
        file=str(path.relative_to(suite_dir)) if path.is_relative_to(suite_dir) else str(path),
        line=item.line,
        category=case.category(),
        split=case.split,
        source=case.source,
        tags=case.tags,
        expect={n: check.render() for n, _, check in case.checks()},
    )


def _count(path: Path) -> int:
    """How many cases a file holds, without parsing it (a JSONL file's non-blank lines)."""
    if path.suffix != ".jsonl":
        return 1
    try:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    except OSError:
        return 1


@dataclass
class _Done:
    mark: Fingerprint
    rows: list[CaseRow]
    errors: list[str]
    warnings: list[str]
    distribution: dict[str, dict[str, int]]


@dataclass
class _Job:
    mark: Fingerprint
    total: int
    done: int = 0
    phase: str = "reading the cases"
    state: str = "running"  # running, done, failed, abandoned
    message: str = ""
    seen_at: float = field(default_factory=time.monotonic)
    rows: list[CaseRow] = field(default_factory=list)
    finished: threading.Event = field(default_factory=threading.Event)


class SuiteIndex:
    """The validation of one suite, run in the background and kept while it is current."""

    def __init__(self, suite_dir: Path, abandon_s: float = ABANDON_S) -> None:
        self.suite_dir = suite_dir
        self.abandon_s = abandon_s
        self._lock = threading.Lock()
        self._done: _Done | None = None
        self._job: _Job | None = None

    # -- the background validation --------------------------------------------------------

    def state(self, start: bool = True) -> ValidationState:
        """How far the validation is; starts it (or again, when a file changed) unless
        ``start`` is false. Asking counts as looking."""
        mark = fingerprint(self.suite_dir)
        with self._lock:
            done, job = self._done, self._job
            if done is not None and done.mark == mark:
                return ValidationState(state="done", done=len(done.rows), total=len(done.rows))
            if job is not None and job.mark == mark and job.state in ("running", "failed"):
                job.seen_at = time.monotonic()
                return self._job_state(job)
            if not start:
                return ValidationState(state="not started", done=0, total=0)
            total = sum(_count(Path(p)) for p, _, _ in mark if _in_cases(self.suite_dir, p))
            job = self._job = _Job(mark=mark, total=total)
        thread = threading.Thread(
            target=self._run, args=(job,), name=f"validate {self.suite_dir.name}", daemon=True
        )
        thread.start()
        return self._job_state(job)

    def wait(self, timeout: float) -> bool:
        """Wait until the current job ends (for tests and the benchmark)."""
        job = self._job
        return job.finished.wait(timeout) if job is not None else True

    @staticmethod
    def _job_state(job: _Job) -> ValidationState:
        return ValidationState(
            state=job.state, done=job.done, total=job.total, phase=job.phase, message=job.message
        )

    def _run(self, job: _Job) -> None:
        suite_dir = self.suite_dir

        class Watch:
            def seen(self, item: LoadedCase | None) -> None:
                if time.monotonic() - job.seen_at > index.abandon_s:
                    raise Abandoned
                job.done += 1
                if item is not None:
                    job.rows.append(case_row(item, suite_dir))

            def phase(self, name: str) -> None:
                job.phase = name

        index = self
        try:
            report = validate_suite(suite_dir, watch=Watch())
        except Abandoned:
            job.state, job.message = "abandoned", "stopped: nobody was looking"
            job.finished.set()
            return
        except CaseforgeError as exc:
            job.state, job.message = "failed", exc.text
            job.finished.set()
            return
        except Exception as exc:  # suite code (a checks module) that raised: say so, stay up
            log.exception("validating %s failed", suite_dir)
            job.state, job.message = "failed", f"validation failed: {type(exc).__name__}: {exc}"
            job.finished.set()
            return
        rows = sorted(job.rows, key=lambda r: (r.file, r.line))
        done = _Done(
            mark=job.mark,
            rows=rows,
            errors=[p.format() for p in report.errors],
            warnings=[p.format() for p in report.warnings],
            distribution=report.distribution,
        )
        with self._lock:
            self._done = done
            job.state = "done"
            job.rows = []
        job.finished.set()

    # -- what the page reads ---------------------------------------------------------------

    def result(self) -> _Done | None:
        """The validation's result while it is current, else None."""
        with self._lock:
            done = self._done
        if done is None or done.mark != fingerprint(self.suite_dir):
            return None
        return done

    def page(self, offset: int, limit: int, q: str = "") -> tuple[int, list[CaseRow], bool]:
        """``(matching, rows, whole)``: the cases from ``offset``, from the validation when it
        is done (``whole``: filtered by ``q`` over id, file, category, tags and source), else
        read from their files (and ``q`` matched against the file names only)."""
        done = self.result()
        needle = q.lower()
        if done is not None:
            rows = done.rows
            if needle:
                rows = [r for r in rows if needle in _haystack(r)]
            return len(rows), rows[offset : offset + limit], True
        return (*self._quick(offset, limit, needle), False)

    def _quick(self, offset: int, limit: int, needle: str) -> tuple[int, list[CaseRow]]:
        files = case_files(self.suite_dir)
        if needle:
            files = [p for p in files if needle in str(p.relative_to(self.suite_dir)).lower()]
        counts = [_count(p) for p in files]
        total = sum(counts)
        try:
            config = load_config(self.suite_dir)
            model = case_model(suite_modes(self.suite_dir, config))
        except CaseforgeError:
            return total, []
        parsed = ParsedCases.of(self.suite_dir)
        rows: list[CaseRow] = []
        position = 0
        for path, count in zip(files, counts, strict=True):
            if position + count <= offset:
                position += count
                continue
            for item in iter_case_file(path, model, parsed):
                position += 1
                if position <= offset or isinstance(item, Problem):
                    continue
                rows.append(case_row(item, self.suite_dir))
                if len(rows) >= limit:
                    return total, rows
        return total, rows


def _in_cases(suite_dir: Path, path: str) -> bool:
    return Path(path).is_relative_to(suite_dir / "cases") and Path(path).suffix in (
        ".yaml",
        ".yml",
        ".jsonl",
    )


def _haystack(row: CaseRow) -> str:
    return " ".join([row.id, row.file, row.category, row.source, *row.tags]).lower()
