"""A finished run's digest: the report without its case-trials, plus one row per case with
its trials' statuses, what text search reads, and what a paired comparison needs.

It is what the web app's runs list, run screen and compare read. It is stored when a run
finishes (``caseforge run``) or when the app first opens the run, so a run of 100,000
case-trials opens without decoding every stored result. Only finished runs get one;
resuming a run drops it (``RunStore.set_status``). The per-case rows are stored as JSON
arrays and read with ``json.loads`` alone: validating 50,000 small models cost more than
the whole page's budget.
"""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass, field

from pydantic import ValidationError

from caseforge.compare.outcomes import (
    CaseOutcome,
    RunOutcomes,
    outcomes_from_report,
    run_outcomes,
)
from caseforge.report.model import RunReport
from caseforge.report.render import headline
from caseforge.results import RunStatus, TrialStatus
from caseforge.stats.paired import ItemCounts
from caseforge.store.db import RunStore

DIGEST_VERSION = 3
QUANTILES = 200  # points kept of the latency and cost distributions


@dataclass(slots=True)
class CaseCells:
    """One case: its trials' statuses in trial order, the lower-cased JSON of its input (for
    text search), and its per-check pass counts ``(passed, graded)`` and item counts
    ``(tp, fp, fn)``."""

    id: str
    category: str
    tags: list[str]
    split: str | None
    expect_digest: str | None
    statuses: list[str]
    text: str
    checks: dict[str, tuple[int, int]] = field(default_factory=dict)
    items: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def row(self) -> list[object]:
        return [
            self.id, self.category, self.tags, self.split, self.expect_digest,
            self.statuses, self.text, self.checks, self.items,
        ]  # fmt: skip

    @classmethod
    def from_row(cls, row: list[object]) -> CaseCells:
        return cls(*row)  # type: ignore[arg-type]


@dataclass
class RunDigest:
    report: RunReport  # with `cases` left empty
    headline: list[tuple[str, str]]  # the text report's summary rows, made from the whole run
    cases: list[CaseCells]
    latencies: list[float]  # sorted quantiles of the trials' latency
    costs: list[float]  # sorted quantiles of the trials' cost

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": DIGEST_VERSION,
                "report": self.report.model_dump(mode="json"),
                "headline": self.headline,
                "cases": [c.row() for c in self.cases],
                "latencies": self.latencies,
                "costs": self.costs,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> RunDigest | None:
        # A million small objects at once: the collector would rescan them over and over
        # while they are made (2.5 times the time of the parse itself).
        enabled = gc.isenabled()
        gc.disable()
        try:
            return cls._parse(text)
        finally:
            if enabled:
                gc.enable()

    @classmethod
    def _parse(cls, text: str) -> RunDigest | None:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != DIGEST_VERSION:
            return None  # written by another caseforge: it is rebuilt
        try:
            report = RunReport.model_validate(data["report"])
        except (ValidationError, KeyError):
            return None
        return cls(
            report=report,
            headline=[(str(k), str(v)) for k, v in data["headline"]],
            cases=[CaseCells.from_row(row) for row in data["cases"]],
            latencies=data["latencies"],
            costs=data["costs"],
        )


def digest_of(report: RunReport) -> RunDigest:
    trials = [t for c in report.cases for t in c.trials]
    outcomes = outcomes_from_report(report).cases
    cells = [
        CaseCells(
            id=c.id,
            category=c.category,
            tags=list(c.tags),
            split=c.split,
            expect_digest=c.expect_digest,
            statuses=[t.status.value for t in sorted(c.trials, key=lambda t: t.trial)],
            text=json.dumps(c.input, ensure_ascii=False).lower(),
            checks=outcomes[c.id].checks,
            items={k: (v.tp, v.fp, v.fn) for k, v in outcomes[c.id].items.items()},
        )
        for c in report.cases
    ]
    return RunDigest(
        report=report.model_copy(update={"cases": []}),
        headline=headline(report),
        cases=cells,
        latencies=_quantiles(sorted(t.latency_s for t in trials)),
        costs=_quantiles(sorted(t.cost_usd for t in trials)),
    )


def save_digest(store: RunStore, report: RunReport) -> RunDigest | None:
    """Store the digest of a finished run (None for an unfinished one, which may change)."""
    if report.status is not RunStatus.FINISHED:
        return None
    digest = digest_of(report)
    store.save_digest(report.run_id, digest.to_json())
    return digest


def load_digest(store: RunStore, run_id: str) -> RunDigest | None:
    """The stored digest, or None when there is none (or one of another version)."""
    text = store.digest(run_id)
    return RunDigest.from_json(text) if text is not None else None


def outcomes_from_digest(digest: RunDigest) -> RunOutcomes:
    """What compare and gate need, from a digest: the same as from the full report."""
    report = digest.report
    cases = {
        c.id: CaseOutcome(
            statuses=[TrialStatus(s) for s in c.statuses],
            digest=c.expect_digest,
            tags=list(c.tags),
            split=c.split,
            checks={k: (v[0], v[1]) for k, v in c.checks.items()},
            items={k: ItemCounts(*v) for k, v in c.items.items()},
        )
        for c in digest.cases
    }
    return run_outcomes(report, cases)


def _quantiles(values: list[float]) -> list[float]:
    if len(values) <= QUANTILES:
        return values
    step = (len(values) - 1) / (QUANTILES - 1)
    return [values[round(i * step)] for i in range(QUANTILES)]
