"""A finished run's digest: the report without its case-trials (:class:`RunDigest`), plus
one row per case (:class:`CaseCells`) with its trials' statuses, what text search reads, and
what a paired comparison needs.

It is what the web app's runs list, run screen and compare read. It is stored when a run
finishes (``caseforge run``) or when the app first opens the run, so a run of 100,000
case-trials opens without decoding every stored result. Only finished runs get one;
resuming a run drops it (``RunStore.set_status``). The per-case rows live in their own
table, so the run screen reads one page of them, filtered in SQL (:class:`StoredCells`);
a running run's rows are built in memory and filtered the same way (:class:`MemoryCells`).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import ValidationError

from caseforge.compare.outcomes import (
    CaseOutcome,
    RunOutcomes,
    outcomes_from_report,
    run_outcomes,
)
from caseforge.compare.pairing import CasePair, Comparison, compare_pairs
from caseforge.report.model import RunReport
from caseforge.report.render import headline
from caseforge.results import RunStatus, TrialStatus
from caseforge.stats.counts import ItemCounts
from caseforge.store.db import STATUS_CODES, CaseQuery, DigestCaseColumns, RunStore

STATUS_NAMES = {code: name for name, code in STATUS_CODES.items()}
STATUSES = {s.value: s for s in TrialStatus}
CODE_STATUSES = {code: STATUSES[name] for name, code in STATUS_CODES.items()}

DIGEST_VERSION = 4
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
    trials: list[int] = field(default_factory=list)  # the statuses' trial numbers; [] 1…n

    @property
    def codes(self) -> str:
        return "".join(STATUS_CODES[s] for s in self.statuses)

    def row(self) -> DigestCaseColumns:
        """The ``run_digest_cases`` columns."""
        return {
            "case_id": self.id,
            "category": self.category,
            "tags_json": json.dumps(self.tags, ensure_ascii=False),
            "split": self.split,
            "expect_digest": self.expect_digest,
            "codes": self.codes,
            "search_text": self.text,
            "checks_json": json.dumps(self.checks, ensure_ascii=False),
            "items_json": json.dumps(self.items, ensure_ascii=False),
        }

    @classmethod
    def from_row(cls, row: DigestCaseColumns) -> CaseCells:
        return cls(
            id=row["case_id"],
            category=row["category"],
            tags=json.loads(row["tags_json"]),
            split=row["split"],
            expect_digest=row["expect_digest"],
            statuses=[STATUS_NAMES[c] for c in row["codes"]],
            text=row["search_text"],
            checks={k: (v[0], v[1]) for k, v in json.loads(row["checks_json"]).items()},
            items={k: (v[0], v[1], v[2]) for k, v in json.loads(row["items_json"]).items()},
        )


class CellSource(Protocol):
    """Where a run's case rows are read: one page at a time, or all (for compare)."""

    def page(self, query: CaseQuery, offset: int, limit: int) -> tuple[int, list[CaseCells]]:
        """How many cases match, and the ``limit`` from ``offset``."""
        ...

    def all(self) -> list[CaseCells]: ...

    def outcomes(self, digest: RunDigest) -> RunOutcomes:
        """What compare and gate need: the same as from the full report."""
        ...


@dataclass
class StoredCells:
    """A stored digest's rows, read and filtered in SQL."""

    store: RunStore
    run_id: str

    def page(self, query: CaseQuery, offset: int, limit: int) -> tuple[int, list[CaseCells]]:
        total, rows = self.store.digest_cases(self.run_id, query, offset, limit)
        return total, [CaseCells.from_row(r) for r in rows]

    def all(self) -> list[CaseCells]:
        with paused_gc():
            return self._all()

    def outcomes(self, digest: RunDigest) -> RunOutcomes:
        with paused_gc():
            rows = self.store.digest_outcome_rows(self.run_id)
            parsed = json.loads("[" + ",".join(f"[{r[3]},{r[5]},{r[6]}]" for r in rows) + "]")
            cases = {
                r[0]: CaseOutcome(
                    statuses=[CODE_STATUSES[c] for c in r[1]],
                    digest=r[2],
                    tags=tags,
                    split=r[4],
                    checks={k: (v[0], v[1]) for k, v in checks.items()},
                    items={k: ItemCounts(*v) for k, v in items.items()},
                )
                for r, (tags, checks, items) in zip(rows, parsed, strict=True)
            }
            return run_outcomes(digest.report, cases)

    def _all(self) -> list[CaseCells]:
        rows = self.store.digest_cases(self.run_id)[1]
        # One parse of the JSON columns of every row, not three per row: compare reads them
        # all, and 30,000 small json.loads cost more than the comparison itself.
        parsed = json.loads(
            "["
            + ",".join(f"[{r['tags_json']},{r['checks_json']},{r['items_json']}]" for r in rows)
            + "]"
        )
        return [
            CaseCells(
                id=r["case_id"],
                category=r["category"],
                tags=tags,
                split=r["split"],
                expect_digest=r["expect_digest"],
                statuses=[STATUS_NAMES[c] for c in r["codes"]],
                text=r["search_text"],
                checks={k: (v[0], v[1]) for k, v in checks.items()},
                items={k: (v[0], v[1], v[2]) for k, v in items.items()},
            )
            for r, (tags, checks, items) in zip(rows, parsed, strict=True)
        ]


@dataclass
class MemoryCells:
    """Rows built from a report (a running or stopped run), filtered in Python."""

    cells: list[CaseCells]

    def page(self, query: CaseQuery, offset: int, limit: int) -> tuple[int, list[CaseCells]]:
        chosen = [c for c in self.cells if query.matches(c.codes, c.tags, c.id, c.text)]
        return len(chosen), chosen[offset : offset + limit]

    def all(self) -> list[CaseCells]:
        return self.cells

    def outcomes(self, digest: RunDigest) -> RunOutcomes:
        return outcomes_from_digest(digest, self.cells)


@dataclass
class RunDigest:
    report: RunReport  # with `cases` left empty
    headline: list[tuple[str, str]]  # the text report's summary rows, made from the whole run
    latencies: list[float]  # sorted quantiles of the trials' latency
    costs: list[float]  # sorted quantiles of the trials' cost

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": DIGEST_VERSION,
                "report": self.report.model_dump(mode="json"),
                "headline": self.headline,
                "latencies": self.latencies,
                "costs": self.costs,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> RunDigest | None:
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
            latencies=data["latencies"],
            costs=data["costs"],
        )


def digest_of(report: RunReport) -> tuple[RunDigest, list[CaseCells]]:
    """The digest of a report, and its per-case rows."""
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
            trials=sorted(t.trial for t in c.trials),
            text=json.dumps(c.input, ensure_ascii=False).lower(),
            checks=outcomes[c.id].checks,
            items={k: (v.tp, v.fp, v.fn) for k, v in outcomes[c.id].items.items()},
        )
        for c in report.cases
    ]
    digest = RunDigest(
        report=report.model_copy(update={"cases": []}),
        headline=headline(report),
        latencies=_quantiles(sorted(t.latency_s for t in trials)),
        costs=_quantiles(sorted(t.cost_usd for t in trials)),
    )
    return digest, cells


def save_digest(store: RunStore, report: RunReport) -> tuple[RunDigest, list[CaseCells]] | None:
    """Store the digest of a finished run (None for an unfinished one, which may change)."""
    if report.status is not RunStatus.FINISHED:
        return None
    digest, cells = digest_of(report)
    store.save_digest(report.run_id, digest.to_json(), [c.row() for c in cells])
    return digest, cells


def load_digest(store: RunStore, run_id: str) -> RunDigest | None:
    """The stored digest (its rows are read through :class:`StoredCells`), or None when
    there is none (or one of another version)."""
    text = store.digest(run_id)
    return RunDigest.from_json(text) if text is not None else None


def outcomes_from_digest(digest: RunDigest, cells: list[CaseCells]) -> RunOutcomes:
    """What compare and gate need, from a digest: the same as from the full report."""
    with paused_gc():
        return _outcomes(digest, cells)


def _outcomes(digest: RunDigest, cells: list[CaseCells]) -> RunOutcomes:
    report = digest.report
    cases = {
        c.id: CaseOutcome(
            statuses=[STATUSES[s] for s in c.statuses],  # a lookup: TrialStatus(s) is slow
            digest=c.expect_digest,
            tags=list(c.tags),
            split=c.split,
            checks=dict(c.checks),
            items={k: ItemCounts(*v) for k, v in c.items.items()},
        )
        for c in cells
    }
    return run_outcomes(report, cases)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Tens of thousands of small objects made at once: the collector would rescan them
    over and over while they are made (more than doubling the time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _quantiles(values: list[float]) -> list[float]:
    if len(values) <= QUANTILES:
        return values
    step = (len(values) - 1) / (QUANTILES - 1)
    return [values[round(i * step)] for i in range(QUANTILES)]


def compare_stored(store: RunStore, a: RunDigest, b: RunDigest) -> Comparison:
    """Run ``b`` against run ``a``, both finished with stored digests, from their rows paired
    by case id (:meth:`RunStore.digest_pairs`): the same comparison as from the whole
    outcomes, reading four short columns a case and decoding only the flipped cases' checks."""
    found = store.digest_pairs(a.report.run_id, b.report.run_id)
    with paused_gc():
        flipped = [r for r in found.pairs if r[5] is not None]
        parsed = json.loads("[" + ",".join(f"[{r[5]},{r[6]}]" for r in flipped) + "]")
        checks = {r[0]: pair for r, pair in zip(flipped, parsed, strict=True)}
        pairs = []
        for case_id, codes_a, codes_b, digest_a, digest_b, _, _ in found.pairs:
            both = checks.get(case_id)
            pairs.append(
                CasePair(
                    case_id, codes_a, codes_b, digest_a, digest_b,
                    _counts(both[0]) if both else None, _counts(both[1]) if both else None,
                )
            )  # fmt: skip
        side_a, side_b = run_outcomes(a.report, {}), run_outcomes(b.report, {})
        return compare_pairs(side_a, side_b, pairs, found.added, found.removed)


def _counts(checks: dict[str, list[int]]) -> dict[str, tuple[int, int]]:
    return {k: (v[0], v[1]) for k, v in checks.items()}
