"""Per-case outcomes of a run, read from a report or a committed baseline.

Both ``caseforge compare`` and ``caseforge gate`` pair two such sets of outcomes by case id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from caseforge.grade.modes import item_key
from caseforge.stats import ItemCounts

STATUS_LETTERS = {"pass": "P", "fail": "F", "error": "E", "incomplete": "I"}
LETTER_STATUS = {v: k for k, v in STATUS_LETTERS.items()}


@dataclass
class CaseOutcome:
    """One case's trials, per-check pass counts and item counts."""

    statuses: list[str]
    digest: str | None = None
    tags: list[str] = field(default_factory=list)
    split: str | None = None
    checks: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (passed, graded)
    items: dict[str, ItemCounts] = field(default_factory=dict)

    @property
    def mean(self) -> float:
        """The share of trials that passed."""
        return (
            sum(s == "pass" for s in self.statuses) / len(self.statuses) if self.statuses else 0.0
        )

    @property
    def passing(self) -> bool:
        """In a paired comparison a case passes when a majority of its trials pass."""
        return sum(s == "pass" for s in self.statuses) * 2 > len(self.statuses)

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
    metrics: dict[str, Any]
    cases: dict[str, CaseOutcome]
    status: str = "finished"


def metric_value(metrics: dict[str, Any], name: str) -> Any:
    """A summary metric by name; ``items.<field>.<precision|recall|tp…>`` reaches into items."""
    if name in metrics:
        return metrics[name]
    value: Any = metrics
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def outcomes_from_report(report: dict[str, Any]) -> RunOutcomes:
    """Per-case outcomes from a ``report.json`` (or a report built from the store)."""
    cases: dict[str, CaseOutcome] = {}
    for case in report["cases"]:
        outcome = CaseOutcome(
            statuses=[t["status"] for t in case["trials"]],
            digest=case.get("expect_digest"),
            tags=list(case.get("tags", [])),
            split=case.get("split"),
        )
        checks: dict[str, list[int]] = {}
        items: dict[str, list[int]] = {}
        for trial in case["trials"]:
            for check in trial["checks"]:
                cell = checks.setdefault(check["name"], [0, 0])
                if check["status"] in ("pass", "fail"):
                    cell[1] += 1
                    cell[0] += check["status"] == "pass"
                if check["mode"] == "exact_set" and isinstance(check.get("expected"), list):
                    want = {item_key(v) for v in check["expected"]}
                    actual = check.get("actual")
                    got = {item_key(v) for v in actual} if isinstance(actual, list) else set()
                    counts = items.setdefault(check["name"], [0, 0, 0])
                    counts[0] += len(want & got)
                    counts[1] += len(got - want)
                    counts[2] += len(want - got)
        outcome.checks = {k: (v[0], v[1]) for k, v in checks.items()}
        outcome.items = {k: ItemCounts(*v) for k, v in items.items()}
        cases[case["id"]] = outcome
    return RunOutcomes(
        label=str(report.get("config") or report["run_id"]),
        run_id=report["run_id"],
        suite=report["suite"],
        config=report.get("config"),
        trials=int(report["trials"]),
        dataset_commit=report.get("dataset_commit"),
        metrics=report["summary"],
        cases=cases,
        status=str(report.get("status") or "finished"),
    )
