"""Baselines: a small, reviewable JSON summary of a run, fit to commit next to the suite.

It keeps the run's summary metrics and, per case, the trials' outcomes as letters
(``P`` pass, ``F`` fail, ``E`` error, ``I`` incomplete), the expectations' digest and the
item counts per ``exact_set`` field — what the gate needs to pair a new run against it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError, field_validator

from caseforge.case.identity import SuiteIdentity
from caseforge.compare.outcomes import CaseOutcome, RunOutcomes, outcomes_from_report
from caseforge.errors import UsageError, first_validation_error
from caseforge.files import json_kind, read_json_file, write_atomic
from caseforge.report.model import RunReport
from caseforge.results import TrialStatus, trial_letters
from caseforge.stats import ItemCounts

BASELINE_VERSION: Literal[1] = 1
METRICS = (
    "cases",
    "case_trials",
    "pass_rate",
    "pass_rate_ci",
    "pass_rate_se",
    "pass_hat_k",
    "pass_at_k",
    "errors",
    "false_positive_rate",
    "items",
    "cost_usd",
    "cost_per_run",
    "cost_per_true_finding",
    "latency_p50_s",
    "latency_p95_s",
)


class BaselineCase(BaseModel):
    """One case of a baseline: ``trials`` as letters, the digest, and ``[tp, fp, fn]`` per
    ``exact_set`` field (left out when the case has none)."""

    model_config = ConfigDict(extra="forbid")

    trials: str
    digest: str | None = None
    items: dict[str, tuple[int, int, int]] | None = None

    @field_validator("trials")
    @classmethod
    def _letters(cls, value: str) -> str:
        for letter in value:
            TrialStatus.from_letter(letter)
        return value

    @property
    def statuses(self) -> list[TrialStatus]:
        return [TrialStatus.from_letter(letter) for letter in self.trials]


class Baseline(BaseModel):
    """The committed baseline document (``caseforge baseline RUN --write FILE``)."""

    caseforge_baseline: Literal[1] = BASELINE_VERSION
    suite: str
    suite_identity: SuiteIdentity | None = None  # absent in baselines written before it
    run_id: str | None
    config: str | None = None
    agent: str | None = None
    dataset_commit: str | None = None
    dataset_dirty: bool | None = None
    trials: int
    metrics: dict[str, JsonValue]
    cases: dict[str, BaselineCase]

    def outcomes(self) -> RunOutcomes:
        """The baseline as per-case outcomes, for compare and gate."""
        cases = {
            cid: CaseOutcome(
                statuses=entry.statuses,
                digest=entry.digest,
                items={k: ItemCounts(*v) for k, v in (entry.items or {}).items()},
            )
            for cid, entry in self.cases.items()
        }
        return RunOutcomes(
            label=f"baseline {self.config or self.run_id}",
            run_id=self.run_id,
            suite=self.suite,
            identity=self.suite_identity,
            config=self.config,
            trials=self.trials,
            dataset_commit=self.dataset_commit,
            metrics=dict(self.metrics),
            cases=cases,
        )


def baseline_from_report(report: RunReport) -> Baseline:
    """The baseline document of a run."""
    outcomes = outcomes_from_report(report)
    cases = {}
    for cid in sorted(outcomes.cases):
        outcome = outcomes.cases[cid]
        items = {k: (v.tp, v.fp, v.fn) for k, v in sorted(outcome.items.items())}
        cases[cid] = BaselineCase(
            trials=trial_letters(outcome.statuses), digest=outcome.digest, items=items or None
        )
    return Baseline(
        suite=report.suite,
        suite_identity=report.suite_identity,
        run_id=report.run_id,
        config=report.config,
        agent=report.agent,
        dataset_commit=report.dataset_commit,
        dataset_dirty=report.dataset_dirty,
        trials=report.trials,
        metrics=report.summary.model_dump(mode="json", include=set(METRICS)),
        cases=cases,
    )


def format_baseline(baseline: Baseline) -> str:
    """Pretty JSON with one line per case, so a review diff shows one line per changed case."""
    head = baseline.model_dump(mode="json", exclude={"cases"})
    text = json.dumps(head, ensure_ascii=False, indent=1)[:-2]  # drop the closing "\n}"
    lines = [
        f" {json.dumps(cid, ensure_ascii=False)}: "
        + json.dumps(entry.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
        for cid, entry in baseline.cases.items()
    ]
    return text + ',\n "cases": {\n' + ",\n".join(lines) + "\n }\n}\n"


def write_baseline(report: RunReport, path: Path) -> Baseline:
    """Write the baseline of a run, atomically (what ``caseforge baseline --write`` writes).

    Args:
        report: A finished run's report.
        path: The baseline file.

    Returns:
        The baseline written."""
    baseline = baseline_from_report(report)
    write_atomic(path, format_baseline(baseline))
    return baseline


def read_baseline(path: Path) -> Baseline:
    """Read and check a committed baseline. A file that is not one this caseforge reads
    (not JSON, truncated, a report, from a newer caseforge) is a usage error (2): the file
    given is the mistake, which CI must not read as a regression (1)."""
    data = read_json_file(
        path, "baseline", f"make one with `caseforge baseline RUN --write {path}`"
    )
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a caseforge baseline: the file holds {json_kind(data)}")
    if "schema_version" in data and "caseforge_baseline" not in data:
        raise UsageError(
            f"{path}: is a report.json, not a baseline: make the baseline from it with "
            f"`caseforge baseline {path} --write FILE`, and give that FILE"
        )
    version = data.get("caseforge_baseline")
    if isinstance(version, int) and not isinstance(version, bool) and version > BASELINE_VERSION:
        raise UsageError(
            f"{path}: written by a newer caseforge (baseline version {version}; this one reads "
            f"{BASELINE_VERSION}): upgrade caseforge to read it"
        )
    if version != BASELINE_VERSION:
        raise UsageError(f"{path}: not a caseforge baseline (version {BASELINE_VERSION})")
    try:
        return Baseline.model_validate(data)
    except ValidationError as exc:
        raise UsageError(
            f"{path}: not a valid caseforge baseline: {first_validation_error(exc)}"
        ) from None


def load_baseline(path: Path) -> RunOutcomes:
    """Read a committed baseline as per-case outcomes."""
    return read_baseline(path).outcomes()
