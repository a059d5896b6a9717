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
    CASE_SUFFIXES,
    CASES_DIR,
    LoadedCase,
    is_editor_file,
    iter_case_file,
    load_config,
    suite_modes,
)
from caseforge.case.model import case_model
from caseforge.case.validate import ValidationReport, validate_suite
from caseforge.errors import CaseforgeError, Problem
from caseforge.serve.views import CaseRow, ValidationState

ABANDON_S = 30.0  # a validation nobody polled for this long is stopped
PROBLEMS_SHOWN = 200

log = logging.getLogger(__name__)

Fingerprint = tuple[tuple[str, int, int], ...]
SUFFIXES = tuple(CASE_SUFFIXES)


class Abandoned(CaseforgeError):
    """Nobody looks at the validation any more: it stops (caught in :meth:`SuiteIndex._run`,
    never shown)."""


def scan(suite_dir: Path) -> tuple[Fingerprint, list[str]]:
    """What a validation of the suite reads, each file by size and mtime (its config and
    the other files at its top, and every file under ``cases/``), and its case files,
    relative to the suite, in the order the screen lists them. One walk of plain strings:
    about 20 ms for 10,000 files."""
    found: list[tuple[str, int, int]] = []
    cases: list[str] = []
    top = str(suite_dir)
    folder = os.path.join(top, CASES_DIR)

    def walk(where: str, deep: bool) -> None:
        with contextlib.suppress(OSError), os.scandir(where) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        if deep:
                            walk(entry.path, True)
                        continue
                    stat = entry.stat()
                    found.append((entry.path, stat.st_size, stat.st_mtime_ns))
                    name = entry.name
                    if deep and name.endswith(SUFFIXES) and not is_editor_file(name):
                        cases.append(entry.path[len(top) + 1 :])

    walk(top, False)
    walk(folder, True)
    return tuple(sorted(found)), sorted(cases)


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


def _count(path: str) -> int:
    """How many cases a file holds, without parsing it (a JSONL file's non-blank lines)."""
    if not path.endswith(".jsonl"):
        return 1
    try:
        with open(path, "rb") as handle:
            return sum(1 for line in handle if line.strip())
    except OSError:
        return 1


@dataclass
class _Done:
    mark: Fingerprint
    rows: list[CaseRow]
    errors: list[str]
    warnings: list[str]  # the near-duplicates capped as `validate` caps them
    warnings_total: int
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
        self._lines: dict[tuple[str, int, int], int] = {}  # a JSONL file's cases, by stat

    # -- the background validation --------------------------------------------------------

    def state(self, start: bool = True) -> ValidationState:
        """How far the validation is; starts it (or again, when a file changed) unless
        ``start`` is false. Asking counts as looking."""
        return self._state(*scan(self.suite_dir), start)

    def _state(self, mark: Fingerprint, files: list[str], start: bool) -> ValidationState:
        with self._lock:
            done, job = self._done, self._job
            if done is not None and done.mark == mark:
                return ValidationState(state="done", done=len(done.rows), total=len(done.rows))
            if job is not None and job.mark == mark and job.state in ("running", "failed"):
                job.seen_at = time.monotonic()
                return self._job_state(job)
            if not start:
                return ValidationState(state="not started", done=0, total=0)
            total = sum(self._counts(mark, files))
            job = self._job = _Job(mark=mark, total=total)
        thread = threading.Thread(
            target=self._run, args=(job,), name=f"validate {self.suite_dir.name}", daemon=True
        )
        thread.start()
        return self._job_state(job)

    def _counts(self, mark: Fingerprint, files: list[str]) -> list[int]:
        """Each case file's number of cases; a JSONL file's is kept while it is unchanged."""
        keys = {path: (size, mtime) for path, size, mtime in mark}
        counts = []
        for name in files:
            if not name.endswith(".jsonl"):
                counts.append(1)
                continue
            path = os.path.join(str(self.suite_dir), name)
            key = (path, *keys.get(path, (0, 0)))
            if key not in self._lines:
                self._lines[key] = _count(path)
            counts.append(self._lines[key])
        return counts

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
                    raise Abandoned("nobody has looked at the validation for a while")
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
            warnings=shown_warnings(report),
            warnings_total=len(report.warnings),
            distribution=report.distribution,
        )
        with self._lock:
            self._done = done
            job.state = "done"
            job.rows = []
        job.finished.set()

    # -- what the page reads ---------------------------------------------------------------

    def result(self, mark: Fingerprint | None = None) -> _Done | None:
        """The validation's result while it is current, else None."""
        with self._lock:
            done = self._done
        if done is None or done.mark != (mark if mark is not None else scan(self.suite_dir)[0]):
            return None
        return done

    def page(
        self, offset: int, limit: int, q: str = ""
    ) -> tuple[ValidationState, int, list[CaseRow], _Done | None]:
        """The validation's state (started when it is not current), how many cases match,
        the ``limit`` from ``offset``, and the validation's result when it is current. The
        cases come from the result (``q`` found in id, file, category, tags or source), else
        from their files (``q`` found in the file names)."""
        mark, files = scan(self.suite_dir)
        state = self._state(mark, files, True)
        done = self.result(mark)
        needle = q.lower()
        if done is not None:
            rows = done.rows
            if needle:
                rows = [r for r in rows if needle in _haystack(r)]
            return state, len(rows), rows[offset : offset + limit], done
        if needle:
            files = [name for name in files if needle in name.lower()]
        counts = self._counts(mark, files)
        return state, sum(counts), self._quick(files, counts, offset, limit), None

    def _quick(self, files: list[str], counts: list[int], offset: int, limit: int) -> list[CaseRow]:
        try:
            config = load_config(self.suite_dir)
            model = case_model(suite_modes(self.suite_dir, config))
        except CaseforgeError:
            return []
        rows: list[CaseRow] = []
        position = 0
        for name, count in zip(files, counts, strict=True):
            if position + count <= offset:
                position += count
                continue
            for item in iter_case_file(self.suite_dir / name, model):
                position += 1
                if position <= offset or isinstance(item, Problem):
                    continue
                rows.append(case_row(item, self.suite_dir))
                if len(rows) >= limit:
                    return rows
        return rows


def _haystack(row: CaseRow) -> str:
    return " ".join([row.id, row.file, row.category, row.source, *row.tags]).lower()


def shown_warnings(report: ValidationReport) -> list[str]:
    """The warnings the suite page lists: the near-duplicates capped as `validate` caps them."""
    shown = [p.format() for p in report.shown_warnings()]
    hidden = report.hidden_pairs()
    if hidden:
        shown.append(
            f"and {hidden:,} more near-duplicate pairs; `caseforge validate --json` lists them"
        )
    return shown
