"""What the web app serves: the runs of every store it reads, and the suites it was given.

Finished and stopped runs do not change, so their reports are built once and kept (a small
LRU); a running run is read again on every request, so its screen stays live."""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import functools
import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ParamSpec, TypeVar

from caseforge.calibrate.queue import LabelTask, label_tasks, save_label
from caseforge.case.identity import suite_identity
from caseforge.case.load import load_config
from caseforge.compare.baseline import load_baseline
from caseforge.compare.digest import (
    CaseCells,
    CellSource,
    MemoryCells,
    RunDigest,
    StoredCells,
    compare_stored,
    digest_of,
    load_digest,
    save_digest,
)
from caseforge.compare.gate import GateResult
from caseforge.compare.gate import gate as apply_gate
from caseforge.compare.history import History, HistoryRun, case_letters, flaky_cases, flips
from caseforge.compare.outcomes import RunOutcomes, refuse_other_suite, run_outcomes
from caseforge.compare.pairing import Comparison, compare_runs
from caseforge.errors import CaseforgeError, UsageError
from caseforge.report.build import build_report, cases_trials
from caseforge.report.model import RunReport, TrialResult
from caseforge.report.show import TrialView, trial_view
from caseforge.results import RunStatus, TrialStatus
from caseforge.serve.calibration import Calibrations
from caseforge.serve.suites import PROBLEMS_SHOWN, SuiteIndex
from caseforge.serve.textdiff import word_diff
from caseforge.serve.views import (
    CheckChange,
    CheckLine,
    ComparePage,
    ComparePair,
    CostSplit,
    GridCell,
    GridPage,
    GridRow,
    HeatRow,
    InputField,
    LabelIn,
    LabelQueue,
    LabelSaved,
    LabelTaskView,
    RunChoice,
    RunList,
    RunPage,
    RunRow,
    SliceBar,
    SuitePage,
    TextDiff,
    TrendPoint,
    TrendsPage,
    TrialLink,
    TrialPage,
)
from caseforge.stats.intervals import wilson_interval
from caseforge.store.db import CaseQuery, RunInfo, RunStore, default_store_url, shown_url
from caseforge.vcs import user_name

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
CASE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,199}$")
GRID_PAGE = 50
RUNS_PAGE = 50
SUITE_PAGE = 100
RUNS_READ = 1_000  # the newest runs of each store the runs list reads
TREND_RUNS = 60  # the newest runs of a configuration the trends page plots
PAIRS_SHOWN = 100  # changed cases shown with their trials; the counts are always whole
FILTERS = ("all", "failing", "errors", "flaky")
RUN_SORTS = ("started", "run", "suite", "config", "cases", "pass_rate", "errors", "cost", "status")

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")


class StoredDataError(CaseforgeError):
    """A run's stored rows cannot be read (a damaged or foreign store): the page says so."""


def reads_store(method: Callable[P, T]) -> Callable[P, T]:
    """A damaged stored row (JSON that does not parse, a status no caseforge writes, a
    snapshot that does not validate) becomes a one-line :class:`StoredDataError`, which
    the app shows as an error page or row, never a 500."""

    @functools.wraps(method)
    def reading(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except CaseforgeError:
            raise
        except (ValueError, KeyError, TypeError) as exc:  # JSON and pydantic errors included
            run = next((a for a in args[1:] if isinstance(a, str)), "?")
            log.warning("run %s: stored data unreadable", run, exc_info=True)
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise StoredDataError(
                f"run {run}: its stored results cannot be read ({type(exc).__name__}: {text})"
            ) from None

    return reading


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
    _rows: dict[str, RunRow] = field(default_factory=dict, repr=False)  # finished runs' lines
    _indexes: dict[Path, SuiteIndex] = field(default_factory=dict, repr=False)
    _baseline_runs: dict[Path, tuple[tuple[int, int], str | bool | None]] = field(
        default_factory=dict, repr=False
    )
    _comparisons: OrderedDict[tuple[str, str, str, str], Comparison] = field(
        default_factory=OrderedDict, repr=False
    )

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

    def shown_stores(self) -> list[str]:
        """The stores served, as the header names them (passwords hidden)."""
        return [shown_url(u) for u in self.store_urls]

    # -- runs ---------------------------------------------------------------------------

    def infos(self) -> list[tuple[str, RunInfo]]:
        found: list[tuple[str, RunInfo]] = []
        for url in self.store_urls:
            store = self._store(url)
            if store is None:
                continue
            for info in store.list_runs(limit=RUNS_READ):
                self._where[info.id] = url
                found.append((url, info))
        return sorted(found, key=lambda pair: pair[1].created_at, reverse=True)

    def store_of(self, run_id: str) -> RunStore:
        """The store holding ``run_id``, asked each time (by its key): a run pruned while
        the app serves (`caseforge store prune`) is gone, and what was kept of it too."""
        valid_run_id(run_id)
        url = self._where.get(run_id)
        store = self._store(url) if url else None
        if store is None or not store.has_run(run_id):
            self._forget(run_id)
            store = None
            for candidate in self.store_urls:  # a run older than the list is found too
                opened = self._store(candidate)
                if opened is not None and opened.has_run(run_id):
                    self._where[run_id], store = candidate, opened
                    break
        if store is None:
            raise UsageError(f"no run {run_id!r} in the stores served")
        return store

    def _forget(self, run_id: str) -> None:
        """Drop what was kept of a run no store holds any more."""
        with self._lock:
            self._where.pop(run_id, None)
            self._rows.pop(run_id, None)
            self._digests.pop(run_id, None)
            for raw in (False, True):
                self._reports.pop((run_id, raw), None)
            for key in [k for k in self._comparisons if run_id in k[:2]]:
                del self._comparisons[key]

    @reads_store
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

    @reads_store
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

    def run_list(
        self,
        status: str | None = None,
        q: str = "",
        sort: str = "started",
        order: str = "desc",
        page: int = 1,
    ) -> RunList:
        """The runs of every store, filtered (``status``; ``q`` in the id, suite, config,
        agent or status), sorted (one of :data:`RUN_SORTS`, ``asc`` or ``desc``) and a page
        of them. A run that cannot be read is a row saying why."""
        if sort not in RUN_SORTS:
            raise UsageError(f"sort must be one of {', '.join(RUN_SORTS)}, not {sort!r}")
        if order not in ("asc", "desc"):
            raise UsageError(f"order must be asc or desc, not {order!r}")
        needle = q.lower()
        rows = []
        for _, info in self.infos():
            if status and info.status != status:
                continue
            text = " ".join([info.id, info.suite, info.config_name or "", info.agent, info.status])
            if needle and needle not in text.lower():
                continue
            rows.append(self._row(info))
        if sort != "started" or order != "desc":  # infos() are newest first already
            rows.sort(key=_run_key(sort), reverse=order == "desc")
        pages = max(1, -(-len(rows) // RUNS_PAGE))
        page = min(max(1, page), pages)
        return RunList(
            runs=rows[(page - 1) * RUNS_PAGE : page * RUNS_PAGE],
            stores=[shown_url(u) for u in self.store_urls],
            notes=list(self.notes),
            total=len(rows),
            page=page,
            pages=pages,
        )

    def run_row(self, run_id: str) -> RunRow:
        """One run's line of the runs list: what the live progress of a running run shows."""
        return self._row(self.store_of(run_id).get_run(run_id))

    def _row(self, info: RunInfo) -> RunRow:
        """The run's line, kept for a finished run (it does not change); a run whose stored
        rows cannot be read is a line saying so, and the others still show."""
        if info.status == "finished":
            with self._lock:
                kept = self._rows.get(info.id)
            if kept is not None:
                return kept
        try:
            row = self._read_row(info)
        except CaseforgeError as exc:
            return RunRow(
                id=info.id, suite=info.suite, config=info.config_name, agent=info.agent,
                dataset_commit=info.dataset_commit, dataset_dirty=info.dataset_dirty,
                status=info.status, created_at=info.created_at, cases=0, trials=info.trials,
                case_trials_done=0, unfinished=info.status != "finished", problem=exc.text,
            )  # fmt: skip
        if info.status == "finished":
            with self._lock:
                self._rows[info.id] = row
        return row

    def _read_row(self, info: RunInfo) -> RunRow:
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
            unfinished=info.status != "finished",
        )

    # -- one run -----------------------------------------------------------------------

    def grid(
        self, run_id: str, page: int = 1, show: str = "all", tag: str = "", q: str = ""
    ) -> GridPage:
        digest, cells = self.opened(run_id)
        return self._grid(run_id, digest.report, cells, page, show, tag, q)

    @reads_store
    def _grid(
        self,
        run_id: str,
        report: RunReport,
        cells: CellSource,
        page: int,
        show: str,
        tag: str,
        q: str,
    ) -> GridPage:
        if show not in FILTERS:
            raise UsageError(f"show must be one of {', '.join(FILTERS)}, not {show!r}")
        query = CaseQuery(show, tag, q)
        total, rows = cells.page(query, (max(1, page) - 1) * GRID_PAGE, GRID_PAGE)
        pages = max(1, -(-total // GRID_PAGE))
        if page > pages:  # past the end: the last page
            page = pages
            total, rows = cells.page(query, (page - 1) * GRID_PAGE, GRID_PAGE)
        failing = self.store_of(run_id).failing_checks(run_id, [c.id for c in rows])
        unfinished = report.status is not RunStatus.FINISHED
        return GridPage(
            run_id=run_id,
            page=page,
            pages=pages,
            total_cases=total,
            rows=[_grid_row(c, report.trials, failing) for c in rows],
            unfinished=unfinished,
        )

    def run_page(
        self, run_id: str, page: int = 1, show: str = "all", tag: str = "", q: str = ""
    ) -> RunPage:
        digest, cells = self.opened(run_id)
        report = digest.report
        judge = report.judge
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
            grid=self._grid(run_id, report, cells, page, show, tag, q),
            cost=CostSplit(
                agent_usd=report.summary.cost_usd,
                judge_usd=judge.cost_usd if judge is not None else 0.0,
                simulated_user_usd=report.summary.simulated_user_cost_usd,
            ),
            compare_with=self.compare_choices(run_id),
            suite_index=self._served_index(report),
            labelable=bool(report.suite_path) and Path(report.suite_path).resolve() in self.suites,
        )

    def _served_index(self, report: RunReport) -> int | None:
        """The number of the run's suite among those served, or None: no link to a suite
        screen that is not there."""
        try:
            return self.suites.index(self._suite_of(report))
        except CaseforgeError:
            return None

    @reads_store
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

        def link(found: tuple[str, int] | None) -> TrialLink | None:
            return TrialLink(case_id=found[0], trial=found[1]) if found else None

        here = (run_id, view.case_id, view.trial)
        return TrialPage(
            view=view,
            checks=checks,
            case_file=case_file,
            case_text=text,
            editor_url=editor,
            previous=link(store.next_result(*here, back=True)),
            next=link(store.next_result(*here)),
            next_failing=link(store.next_result(*here, failing=True)),
            cost=_trial_cost(view),
            inputs=[_input_field(k, v) for k, v in view.input.items()],
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

    def suite_index(self, index: int) -> SuiteIndex:
        suite_dir = self.suite_dir(index)
        with self._lock:
            found = self._indexes.get(suite_dir)
            if found is None:
                found = self._indexes[suite_dir] = SuiteIndex(suite_dir)
        return found

    def _suite_store(self, suite_dir: Path) -> RunStore | None:
        url = default_store_url(suite_dir)
        return self._store(url if url in self.store_urls else self.store_urls[0])

    def suite_page(self, index: int, page: int = 1, q: str = "") -> SuitePage:
        """One page of the suite's cases (read from their files, or from the validation once
        it is done), the validation's progress or result, and the page's cases' history."""
        suite_dir = self.suite_dir(index)
        name = load_config(suite_dir).name
        cases = self.suite_index(index)
        offset = (max(1, page) - 1) * SUITE_PAGE
        state, total, rows, done = cases.page(offset, SUITE_PAGE, q)
        pages = max(1, -(-total // SUITE_PAGE))
        if page > pages:
            page = pages
            state, total, rows, done = cases.page((page - 1) * SUITE_PAGE, SUITE_PAGE, q)
        store = self._suite_store(suite_dir)
        runs = store.list_runs(name, limit=10) if store else []
        ids = [r.id for r in runs]
        letters = case_letters(store, ids, [r.id for r in rows]) if store else {}
        flaky = flaky_cases(store, ids) if store else []
        rows = [r.model_copy(update={"flip_rate": _flip_rate(letters.get(r.id, {}))}) for r in rows]
        past = History(
            suite=name,
            runs=[
                HistoryRun(
                    id=r.id,
                    config=r.config_name,
                    created_at=r.created_at,
                    status=RunStatus(r.status),
                )
                for r in runs
            ],
            cases=letters,
            flaky=flaky,
        )
        holdout, holdout_run = None, None
        for run in runs:
            if run.status == "finished":
                with contextlib.suppress(CaseforgeError):
                    found = self.digest(run.id).report.summary.holdout
                    if found is not None:
                        holdout, holdout_run = found, run.id
                        break
        errors = done.errors if done else []
        warnings = done.warnings if done else []
        left_out = max(0, len(errors) - PROBLEMS_SHOWN) + max(0, len(warnings) - PROBLEMS_SHOWN)
        return SuitePage(
            index=index,
            name=name,
            folder=str(suite_dir),
            cases=rows,
            total_cases=total,
            page=page,
            pages=pages,
            q=q,
            validation=state,
            errors=errors[:PROBLEMS_SHOWN],
            warnings=warnings[:PROBLEMS_SHOWN],
            warnings_total=done.warnings_total if done else 0,
            problems_left_out=left_out,
            distribution=done.distribution if done else {},
            history=past,
            holdout=holdout,
            holdout_run=holdout_run,
        )

    # -- trends ------------------------------------------------------------------------

    def trends(self, index: int, config: str | None = None) -> TrendsPage:
        """The finished runs of one configuration of the suite, oldest first: pass rate with
        its interval, cost by who spent it, latency p95; and the flakiest cases over them."""
        suite_dir = self.suite_dir(index)
        name = load_config(suite_dir).name
        store = self._suite_store(suite_dir)
        runs = store.list_runs(name, limit=TREND_RUNS * 4) if store else []
        finished = [r for r in runs if r.status == "finished"]
        configs = list(dict.fromkeys(r.config_name for r in finished))
        if config is None or config == "":
            config = finished[0].config_name if finished else None
        elif config not in configs:
            raise UsageError(
                f"suite {name!r} has no finished run of configuration {config!r}"
                + (f" (it has: {', '.join(str(c) for c in configs)})" if configs else "")
            )
        chosen = [r for r in finished if r.config_name == config][:TREND_RUNS][::-1]
        points = []
        for run in chosen:
            try:
                report = self.digest(run.id).report
            except CaseforgeError:
                continue  # a damaged run: the runs list says why
            s = report.summary
            judge = report.judge
            points.append(
                TrendPoint(
                    run_id=run.id,
                    created_at=run.created_at,
                    pass_rate=s.pass_rate,
                    ci=s.pass_rate_ci if s.case_trials else None,
                    cost=CostSplit(
                        agent_usd=s.cost_usd,
                        judge_usd=judge.cost_usd if judge else 0.0,
                        simulated_user_usd=s.simulated_user_cost_usd,
                    ),
                    latency_p95_s=s.latency_p95_s,
                    case_trials=s.case_trials,
                )
            )
        ids = [p.run_id for p in points]
        heat = []
        if store is not None and ids:
            flaky = flaky_cases(store, ids, top=20)
            letters = case_letters(store, ids, [f.case for f in flaky])
            for f in flaky:
                by_run = letters.get(f.case, {})
                heat.append(
                    HeatRow(
                        case=f.case,
                        flip_rate=f.flip_rate,
                        cells=[_share(by_run.get(i)) for i in ids],
                        letters=[by_run.get(i, "") for i in ids],
                    )
                )
        return TrendsPage(
            index=index, suite=name, config=config, configs=configs, points=points, heat=heat
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

    def label_queue(self, run_id: str, skip: int = 0) -> LabelQueue:
        """What is left to label; a labels file that cannot be read is named (and its case's
        outputs offered again), never the whole screen's failure."""
        store, suite_dir = self._label_suite(run_id)
        problems: list[str] = []
        tasks = label_tasks(store, run_id, suite_dir, problems)
        first = tasks[min(max(0, skip), len(tasks) - 1)] if tasks else None
        return LabelQueue(
            run_id=run_id,
            suite=store.get_run(run_id).suite,
            remaining=len(tasks),
            next=_task_view(first) if first else None,
            labeler=self.reviewer,
            problems=problems,
        )

    def save_label(self, run_id: str, given: LabelIn) -> LabelSaved:
        store, suite_dir = self._label_suite(run_id)
        with self._lock:
            tasks = label_tasks(store, run_id, suite_dir, [])
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
        trials (the page loads the others when one is opened: :meth:`pair_trials`). Two
        finished runs of one store are paired in its digest rows, a case's four short
        columns each; the gate, asked for, reads run ``b``'s outcomes whole."""
        (digest_a, cells_a), (digest_b, cells_b) = self.opened(run_a), self.opened(run_b)
        store_a, store_b = self.store_of(run_a), self.store_of(run_b)
        bare_a, bare_b = run_outcomes(digest_a.report, {}), run_outcomes(digest_b.report, {})
        refuse_other_suite(bare_a, bare_b, force=False)
        stored = isinstance(cells_a, StoredCells) and isinstance(cells_b, StoredCells)
        if stored and store_a is store_b:
            comparison = self._compared(store_a, digest_a, digest_b)
        else:
            comparison = compare_runs(cells_a.outcomes(digest_a), cells_b.outcomes(digest_b))

        failing = comparison.newly_failing[:PAIRS_SHOWN]
        passing = comparison.newly_passing[:PAIRS_SHOWN]
        shown = failing[:trials] + passing[:trials]
        trials_a = cases_trials(store_a, run_a, shown)
        trials_b = cases_trials(store_b, run_b, shown)

        def pair(case_id: str) -> ComparePair:
            loaded = case_id in trials_a
            side_a, side_b = trials_a.get(case_id, []), trials_b.get(case_id, [])
            return ComparePair(
                id=case_id,
                changed_checks=comparison.changed_checks.get(case_id, []),
                loaded=loaded,
                a=side_a,
                b=side_b,
                check_changes=check_changes(side_a, side_b) if loaded else [],
                diff=pair_diff(side_a, side_b) if loaded else None,
            )

        page = ComparePage(
            result=comparison.to_result(),
            newly_failing=[pair(c) for c in failing],
            newly_passing=[pair(c) for c in passing],
        )
        if baseline:
            page.gate, page.gate_error, page.baseline_file = self._gate(
                digest_b.report, cells_b.outcomes(digest_b), baseline
            )
        return page

    @reads_store
    def _compared(self, store: RunStore, a: RunDigest, b: RunDigest) -> Comparison:
        """Two finished runs do not change (a resumed one finishes again later): their
        comparison is kept, the newest 4."""
        key = (
            a.report.run_id, b.report.run_id, a.report.finished_at or "", b.report.finished_at or ""
        )  # fmt: skip
        with self._lock:
            if key in self._comparisons:
                self._comparisons.move_to_end(key)
                return self._comparisons[key]
        found = compare_stored(store, a, b)
        with self._lock:
            self._comparisons[key] = found
            while len(self._comparisons) > 4:
                self._comparisons.popitem(last=False)
        return found

    def compare_choices(self, run_id: str) -> list[RunChoice]:
        """The runs of ``run_id``'s suite to compare it with, the default first and saying
        why: the run the suite's baseline was made from, else the previous finished run
        (else, for the oldest, the next one); never ``run_id`` itself. Unfinished runs come
        last, saying so. No default (no ``why`` on any): no other finished run."""
        try:
            report = self.digest(run_id).report
        except CaseforgeError:
            return []
        same = [i for _, i in self.infos() if i.id != run_id and i.suite == report.suite]
        base_run, base_file = None, None
        with contextlib.suppress(CaseforgeError):
            base_file, base_run = self.suite_baseline(self._suite_of(report))
        finished = [i for i in same if i.status == "finished"]  # newest first
        older = [i for i in finished if (i.created_at, i.id) < (report.created_at, run_id)]
        default, why = None, ""
        if base_run is not None and any(i.id == base_run for i in finished):
            default, why = base_run, f"the run the suite's baseline ({base_file}) was made from"
        elif older:
            default, why = older[0].id, "the previous finished run"
        elif finished:
            default, why = finished[-1].id, "the next finished run: none finished before it"
        choices: list[RunChoice] = []
        for info in same:
            label = f"{info.id} · {info.config_name or ''} · {info.created_at[:16]}"
            if info.status != "finished":
                label += f" · {info.status.upper()}"
            chosen = info.id == default
            choices.append(
                RunChoice(
                    id=info.id,
                    label=label,
                    why=why if chosen else "",
                    baseline=base_file if chosen and info.id == base_run else None,
                )
            )
        ids = {i.id for i in finished}
        choices.sort(key=lambda c: (not c.why, c.id not in ids))  # stable: newest first in each
        return choices

    def suite_baseline(self, suite_dir: Path) -> tuple[str | None, str | None]:
        """The suite's baseline file (``baseline.json`` first, else the first ``*.json``
        that reads as a baseline) and the run it was made from."""
        names = sorted(suite_dir.glob("*.json"), key=lambda p: (p.name != "baseline.json", p))
        for path in names:
            run_id = self._baseline_run(path)
            if run_id is None or isinstance(run_id, str):
                return str(path.relative_to(suite_dir)), run_id
        return None, None

    def _baseline_run(self, path: Path) -> str | bool | None:
        """The run a baseline file was made from (False: the file is no baseline), kept
        while the file is unchanged: a baseline of 100,000 cases takes a while to read."""
        try:
            stat = path.stat()
        except OSError:
            return False
        key = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            kept = self._baseline_runs.get(path)
        if kept is not None and kept[0] == key:
            return kept[1]
        try:
            found: str | bool | None = load_baseline(path).run_id
        except CaseforgeError:
            found = False
        with self._lock:
            self._baseline_runs[path] = (key, found)
        return found

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


def _grid_row(case: CaseCells, planned: int, failing: dict[tuple[str, int], list[str]]) -> GridRow:
    """A case's cells: each planned trial, stored or (an unfinished run's) not run."""
    numbers = case.trials or list(range(1, len(case.statuses) + 1))
    stored = dict(zip(numbers, case.statuses, strict=True))
    cells = [
        GridCell(
            trial=n,
            status=stored.get(n, "not run"),
            stored=n in stored,
            failing=failing.get((case.id, n), []),
        )
        for n in sorted(set(range(1, planned + 1)) | set(stored))
    ]
    return GridRow(
        id=case.id,
        tags=case.tags,
        category=case.category,
        statuses=case.statuses,
        flaky=_flaky(case.statuses),
        cells=cells,
        stored=bool(stored),
    )


def _run_key(sort: str) -> Callable[[RunRow], tuple[int, object]]:
    """A runs-list sort key; rows without the value (a run not readable) sort last."""
    fields: dict[str, Callable[[RunRow], object]] = {
        "started": lambda r: r.created_at,
        "run": lambda r: r.id,
        "suite": lambda r: r.suite,
        "config": lambda r: r.config or "",
        "cases": lambda r: r.cases * r.trials,
        "pass_rate": lambda r: r.pass_rate,
        "errors": lambda r: r.errors,
        "cost": lambda r: r.cost_usd,
        "status": lambda r: r.status,
    }
    read = fields[sort]

    def key(row: RunRow) -> tuple[int, object]:
        value = read(row)
        return (0 if value is None or row.problem else 1, value if value is not None else 0)

    return key


def _trial_cost(view: TrialView) -> CostSplit:
    """The agent's, the judge's (from its checks; None when a judged check recorded no cost,
    as runs before 0.2 did) and the simulated user's spend on one case-trial."""
    judged = [c for c in view.checks if c.mode == "judge" and c.status.value in ("pass", "fail")]
    judge: float | None = sum(c.cost_usd or 0.0 for c in judged)
    if any(c.cost_usd is None for c in judged):
        judge = None
    user = view.user_usage or {}
    spent = user.get("cost_usd")
    return CostSplit(
        agent_usd=view.cost_usd,
        judge_usd=judge,
        simulated_user_usd=float(spent) if isinstance(spent, int | float) else 0.0,
    )


def _input_field(name: str, value: object) -> InputField:
    if isinstance(value, str):
        return InputField(name=name, text=value, is_text=True)
    text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return InputField(name=name, text=text, is_text=False)


def _flip_rate(by_run: dict[str, str]) -> float | None:
    flipped, pairs = flips(by_run)
    return flipped / pairs if flipped else None


def _share(letters: str | None) -> float | None:
    if not letters:
        return None
    return letters.count(TrialStatus.PASS.letter) / len(letters)


def _side(statuses: list[str]) -> str:
    """One check over a side's trials: its status, or ``k of n pass``."""
    if not statuses:
        return "absent"
    if len(set(statuses)) == 1:
        return statuses[0] if len(statuses) == 1 else f"{statuses[0]} ×{len(statuses)}"
    return f"{statuses.count('pass')} of {len(statuses)} pass"


def check_changes(a: list[TrialResult], b: list[TrialResult]) -> list[CheckChange]:
    """Each check whose verdicts differ between the two sides' trials, e.g.
    ``reply.must_include: pass → fail``."""
    names: dict[str, None] = {}
    for trial in [*a, *b]:
        for check in trial.checks:
            names.setdefault(check.name, None)
    found = []
    for name in names:
        left = [c.status.value for t in a for c in t.checks if c.name == name]
        right = [c.status.value for t in b for c in t.checks if c.name == name]
        if left != right:
            found.append(CheckChange(name=name, a=_side(left), b=_side(right)))
    return found


def pair_diff(a: list[TrialResult], b: list[TrialResult]) -> TextDiff | None:
    """The replies (else the outputs) of the first trial whose status differs between the
    sides (else the first), word by word."""
    if not a or not b:
        return None
    index = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x.status != y.status), 0)
    index = min(index, len(a) - 1, len(b) - 1)
    left, right = a[index], b[index]
    if left.reply is not None or right.reply is not None:
        what, text_a, text_b = "reply", left.reply or "", right.reply or ""
    elif left.output is not None or right.output is not None:
        what = "output"
        text_a = json.dumps(left.output, ensure_ascii=False, indent=1, sort_keys=True)
        text_b = json.dumps(right.output, ensure_ascii=False, indent=1, sort_keys=True)
    else:
        return None
    return TextDiff(
        what=what, trial_a=left.trial, trial_b=right.trial, parts=word_diff(text_a, text_b)
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
