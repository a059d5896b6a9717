"""Per-case outcomes of a run, read from a report or a committed baseline.

Both ``caseforge compare`` and ``caseforge gate`` pair two such sets of outcomes by case id.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from caseforge.case.identity import SuiteIdentity
from caseforge.errors import UsageError
from caseforge.report.model import RunReport, Summary
from caseforge.results import CheckStatus, RunStatus, TrialStatus
from caseforge.stats import ItemCounts
from caseforge.values import item_counts

Metrics = dict[str, object]


@dataclass
class CaseOutcome:
    """One case's trials, per-check pass counts and item counts."""

    statuses: list[TrialStatus]
    digest: str | None = None
    tags: list[str] = field(default_factory=list)
    split: str | None = None
    checks: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (passed, graded)
    items: dict[str, ItemCounts] = field(default_factory=dict)

    @property
    def passes(self) -> int:
        return sum(s is TrialStatus.PASS for s in self.statuses)

    @property
    def mean(self) -> float:
        """The share of trials that passed."""
        return self.passes / len(self.statuses) if self.statuses else 0.0

    @property
    def passing(self) -> bool:
        """In a paired comparison a case passes when a majority of its trials pass."""
        return self.passes * 2 > len(self.statuses)

    def check_passing(self, name: str) -> bool | None:
        """Whether a check passed in a majority of the trials that graded it."""
        if name not in self.checks or not self.checks[name][1]:
            return None
        passed, graded = self.checks[name]
        return passed * 2 > graded


@dataclass
class RunOutcomes:
    """What compare and gate need of one run."""

    label: str
    run_id: str | None
    suite: str
    config: str | None
    trials: int
    dataset_commit: str | None
    metrics: Metrics
    cases: dict[str, CaseOutcome]
    status: RunStatus = RunStatus.FINISHED
    identity: SuiteIdentity | None = None


def summary_metrics(summary: Summary) -> Metrics:
    """The summary as plain JSON values, for looking up metrics by name."""
    return summary.model_dump(mode="json")


def metric_value(metrics: Metrics, name: str) -> object:
    """A summary metric by name; ``items.<field>.<precision|recall|tp…>`` reaches into items."""
    if name in metrics:
        return metrics[name]
    value: object = metrics
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def outcomes_from_report(report: RunReport) -> RunOutcomes:
    """Per-case outcomes from a ``report.json`` (or a report built from the store)."""
    cases: dict[str, CaseOutcome] = {}
    for case in report.cases:
        checks: dict[str, tuple[int, int]] = {}
        items: dict[str, ItemCounts] = {}
        for trial in case.trials:
            for check in trial.checks:
                passed, graded = checks.get(check.name, (0, 0))
                if check.status in (CheckStatus.PASS, CheckStatus.FAIL):
                    graded += 1
                    passed += check.status is CheckStatus.PASS
                checks[check.name] = (passed, graded)
                if check.mode == "exact_set" and isinstance(check.expected, list):
                    tally = item_counts(check.expected, check.actual)
                    items[check.name] = items.get(check.name, ItemCounts()) + tally
        cases[case.id] = CaseOutcome(
            statuses=case.statuses,
            digest=case.expect_digest,
            tags=list(case.tags),
            split=case.split,
            checks=checks,
            items=items,
        )
    return run_outcomes(report, cases)


def run_outcomes(report: RunReport, cases: dict[str, CaseOutcome]) -> RunOutcomes:
    """A report's run-level fields with per-case outcomes read from it or from a digest."""
    return RunOutcomes(
        label=report.label,
        run_id=report.run_id,
        suite=report.suite,
        config=report.config,
        trials=report.trials,
        dataset_commit=report.dataset_commit,
        metrics=summary_metrics(report.summary),
        cases=cases,
        status=report.status,
        identity=report.suite_identity,
    )


def refuse_other_suite(a: RunOutcomes, b: RunOutcomes, force: bool = False) -> list[str]:
    """Refuse to pair runs (or a run and a baseline) of two different suites, unless
    ``force``; return warnings, e.g. for a side that records no identity."""
    if a.identity is None or b.identity is None:
        if a.suite != b.suite and not force:
            raise UsageError(
                f"{a.label} is of suite {a.suite!r} and {b.label} of suite {b.suite!r}: "
                "they are different suites (pass --force to compare them anyway)"
            )
        old = a if a.identity is None else b
        return [
            f"warning: {old.label} records no suite identity (written by an older "
            "caseforge); matched by suite name only"
        ]
    if not a.identity.same_suite(b.identity) and not force:
        raise UsageError(
            f"{a.label} is of suite {a.identity.describe()} and {b.label} of suite "
            f"{b.identity.describe()}: they are different suites "
            "(pass --force to compare them anyway)"
        )
    return []
