"""``caseforge store prune``: which old runs to remove from a store, and removing them.

A run is kept when it is unfinished (running or stopped: it may be resumed), when a
baseline names it (the files given, and every baseline file in the folders of the suites
the store's runs were made from), or when it is among the newest ``keep`` finished runs of
its suite and configuration; else it goes when it is past ``keep`` or older than
``older_than_days``. Each run is removed in a transaction of its own, so a store of
hundreds of thousands of case-trials is pruned a run at a time, in bounded memory.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.compare.baseline import load_baseline
from caseforge.errors import CaseforgeError, UsageError
from caseforge.store.db import UNFINISHED, RunInfo, RunStore


@dataclass(frozen=True)
class Pruned:
    """A run removed (or, on a dry run, to be removed) and its stored case-trials."""

    run: RunInfo
    case_trials: int


@dataclass
class PrunePlan:
    """What prune removes, and what it keeps that it would otherwise have removed."""

    remove: list[Pruned] = field(default_factory=list)
    baseline_runs: dict[str, str] = field(default_factory=dict)  # run id -> baseline file
    unfinished: list[RunInfo] = field(default_factory=list)
    kept: int = 0  # runs kept because they are recent enough

    @property
    def case_trials(self) -> int:
        return sum(p.case_trials for p in self.remove)


def baseline_runs(store: RunStore, files: list[Path]) -> dict[str, str]:
    """The runs baselines were made from (run id → the file): ``files``, each of which must
    read as a baseline, and every ``*.json`` baseline in the folders of the store's suites."""
    found: dict[str, str] = {}
    for path in files:
        base = load_baseline(path)  # a file named on purpose that is no baseline: say so
        if base.run_id:
            found.setdefault(base.run_id, str(path))
    folders = {Path(info.suite_path) for info in store.all_runs()}
    for folder in sorted(folders):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.json")):
            try:
                base = load_baseline(path)
            except CaseforgeError:
                continue  # another JSON file of the suite
            if base.run_id:
                found.setdefault(base.run_id, str(path))
    return found


def plan_prune(
    store: RunStore,
    keep: int | None = None,
    older_than_days: float | None = None,
    baselines: list[Path] | None = None,
    now: dt.datetime | None = None,
) -> PrunePlan:
    """Which runs :func:`prune` removes (nothing is changed here)."""
    if (keep is None) == (older_than_days is None):
        raise UsageError("give one of --keep N or --older-than DAYS")
    if keep is not None and keep < 0:
        raise UsageError(f"--keep must be 0 or more, not {keep}")
    if older_than_days is not None and older_than_days < 0:
        raise UsageError(f"--older-than must be 0 days or more, not {older_than_days:g}")
    protected = baseline_runs(store, list(baselines or []))
    plan = PrunePlan()
    cutoff = None
    if older_than_days is not None:
        cutoff = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(days=older_than_days)
    seen: dict[tuple[str, str | None], int] = defaultdict(int)
    for info in store.all_runs():  # newest first
        if info.status in UNFINISHED:
            plan.unfinished.append(info)
            continue
        group = (info.suite, info.config_name)
        seen[group] += 1
        if keep is not None:
            old = seen[group] > keep
        else:
            assert cutoff is not None
            old = dt.datetime.fromisoformat(info.created_at) < cutoff
        if not old:
            plan.kept += 1
        elif info.id in protected:
            plan.baseline_runs[info.id] = protected[info.id]
        else:
            plan.remove.append(Pruned(info, store.count(info.id)))
    return plan


def prune(store: RunStore, plan: PrunePlan) -> None:
    """Remove the plan's runs, one transaction each."""
    for item in plan.remove:
        store.delete_run(item.run.id)


def plan_text(plan: PrunePlan, dry_run: bool, where: str) -> str:
    verb = "would remove" if dry_run else "removed"
    lines = [
        f"{where}: {verb} {len(plan.remove)} run(s), {plan.case_trials:,} case-trial(s)"
        + (" (dry run: nothing removed)" if dry_run else "")
    ]
    for item in plan.remove:
        info = item.run
        lines.append(
            f"  {info.id}  {info.suite} {info.config_name or '-'}  {info.created_at[:16]}  "
            f"{item.case_trials:,} case-trial(s)"
        )
    for run_id, path in plan.baseline_runs.items():
        lines.append(f"kept: {run_id}, the run of the baseline {path}")
    for info in plan.unfinished:
        lines.append(f"kept: {info.id}, {info.status} (an unfinished run is never pruned)")
    lines.append(f"kept: {plan.kept} recent run(s)")
    return "\n".join(lines)
