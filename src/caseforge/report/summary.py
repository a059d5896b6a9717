"""The run summary (docs/concepts/statistics.md): pass rate with intervals, pass^k and
pass@k, item-level precision and recall, false-positive rate, errors, cost, latency,
slices and the checks that fail most.

Conventions: ``pass_rate`` = passed case-trials / all case-trials (an error is not a pass
and is also counted in ``errors``); item metrics and the false-positive rate are computed
over case-trials that produced an output (errors have none); a clean case-trial is one whose
every ``exact_set`` expectation is empty.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from caseforge.case.model import Case
from caseforge.report.model import (
    CheckCounts,
    FailingCheck,
    Holdout,
    ItemMetrics,
    SliceCell,
    Summary,
)
from caseforge.results import CheckStatus, TrialRecord, TrialStatus
from caseforge.stats import ItemCounts, clustered_se, pass_at_k, pass_hat_k, wilson_interval
from caseforge.values import item_counts


def _rate(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile, linearly interpolated between the two nearest ranks (NumPy's
    default method, without loading NumPy for it), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    at = (len(ordered) - 1) * q / 100
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (at - low))


def summarize(records: Iterable[TrialRecord], cases: dict[str, Case], trials: int) -> Summary:
    """The ``summary`` of report.json, computed from graded case-trials."""
    records = list(records)
    n = len(records)
    passed = sum(1 for r in records if r.status is TrialStatus.PASS)
    statuses = Counter(r.status for r in records)
    by_case: dict[str, list[TrialRecord]] = defaultdict(list)
    for r in records:
        by_case[r.case_id].append(r)

    case_means = [
        sum(1 for r in rs if r.status is TrialStatus.PASS) / len(rs) for rs in by_case.values()
    ]
    pass_hat: dict[str, float] = {}
    pass_at: dict[str, float] = {}
    for k in range(1, trials + 1):
        eligible = [rs for rs in by_case.values() if len(rs) >= k]
        if not eligible:
            continue
        hats, ats = [], []
        for rs in eligible:
            c = sum(1 for r in rs if r.status is TrialStatus.PASS)
            hats.append(pass_hat_k(len(rs), c, k))
            ats.append(pass_at_k(len(rs), c, k))
        pass_hat[str(k)] = sum(hats) / len(hats)
        pass_at[str(k)] = sum(ats) / len(ats)

    items, fp_rate, clean_trials, true_findings = _items(records, cases)
    cost = sum(r.cost_usd for r in records)
    latencies = [r.latency_s for r in records if r.status is not TrialStatus.ERROR]
    lo, hi = wilson_interval(passed, n)
    incomplete_reasons = Counter(
        c.reason for r in records for c in r.checks if c.status is CheckStatus.NOT_JUDGED
    )
    judge_skipped = sum(
        1
        for r in records
        for c in r.checks
        if c.mode == "judge" and c.status is CheckStatus.SKIPPED
    )
    return Summary(
        cases=len(by_case),
        trials=trials,
        case_trials=n,
        passed=passed,
        failed=statuses[TrialStatus.FAIL],
        incomplete=statuses[TrialStatus.INCOMPLETE],
        incomplete_reasons=dict(incomplete_reasons),
        judge_checks_skipped=judge_skipped,
        errors=statuses[TrialStatus.ERROR],
        pass_rate=_rate(passed, n),
        pass_rate_ci=(lo, hi),
        pass_rate_se=clustered_se(case_means),
        fully_passing_cases=sum(1 for m in case_means if m == 1.0),
        pass_hat_k=pass_hat,
        pass_at_k=pass_at,
        items=items,
        false_positive_rate=fp_rate,
        clean_case_trials=clean_trials,
        cost_usd=cost,
        cost_per_run=_rate(cost, n),
        cost_per_true_finding=_rate(cost, true_findings) if true_findings else None,
        input_tokens=sum(r.input_tokens for r in records),
        output_tokens=sum(r.output_tokens for r in records),
        latency_p50_s=percentile(latencies, 50),
        latency_p95_s=percentile(latencies, 95),
        most_failing_checks=_most_failing(records),
        slices=_slices(records, cases),
        holdout=holdout(by_case, cases),
    )


HOLDOUT_ALPHA = 0.05


def holdout(by_case: dict[str, list[TrialRecord]], cases: dict[str, Case]) -> Holdout | None:
    """Dev against test, when a run covers both: a Welch t-test on the case means.

    ``alarm`` is raised when dev scores higher and the difference is significant: the agent
    may be tuned to the dev set (the seed's example: dev 94 %, test 76 %).
    """
    means: dict[str, list[float]] = {"dev": [], "test": []}
    for cid, rs in by_case.items():
        case = cases.get(cid)
        if case is not None and case.split in means:
            means[case.split].append(sum(r.status is TrialStatus.PASS for r in rs) / len(rs))
    dev, test = means["dev"], means["test"]
    if len(dev) < 2 or len(test) < 2:
        return None
    from scipy import stats as sps

    dev_rate, test_rate = sum(dev) / len(dev), sum(test) / len(test)
    if len(set(dev)) == 1 and len(set(test)) == 1:  # no spread on either side
        p_value = 1.0 if dev_rate == test_rate else 0.0
    else:
        with warnings.catch_warnings():  # near-constant case means warn about precision
            warnings.simplefilter("ignore", RuntimeWarning)
            p_value = float(sps.ttest_ind(dev, test, equal_var=False).pvalue)
    return Holdout(
        dev_cases=len(dev),
        test_cases=len(test),
        dev_pass_rate=dev_rate,
        test_pass_rate=test_rate,
        difference=dev_rate - test_rate,
        p_value=p_value,
        alarm=dev_rate > test_rate and p_value < HOLDOUT_ALPHA,
    )


def _items(
    records: list[TrialRecord], cases: dict[str, Case]
) -> tuple[dict[str, ItemMetrics], float | None, int, int]:
    counts: dict[str, ItemCounts] = defaultdict(ItemCounts)
    clean_trials = clean_with_items = 0
    for r in records:
        if r.status is TrialStatus.ERROR:
            continue
        case = cases.get(r.case_id)
        if case is None:
            continue
        fields = case.item_fields()
        if not fields:
            continue
        by_name = {c.name: c for c in r.checks}
        reported_any = False
        for name, expected in fields.items():
            check = by_name.get(name)
            actual = check.actual if check is not None and isinstance(check.actual, list) else []
            tally = item_counts(expected, actual)
            counts[name] = counts[name] + tally
            reported_any = reported_any or bool(tally.tp or tally.fp)
        if all(not values for values in fields.values()):
            clean_trials += 1
            clean_with_items += reported_any
    items = {
        name: ItemMetrics(
            tp=c.tp,
            fp=c.fp,
            fn=c.fn,
            precision=_rate(c.tp, c.tp + c.fp),
            recall=_rate(c.tp, c.tp + c.fn),
        )
        for name, c in sorted(counts.items())
    }
    true_findings = sum(c.tp for c in counts.values())
    return items, _rate(clean_with_items, clean_trials), clean_trials, true_findings


def check_counts(records: Iterable[TrialRecord]) -> dict[str, CheckCounts]:
    """Per check name, how many case-trials gave each status."""
    table: dict[str, CheckCounts] = defaultdict(CheckCounts)
    for r in records:
        for c in r.checks:
            table[c.name].add(c.status)
    return dict(sorted(table.items()))


def _most_failing(records: list[TrialRecord], top: int = 3) -> list[FailingCheck]:
    fails: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for r in records:
        for c in r.checks:
            if c.status in (CheckStatus.PASS, CheckStatus.FAIL):
                totals[c.name] += 1
            if c.status is CheckStatus.FAIL:
                fails[c.name] += 1
    ranked = sorted(fails.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [FailingCheck(check=name, fail=count, graded=totals[name]) for name, count in ranked]


def _slices(records: list[TrialRecord], cases: dict[str, Case]) -> dict[str, dict[str, SliceCell]]:
    groups: dict[str, defaultdict[str, list[int]]] = {
        "tag": defaultdict(lambda: [0, 0]),
        "category": defaultdict(lambda: [0, 0]),
        "source": defaultdict(lambda: [0, 0]),
        "split": defaultdict(lambda: [0, 0]),
    }
    for r in records:
        case = cases.get(r.case_id)
        if case is None:
            continue
        ok = r.status is TrialStatus.PASS
        keys: dict[str, list[str]] = {
            "category": [case.category()],
            "source": [case.source],
            "split": [case.split or "unassigned"],
            "tag": case.tags,
        }
        for dimension, values in keys.items():
            for value in values:
                cell = groups[dimension][value]
                cell[0] += 1
                cell[1] += ok
    return {
        dimension: {
            value: SliceCell(case_trials=total, passed=ok, pass_rate=_rate(ok, total))
            for value, (total, ok) in sorted(cells.items())
        }
        for dimension, cells in groups.items()
    }
