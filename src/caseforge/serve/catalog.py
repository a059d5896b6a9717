"""What the web app serves: the runs of every store it reads, and the suites it was given.

Finished and stopped runs do not change, so their reports are built once and kept (a small
LRU); a running run is read again on every request, so its screen stays live."""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import json
import re
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from caseforge.calibrate.queue import LabelTask, label_tasks, save_label
from caseforge.case.identity import suite_identity
from caseforge.case.load import load_config, load_suite
from caseforge.case.validate import ValidationReport, validate_suite
from caseforge.compare.baseline import load_baseline
from caseforge.compare.digest import (
    CaseCells,
    CellSource,
    MemoryCells,
    RunDigest,
    StoredCells,
    digest_of,
    load_digest,
    save_digest,
)
from caseforge.compare.gate import GateResult
from caseforge.compare.gate import gate as apply_gate
from caseforge.compare.history import History, history
from caseforge.compare.outcomes import RunOutcomes, refuse_other_suite
from caseforge.compare.pairing import compare_runs
from caseforge.errors import CaseforgeError, UsageError
from caseforge.report.build import build_report, cases_trials
from caseforge.report.model import RunReport, TrialResult
from caseforge.report.show import trial_view
from caseforge.serve.calibration import Calibrations
from caseforge.serve.views import (
    CaseRow,
    CheckLine,
    ComparePage,
    ComparePair,
    GridPage,
    GridRow,
    LabelIn,
    LabelQueue,
    LabelSaved,
    LabelTaskView,
    RunList,
    RunPage,
    RunRow,
    SliceBar,
    SuitePage,
    TrialPage,
)
from caseforge.stats.intervals import wilson_interval
from caseforge.store.db import CaseQuery, RunInfo, RunStore, default_store_url, shown_url
from caseforge.vcs import user_name

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
CASE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,199}$")
GRID_PAGE = 50
PAIRS_SHOWN = 100  # changed cases shown with their trials; the counts are always whole
FILTERS = ("all", "failing", "errors", "flaky")


def valid_run_id(value: str) -> str:
    if not RUN_ID.match(value):
        raise UsageError(f"{value!r} is not a run id")
    return value


def valid_case_id(value: str) -> str:
    if not CASE_ID.match(value):
        raise UsageError(f"{value!r} is not a case id")
    return value


@dataclass
class Catalog:
    """The stores and suites one ``caseforge serve`` reads."""

    store_urls: list[str]
    suites: list[Path] = field(default_factory=list)
    editor_url: str | None = None  # e.g. "vscode://file/{path}:{line}"
    reviewer: str = ""  # who labels and reviews: --reviewer, else git's user.name
    _stores: dict[str, RunStore] = field(default_factory=dict, repr=False)
    _where: dict[str, str] = field(default_factory=dict, repr=False)  # run id -> store url
    _reports: OrderedDict[tuple[str, bool], RunReport] = field(
        default_factory=OrderedDict, repr=False
    )
    _digests: OrderedDict[str, RunDigest] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    notes: list[str] = field(default_factory=list)
    read_only: bool = False  # `serve --read-only`: stores opened read-only, nothing stored
    calibrations: Calibrations = field(default_factory=Calibrations, repr=False)
    _names: list[tuple[int, str]] | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        suites: list[Path],
        store: str | None = None,
        editor_url: str | None = None,
        reviewer: str | None = None,
        read_only: bool = False,
    ) -> Catalog:
        """The suites' own stores (each at its repository's top), or the one ``store`` names."""
        for suite_dir in suites:
            load_config(suite_dir)  # a folder that is not a suite is an error now, not later
        urls = [store] if store else list(dict.fromkeys(default_store_url(s) for s in suites))
        if not urls:
            urls = [default_store_url()]
        name = reviewer if reviewer is not None else user_name(suites[0] if suites else Path.cwd())
        return cls(
            store_urls=urls,
            suites=[s.resolve() for s in suites],
            editor_url=editor_url,
            reviewer=name,
            read_only=read_only,
        )

    def _store(self, url: str) -> RunStore | None:
        with self._lock:
            if url not in self._stores:
                try:
                    self._stores[url] = RunStore(url, create=False, read_only=self.read_only)
                except CaseforgeError as exc:
                    note = f"{shown_url(url)}: {exc.text}"
                    if note not in self.notes:
                        self.notes.append(note)
                    return None
            return self._stores[url]

    def close(self) -> None:
        for store in self._stores.values():
            store.close()

    # -- runs ---------------------------------------------------------------------------

    def infos(self) -> list[tuple[str, RunInfo]]:
        found: list[tuple[str, RunInfo]] = []
        for url in self.store_urls:
            store = self._store(url)
            if store is None:
                continue
            for info in store.list_runs(limit=500):
                self._where[info.id] = url
                found.append((url, info))
        return sorted(found, key=lambda pair: pair[1].created_at, reverse=True)

    def store_of(self, run_id: str) -> RunStore:
        valid_run_id(run_id)
        if run_id not in self._where:
            self.infos()
        url = self._where.get(run_id)
        store = self._store(url) if url else None
        if store is None:
            raise UsageError(f"no run {run_id!r} in the stores served")
        return store

    def report(self, run_id: str, raw: bool = False) -> RunReport:
        store = self.store_of(run_id)
        key = (run_id, raw)
        with self._lock:
            if key in self._reports:
                self._reports.move_to_end(key)
                return self._reports[key]
        report = build_report(store, run_id, raw)
        if report.status.value != "running":
            with self._lock:
                self._reports[key] = report
                while len(self._reports) > 16:
                    self._reports.popitem(last=False)
        return report

    def digest(self, run_id: str) -> RunDigest:
        return self.opened(run_id)[0]

    def opened(self, run_id: str) -> tuple[RunDigest, CellSource]:
        """The run's digest and where its case rows are read: stored for a finished run
        (built and stored on first use), built afresh for a running or stopped one."""
        store = self.store_of(run_id)
        with self._lock:
            if run_id in self._digests:
                self._digests.move_to_end(run_id)
                return self._digests[run_id], StoredCells(store, run_id)
        found = load_digest(store, run_id)
        if found is None:
            report = self.report(run_id)
            built = None if self.read_only else save_digest(store, report)
            if built is None:  # not finished, or --read-only: the rows stay in memory
                digest, cells = digest_of(report)
                return digest, MemoryCells(cells)
            found = built[0]
        with self._lock:
            self._digests[run_id] = found
            while len(self._digests) > 256:
                self._digests.popitem(last=False)
        return found, StoredCells(store, run_id)

    def run_list(self, status: str | None = None) -> RunList:
        rows = []
        for _, info in self.infos():
            if status and info.status != status:
                continue
            rows.append(self._row(info))
        return RunList(
            runs=rows, stores=[shown_url(u) for u in self.store_urls], notes=list(self.notes)
        )

    def run_row(self, run_id: str) -> RunRow:
        """One run's line of the runs list: what the live progress of a running run shows."""
        return self._row(self.store_of(run_id).get_run(run_id))

    def _row(self, info: RunInfo) -> RunRow:
        report = self.digest(info.id).report
        s = report.summary
        done = s.case_trials
        cases = s.cases
        if info.status != "finished":  # the report counts only cases with results so far
            cases = self.store_of(info.id).case_count(info.id) or cases
        total = cases * info.trials
        eta = None
        if info.status == "running" and done:
            started = dt.datetime.fromisoformat(info.created_at)
            elapsed = (dt.datetime.now(dt.UTC) - started).total_seconds()
            eta = max(0.0, elapsed / done * (total - done))
        return RunRow(
            id=info.id,
            suite=info.suite,
            config=info.config_name,
            agent=info.agent,
            dataset_commit=info.dataset_commit,
            dataset_dirty=info.dataset_dirty,
            status=info.status,
            created_at=info.created_at,
            cases=cases,
            trials=info.trials,
            case_trials_done=done,
            pass_rate=s.pass_rate,
            pass_rate_ci=s.pass_rate_ci if done else None,
            errors=s.errors,
            cost_usd=s.cost_usd,
            eta_s=eta,
        )

    # -- one run -----------------------------------------------------------------------

    def grid(
        self, run_id: str, page: int = 1, show: str = "all", tag: str = "", q: str = ""
    ) -> GridPage:
        return self._grid(run_id, self.opened(run_id)[1], page, show, tag, q)

    def _grid(
        self, run_id: str, cells: CellSource, page: int, show: str, tag: str, q: str
    ) -> GridPage:
        if show not in FILTERS:
            raise UsageError(f"show must be one of {', '.join(FILTERS)}, not {show!r}")
        query = CaseQuery(show, tag, q)
        total, rows = cells.page(query, (max(1, page) - 1) * GRID_PAGE, GRID_PAGE)
        pages = max(1, -(-total // GRID_PAGE))
        if page > pages:  # past the end: the last page
            page = pages
            total, rows = cells.page(query, (page - 1) * GRID_PAGE, GRID_PAGE)
        return GridPage(
            run_id=run_id,
            page=page,
            pages=pages,
            total_cases=total,
            rows=[_grid_row(c) for c in rows],
        )

    def run_page(
        self, run_id: str, page: int = 1, show: str = "all", tag: str = "", q: str = ""
    ) -> RunPage:
        digest, cells = self.opened(run_id)
        report = digest.report
        return RunPage(
            report=report,
            summary_rows=digest.headline,
            slices={
                dimension: [
                    SliceBar(
                        name=name,
                        case_trials=cell.case_trials,
                        passed=cell.passed,
                        pass_rate=cell.pass_rate,
                        ci=wilson_interval(cell.passed, cell.case_trials)
                        if cell.case_trials
                        else None,
                    )
                    for name, cell in slice_cells.items()
                ]
                for dimension, slice_cells in report.summary.slices.items()
            },
            most_failing_checks=report.summary.most_failing_checks,
            latencies=digest.latencies,
            costs=digest.costs,
            grid=self._grid(run_id, cells, page, show, tag, q),
        )

    def trial(self, run_id: str, case_id: str, trial: int | None = None) -> TrialPage:
        store = self.store_of(run_id)
        view = trial_view(store, run_id, valid_case_id(case_id), trial)
        info = store.get_run(run_id)
        case_file, text, lines = _case_file(Path(info.suite_path), case_id)
        checks = [
            CheckLine(
                name=c.name,
                mode=c.mode,
                status=c.status.value,
                expected=_json(c.expected),
                actual=_json(c.actual),
                reason=c.reason,
                # A spans check keeps a summary of the spans, not a value to set against
                # its expectations: no diff (its reason says what failed).
                diff=_diff(c.expected, c.actual)
                if c.status.value == "fail" and c.mode != "spans"
                else [],
                line=lines.get(c.name.split(".")[0]),
            )
            for c in view.checks
        ]
        editor = None
        if self.editor_url and case_file:
            path = Path(info.suite_path) / case_file
            first = next((c.line for c in checks if c.status != "pass" and c.line), 1)
            editor = self.editor_url.format(path=path, line=first)
        return TrialPage(
            view=view, checks=checks, case_file=case_file, case_text=text, editor_url=editor
        )

    # -- suites ------------------------------------------------------------------------

    def suite_names(self) -> list[tuple[int, str]]:
        """For the header of every page: read once, not on each request."""
        if self._names is None:
            self._names = [
                (i, load_config(suite_dir).name) for i, suite_dir in enumerate(self.suites)
            ]
        return self._names

    def suite_dir(self, index: int) -> Path:
        if not 0 <= index < len(self.suites):
            raise UsageError(f"no suite number {index} is served")
        return self.suites[index]

    def suite_page(self, index: int) -> SuitePage:
        suite_dir = self.suite_dir(index)
        report = validate_suite(suite_dir)
        name = load_config(suite_dir).name
        url = default_store_url(suite_dir)
        store = self._store(url if url in self.store_urls else self.store_urls[0])
        empty = History(suite=name, runs=[], cases={}, flaky=[])
        past = history(store, name, limit=10) if store else empty
        flips = {f.case: f.flip_rate for f in past.flaky}
        rows = []
        try:
            loaded = load_suite(suite_dir).cases
        except CaseforgeError:
            loaded = []  # the problems are listed instead
        for item in sorted(loaded, key=lambda c: c.case.id):
            case = item.case
            rows.append(
                CaseRow(
                    id=case.id,
                    file=str(item.path.relative_to(suite_dir))
                    if item.path.is_relative_to(suite_dir)
                    else str(item.path),
                    line=item.line,
                    category=case.category(),
                    split=case.split,
                    source=case.source,
                    tags=case.tags,
                    expect={n: check.render() for n, _, check in case.checks()},
                    flip_rate=flips.get(case.id),
                )
            )
        holdout, holdout_run = None, None
        for run in past.runs:
            if run.status.value == "finished":
                found = self.report(run.id).summary.holdout
                if found is not None:
                    holdout, holdout_run = found, run.id
                    break
        return SuitePage(
            index=index,
            name=name,
            folder=str(suite_dir),
            cases=rows,
            errors=[p.format() for p in report.errors],
            warnings=_shown_warnings(report),
            warnings_total=len(report.warnings),
            distribution=report.distribution,
            history=past,
            holdout=holdout,
            holdout_run=holdout_run,
        )

    # -- labels ------------------------------------------------------------------------

    def _label_suite(self, run_id: str) -> tuple[RunStore, Path]:
        store = self.store_of(run_id)
        suite_dir = Path(store.get_run(run_id).suite_path).resolve()
        if suite_dir not in self.suites:
            raise UsageError(
                f"run {run_id} belongs to {suite_dir}, which is not served: "
                "labels are written only into the suites given to `caseforge serve`"
            )
        return store, suite_dir

    def label_queue(self, run_id: str) -> LabelQueue:
        store, suite_dir = self._label_suite(run_id)
        tasks = label_tasks(store, run_id, suite_dir)
        first = tasks[0] if tasks else None
        return LabelQueue(
            run_id=run_id,
            suite=store.get_run(run_id).suite,
            remaining=len(tasks),
            next=_task_view(first) if first else None,
            labeler=self.reviewer,
        )

    def save_label(self, run_id: str, given: LabelIn) -> LabelSaved:
        store, suite_dir = self._label_suite(run_id)
        with self._lock:
            tasks = label_tasks(store, run_id, suite_dir)
            task = next(
                (
                    t
                    for t in tasks
                    if (t.case_id, t.trial, t.check, t.digest)
                    == (given.case_id, given.trial, given.check, given.digest)
                ),
                None,
            )
            if task is None:
                raise UsageError(
                    f"no output left to label for {given.case_id} trial {given.trial} "
                    f"{given.check} (already labeled, or not in run {run_id})"
                )
            path = save_label(suite_dir, task, given.labels, self.reviewer)
        return LabelSaved(path=str(path.relative_to(suite_dir)), remaining=len(tasks) - 1)

    # -- compare -----------------------------------------------------------------------

    def compare(
        self, run_a: str, run_b: str, baseline: str | None = None, trials: int = PAIRS_SHOWN
    ) -> ComparePage:
        """Run ``b`` against ``a``; the first ``trials`` pairs of each list come with their
        trials (the page loads the others when one is opened: :meth:`pair_trials`)."""
        (digest_a, cells_a), (digest_b, cells_b) = self.opened(run_a), self.opened(run_b)
        a, b = cells_a.outcomes(digest_a), cells_b.outcomes(digest_b)
        refuse_other_suite(a, b, force=False)
        comparison = compare_runs(a, b)

        failing = comparison.newly_failing[:PAIRS_SHOWN]
        passing = comparison.newly_passing[:PAIRS_SHOWN]
        shown = failing[:trials] + passing[:trials]
        trials_a = cases_trials(self.store_of(run_a), run_a, shown)
        trials_b = cases_trials(self.store_of(run_b), run_b, shown)

        def pair(case_id: str) -> ComparePair:
            return ComparePair(
                id=case_id,
                changed_checks=comparison.changed_checks.get(case_id, []),
                loaded=case_id in trials_a,
                a=trials_a.get(case_id, []),
                b=trials_b.get(case_id, []),
            )

        page = ComparePage(
            result=comparison.to_result(),
            newly_failing=[pair(c) for c in failing],
            newly_passing=[pair(c) for c in passing],
        )
        if baseline:
            page.gate, page.gate_error, page.baseline_file = self._gate(
                digest_b.report, b, baseline
            )
        return page

    def pair_trials(
        self, run_a: str, run_b: str, case_id: str
    ) -> tuple[list[TrialResult], list[TrialResult]]:
        """One case's trials in both runs, for a pair the compare page opens."""
        valid_case_id(case_id)
        return (
            cases_trials(self.store_of(run_a), run_a, [case_id])[case_id],
            cases_trials(self.store_of(run_b), run_b, [case_id])[case_id],
        )

    def _gate(
        self, report: RunReport, run: RunOutcomes, baseline: str
    ) -> tuple[GateResult | None, str | None, str]:
        """The gate on ``run`` against ``baseline``, a file of the run's own suite (as
        ``caseforge gate`` reads it, and refused like it when it is another suite's), or
        why not; and the file read."""
        suite_dir = self._suite_of(report)
        path = self._baseline_path(suite_dir, baseline)
        try:
            rules = load_config(suite_dir).gate.rules
            base = load_baseline(path)
            notes = refuse_other_suite(base, run, force=False)
            result = apply_gate(run, base, rules)
        except CaseforgeError as exc:
            return None, exc.text, str(path)
        result.notes[:0] = notes
        return result, None, str(path)

    def _suite_of(self, report: RunReport) -> Path:
        """The served folder of the run's suite: the folder it ran in, else a served suite
        with its identity (the same suite checked out elsewhere, e.g. a CI runner's)."""
        if report.suite_path:
            suite_dir = Path(report.suite_path).resolve()
            if suite_dir in self.suites:
                return suite_dir
        for suite_dir in self.suites:
            name = load_config(suite_dir).name
            if report.suite_identity is None:
                if name == report.suite:
                    return suite_dir
            elif suite_identity(suite_dir, name).same_suite(report.suite_identity):
                return suite_dir
        raise UsageError(
            f"run {report.run_id} is of suite {report.suite!r}, which is not served: a run "
            "is gated against a baseline of its own suite, so serve that suite too"
        )

    def _baseline_path(self, suite_dir: Path, name: str) -> Path:
        """A baseline file inside ``suite_dir`` (never outside it, nor in another suite)."""
        candidate = (suite_dir / name).resolve()
        if candidate.is_relative_to(suite_dir) and candidate.is_file():
            return candidate
        raise UsageError(
            f"{name!r} is not a baseline file in suite {load_config(suite_dir).name!r} "
            f"({suite_dir}), "
            "the suite of the run gated: a run is gated against its own suite's baseline"
        )

    def baselines(self, run_id: str = "") -> list[str]:
        """The baseline files to choose from: those of run ``run_id``'s suite, else every
        served suite's (each name once)."""
        suites = self.suites
        if run_id:
            with contextlib.suppress(CaseforgeError):  # no such run, or its suite unserved
                suites = [self._suite_of(self.digest(run_id).report)]
        found = [str(p.relative_to(s)) for s in suites for p in sorted(s.glob("*.json"))]
        return list(dict.fromkeys(found))


def _task_view(task: LabelTask) -> LabelTaskView:
    fields = {**asdict(task), "input": _json(task.input)}
    return LabelTaskView(digest=task.digest, **fields)


def _wilson(passed: int, n: int) -> tuple[float, float] | None:
    return wilson_interval(passed, n) if n else None


def _flaky(statuses: list[str]) -> bool:
    return "pass" in statuses and any(s in ("fail", "error") for s in statuses)


def _grid_row(case: CaseCells) -> GridRow:
    return GridRow(
        id=case.id,
        tags=case.tags,
        category=case.category,
        statuses=case.statuses,
        flaky=_flaky(case.statuses),
    )


def _json(value: object) -> object:
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _diff(expected: object, actual: object) -> list[str]:
    """A readable diff of two structured values of one kind (none when either is a scalar,
    or when a list of expected items meets a text: the reason says it better)."""
    if not (isinstance(expected, dict) and isinstance(actual, dict)) and not (
        isinstance(expected, list) and isinstance(actual, list)
    ):
        return []
    left = json.dumps(expected, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    right = json.dumps(actual, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    lines = difflib.unified_diff(
        left.splitlines(), right.splitlines(), "expected", "actual", lineterm="", n=2
    )
    return list(lines)[2:]


def _case_file(suite_dir: Path, case_id: str) -> tuple[str | None, str | None, dict[str, int]]:
    """The case's YAML file in the suite (by its id), its text, and each expect key's line."""
    from caseforge.case.positions import round_trip_load

    cases = (suite_dir / "cases").resolve()
    for path in (cases / f"{case_id}.yaml", cases / f"{case_id}.yml"):
        if not path.is_file() or not path.resolve().is_relative_to(cases):
            continue
        text = path.read_text(encoding="utf-8")
        lines: dict[str, int] = {}
        try:
            data = round_trip_load(text)
            expect = data.get("expect") if hasattr(data, "get") else None
            if expect is not None and hasattr(expect, "lc"):
                for key in expect:
                    lines[str(key)] = expect.lc.key(key)[0] + 1
        except Exception:  # a file changed since the run: show it without anchors
            lines = {}
        return str(path.relative_to(suite_dir.resolve())), text, lines
    return None, None, {}


def _shown_warnings(report: ValidationReport) -> list[str]:
    """The warnings the suite page lists: the near-duplicates capped as `validate` caps them."""
    shown = [p.format() for p in report.shown_warnings()]
    hidden = report.hidden_pairs()
    if hidden:
        shown.append(
            f"and {hidden:,} more near-duplicate pairs; `caseforge validate --json` lists them"
        )
    return shown
