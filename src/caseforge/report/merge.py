"""``caseforge merge``: one report from the reports of a run's shards, each written to a store
of its own (``--shard I/N --run-id ID`` on machines that share no store).

Every shard report must be of the same run: the same run id, suite, dataset commit, agent,
configuration, trials, split and cases (with the same expectations). Shards 1 to N must each
be there once and finished, and no case-trial may be in two of them. Anything else is
refused, naming the file and what differs.

The merged summary is computed again from all the case-trials, as for a run in one store.
That needs the cases themselves (their categories, splits and facts), so they are read
from the suite and checked against the digest of the expectations each shard ran with.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from caseforge.case.load import load_suite
from caseforge.case.model import Case
from caseforge.errors import UsageError
from caseforge.report.build import expect_digest, load_report
from caseforge.report.model import RunReport, ShardEntry, TrialResult
from caseforge.report.summary import check_counts, summarize
from caseforge.results import RunStatus, TrialRecord, TrialStatus

# What every shard of one run has in common, as it is named in a refusal.
SAME: dict[str, Callable[[RunReport], object]] = {
    "run id": lambda r: r.run_id,
    "suite": lambda r: r.suite,
    "dataset commit": lambda r: r.dataset_commit,
    "agent": lambda r: r.agent,
    "config": lambda r: r.config,
    "config settings": lambda r: r.config_values,
    "trials": lambda r: r.trials,
    "split": lambda r: r.split,
}


def merge_reports(paths: list[Path], suite_dir: Path | None = None) -> RunReport:
    """The whole run's report from its shards' reports."""
    if len(paths) < 1:
        raise UsageError("merge needs the shards' report.json files")
    reports = [(path, load_report(str(path))) for path in paths]
    shards = [(path, _own_shard(path, report)) for path, report in reports]
    _same_run(reports)
    _every_shard_once(shards)
    first = reports[0][1]
    cases = _suite_cases(first, suite_dir)
    per_case: dict[str, list[TrialResult]] = defaultdict(list)
    source: dict[tuple[str, int], Path] = {}
    for path, report in reports:
        for case in report.cases:
            for trial in case.trials:
                key = (case.id, trial.trial)
                if key in source:
                    raise UsageError(
                        f"{path}: case {case.id} trial {trial.trial} is in {source[key]} too: "
                        "the shards overlap (were they run with the same --shard I/N?)"
                    )
                source[key] = path
                per_case[case.id].append(trial)
    records = [_record(case_id, t) for case_id, trials in per_case.items() for t in trials]
    entries = [
        case.model_copy(
            update={
                "trials": sorted(per_case[case.id], key=lambda t: t.trial),
                "passed": sum(1 for t in per_case[case.id] if t.status is TrialStatus.PASS),
            }
        )
        for case in first.cases
    ]
    summary = summarize(records, cases, first.trials).model_copy(
        update={"simulated_user_cost_usd": sum(t.user_cost_usd for ts in per_case.values()
                                                for t in ts)}
    )  # fmt: skip
    expected = len(first.cases) * first.trials
    complete = len(records) == expected
    return first.model_copy(
        update={
            "status": RunStatus.FINISHED if complete else RunStatus.STOPPED,
            "finished_at": max((s.finished_at or "" for _, s in shards), default="") or None,
            "shards": sorted((s for _, s in shards), key=lambda s: s.shard),
            "summary": summary,
            "checks": check_counts(records),
            "cases": entries,
        }
    )


def _own_shard(path: Path, report: RunReport) -> ShardEntry:
    """The one shard a shard's own store records, finished."""
    if len(report.shards) != 1:
        what = "no shard" if not report.shards else f"{len(report.shards)} shards"
        raise UsageError(
            f"{path}: run {report.run_id} records {what}: merge takes the reports of runs "
            "made with --shard I/N, each in a store of its own"
        )
    shard = report.shards[0]
    if shard.status != "finished":
        raise UsageError(
            f"{path}: shard {shard.shard}/{shard.shards} is {shard.status}: finish it with "
            f"`caseforge run SUITE --resume {report.run_id} --shard {shard.shard}/{shard.shards}`"
        )
    return shard


def _same_run(reports: list[tuple[Path, RunReport]]) -> None:
    first_path, first = reports[0]
    for path, report in reports[1:]:
        for what, read in SAME.items():
            if read(report) != read(first):
                raise UsageError(
                    f"{path}: a different {what} from {first_path} "
                    f"({read(report)!r}, not {read(first)!r}): not shards of one run"
                )
        mine = {c.id: c.expect_digest for c in report.cases}
        theirs = {c.id: c.expect_digest for c in first.cases}
        if mine != theirs:
            changed = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
            raise UsageError(
                f"{path}: different cases from {first_path} ({', '.join(changed[:5])}"
                f"{' …' if len(changed) > 5 else ''}): not shards of one run"
            )


def _every_shard_once(shards: list[tuple[Path, ShardEntry]]) -> None:
    counts = {s.shards for _, s in shards}
    if len(counts) != 1:
        raise UsageError(f"the reports are shards of differently split runs (N = {sorted(counts)})")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for path, shard in shards:
        if shard.shard in seen:
            raise UsageError(
                f"{path}: shard {shard.shard}/{count} is given twice (also {seen[shard.shard]})"
            )
        seen[shard.shard] = path
    missing = [str(i) for i in range(1, count + 1) if i not in seen]
    if missing:
        raise UsageError(
            f"missing shard(s) {', '.join(missing)} of {count}: merge needs every shard's "
            "report.json"
        )


def _suite_cases(first: RunReport, suite_dir: Path | None) -> dict[str, Case]:
    root = suite_dir or Path(first.suite_path)
    if not (root / "caseforge.yaml").is_file():
        raise UsageError(
            f"merge needs the suite to recompute the summary: {root} is not a suite folder "
            "(give it with --suite)"
        )
    suite = {c.case.id: c.case for c in load_suite(root).cases}
    for case in first.cases:
        found = suite.get(case.id)
        if found is None or expect_digest(found) != case.expect_digest:
            why = "is not in it" if found is None else "has other expectations now"
            raise UsageError(
                f"{root}: case {case.id} {why} than the shards ran with: check out the "
                f"dataset commit {first.dataset_commit or '(unknown)'} and merge again"
            )
    return {case.id: suite[case.id] for case in first.cases}


def _record(case_id: str, trial: TrialResult) -> TrialRecord:
    return TrialRecord(
        case_id=case_id,
        trial=trial.trial,
        status=trial.status,
        checks=trial.checks,
        error=trial.error,
        latency_s=trial.latency_s,
        cost_usd=trial.cost_usd,
        input_tokens=trial.input_tokens,
        output_tokens=trial.output_tokens,
    )
