"""``caseforge history``: each case's outcomes across the suite's runs, and flaky cases.

A case is flaky when trials of one run disagree (with one configuration, one dataset). Its
flip rate is the share of adjacent trials within a run whose outcome differs, pooled over
runs; a case that passes under one configuration and fails under another is not flaky.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from pydantic import BaseModel

from caseforge.errors import UsageError
from caseforge.report.model import selection
from caseforge.results import RunStatus, TrialStatus, trial_letters
from caseforge.store.db import RunStore


class HistoryRun(BaseModel):
    """One run, a column of the history."""

    id: str
    config: str | None
    created_at: str
    status: RunStatus
    selection: str | None = None  # how the run was narrowed (--case, --tag), else None


class FlakyCase(BaseModel):
    case: str
    flip_rate: float
    flips: int
    pairs: int


class History(BaseModel):
    """Outcomes per case per run (newest run first) and the flaky cases.

    ``cases`` maps a case id to its row: run id → the trials as letters (``PPF``)."""

    suite: str
    runs: list[HistoryRun]
    cases: dict[str, dict[str, str]]
    flaky: list[FlakyCase]


def history(store: RunStore, suite: str, case_id: str | None = None, limit: int = 10) -> History:
    """Outcomes per case per run (newest first) and the flaky cases."""
    runs = store.list_runs(suite, limit=limit)
    table: dict[str, dict[str, str]] = defaultdict(dict)
    for run in runs:
        per_case: dict[str, list[tuple[int, TrialStatus]]] = defaultdict(list)
        for cid, trial, status in store.statuses(run.id):
            if case_id is None or cid == case_id:
                per_case[cid].append((trial, TrialStatus(status)))
        for cid, trials in per_case.items():
            table[cid][run.id] = trial_letters(s for _, s in sorted(trials))
    if case_id is not None and runs and case_id not in table:
        raise UsageError(f"no case {case_id!r} in the last {len(runs)} run(s) of suite {suite!r}")
    flaky = flaky_of(table)
    flaky.sort(key=lambda f: (-f.flip_rate, f.case))
    return History(
        suite=suite,
        runs=[
            HistoryRun(
                id=r.id,
                config=r.config_name,
                created_at=r.created_at,
                status=RunStatus(r.status),
                selection=selection(r.options),
            )
            for r in runs
        ],
        cases={cid: table[cid] for cid in sorted(table)},
        flaky=flaky,
    )


def flips(by_run: dict[str, str]) -> tuple[int, int]:
    """A case's flips and adjacent trial pairs within each run (run → ``PPF``), pooled: a
    flip is a pass next to anything else."""
    passed = TrialStatus.PASS.letter
    flipped = pairs = 0
    for letters in by_run.values():
        for x, y in itertools.pairwise(letters):
            pairs += 1
            flipped += (x == passed) != (y == passed)
    return flipped, pairs


def flaky_of(table: dict[str, dict[str, str]]) -> list[FlakyCase]:
    """The cases of ``table`` (case → run → letters) whose trials of one run disagree."""
    found = []
    for cid, by_run in table.items():
        flipped, pairs = flips(by_run)
        if flipped:
            found.append(FlakyCase(case=cid, flip_rate=flipped / pairs, flips=flipped, pairs=pairs))
    return found


def history_text(data: History) -> str:
    runs = data.runs
    if not runs:
        return f"no runs of suite {data.suite!r} in the store"
    lines = [
        f"history of {data.suite}: {len(runs)} runs, newest first "
        "(P pass, F fail, E error, I incomplete)"
    ]
    for index, run in enumerate(runs, start=1):
        marks = [] if run.status is RunStatus.FINISHED else [run.status.value]
        if run.selection:
            marks.append(f"a selection: {run.selection}")
        marked = f" ({'; '.join(marks)})" if marks else ""
        lines.append(f"  [{index}] {run.id} {run.config or ''} {run.created_at[:16]}{marked}")
    width = max((len(cid) for cid in data.cases), default=4)
    for cid, by_run in data.cases.items():
        cells = [by_run.get(run.id, "-").ljust(max(3, len(by_run.get(run.id, "")))) for run in runs]
        lines.append(f"  {cid.ljust(width)}  " + "  ".join(cells))
    if data.flaky:
        lines.append("flaky (trials of one run disagree):")
        for f in data.flaky:
            lines.append(
                f"  {f.case}: flip rate {f.flip_rate:.0%} ({f.flips} of {f.pairs} adjacent trials)"
            )
    else:
        lines.append("no flaky case: every run's trials agree")
    return "\n".join(lines)


def case_letters(
    store: RunStore, run_ids: list[str], case_ids: list[str]
) -> dict[str, dict[str, str]]:
    """Some cases' trials as letters in some runs (case → run → ``PPF``), read by key."""
    per: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for run_id, cid, trial, status in store.statuses_of(run_ids, case_ids):
        per[(cid, run_id)].append((trial, status))
    table: dict[str, dict[str, str]] = defaultdict(dict)
    for (cid, run_id), trials in per.items():
        table[cid][run_id] = trial_letters(TrialStatus(s) for _, s in sorted(trials))
    return dict(table)


def flaky_cases(store: RunStore, run_ids: list[str], top: int = 15) -> list[FlakyCase]:
    """The flakiest cases over some runs, as :func:`history` finds them, without reading
    every case-trial: the candidates (a run whose trials disagree) come from the runs'
    digests in SQL (a run without one, unfinished, is read whole), then only their trials
    in every run are read to count flips."""
    candidates: set[str] = set()
    for run_id in run_ids:
        if store.has_digest(run_id):
            candidates.update(c for c, _ in store.mixed_cases(run_id))
        else:
            per_case: dict[str, set[str]] = defaultdict(set)
            for cid, _, status in store.statuses(run_id):
                per_case[cid].add(status)
            candidates.update(c for c, seen in per_case.items() if "pass" in seen and len(seen) > 1)
    if not candidates:
        return []
    wanted = sorted(candidates)
    table: dict[str, dict[str, str]] = {}
    for start in range(0, len(wanted), 500):
        table.update(case_letters(store, run_ids, wanted[start : start + 500]))
    found = flaky_of(table)
    found.sort(key=lambda f: (-f.flip_rate, -f.flips, f.case))
    return found[:top]
