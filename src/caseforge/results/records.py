"""Typed records of graded case-trials: what grading produces, the store keeps and every
report, comparison and gate reads.

One record per case-trial, on the hot path, so these are slotted dataclasses (pydantic
validation would cost tens of µs each); the report models at the edges are pydantic.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypedDict

from caseforge.jsontypes import JSONObject
from caseforge.values import json_text


class CheckStatus(StrEnum):
    """The verdict of one check on one case-trial."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the check could not run (e.g. no outcome probe)
    SKIPPED = "skipped"  # `ignore`, written down on purpose
    # A judge check with no judge, a cost the agent never reported: keeps the case-trial
    # from passing (incomplete).
    NOT_JUDGED = "not_judged"
    CANNOT_JUDGE = "cannot_judge"  # paused for approval before replying: reply checks don't apply


class TrialStatus(StrEnum):
    """A case-trial's verdict. Only ``pass`` counts as passing."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the agent crashed, timed out or answered nonsense; or a check could not run
    INCOMPLETE = "incomplete"  # every code check passed but a judge check was not judged

    @property
    def letter(self) -> str:
        """One letter per status (P, F, E, I), as baselines and history write trials."""
        return self.value[0].upper()

    @classmethod
    def from_letter(cls, letter: str) -> TrialStatus:
        """The status a letter stands for; ``ValueError`` for an unknown letter."""
        for status in cls:
            if status.letter == letter:
                return status
        raise ValueError(f"unknown trial letter {letter!r} (one of P, F, E, I)")


def trial_letters(statuses: Iterable[TrialStatus]) -> str:
    """``PPFE``: a case's trials in one short string."""
    return "".join(s.letter for s in statuses)


class RunStatus(StrEnum):
    """Where a run stands. A stopped run (budget, interrupt) can be resumed."""

    RUNNING = "running"
    FINISHED = "finished"
    STOPPED = "stopped"


class ResultRow(TypedDict):
    """One row of the store's ``results`` table (``store/schema.py``): a graded case-trial,
    its JSON columns as text."""

    run_id: str
    case_id: str
    trial: int
    status: str
    error: str | None
    latency_s: float
    cost_usd: float
    input_tokens: int
    output_tokens: int
    response_json: str | None
    outcomes_json: str | None
    checks_json: str
    finished_at: str
    fixtures_json: str | None
    log_json: str | None
    spans_json: str | None


ACTUAL_BYTES = 2048  # what a check result keeps of what it graded; the rest is by reference


@dataclass(slots=True)
class CheckResult:
    """One check's verdict with what was expected, what was found, and why.

    ``actual`` keeps at most ACTUAL_BYTES of its JSON: a longer value becomes an excerpt
    (its text, cut), ``actual_bytes`` its full size and ``actual_ref`` the field in the
    trial's stored response that holds it whole (``reply``, ``output.summary``,
    ``outcomes.refund``), so a 50 MB reply is stored once per case-trial, not once per
    check that read it."""

    name: str
    mode: str
    status: CheckStatus
    expected: object = None
    actual: object = None
    reason: str = ""
    actual_bytes: int | None = None  # set when `actual` was cut: the full value's size
    actual_ref: str | None = None  # and where the full value is
    cost_usd: float | None = None  # a judge check: what its verdict cost (0 from the cache)

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "name": self.name,
            "mode": self.mode,
            "status": self.status.value,
            "expected": self.expected,
            "actual": self.actual,
            "reason": self.reason,
        }
        if self.actual_bytes is not None:
            data["actual_bytes"] = self.actual_bytes
            data["actual_ref"] = self.actual_ref
        if self.cost_usd is not None:
            data["cost_usd"] = self.cost_usd
        return data

    @classmethod
    def from_json(cls, data: JSONObject) -> CheckResult:
        size, ref = data.get("actual_bytes"), data.get("actual_ref")
        cost = data.get("cost_usd")
        return cls(
            str(data["name"]),
            str(data["mode"]),
            CheckStatus(str(data["status"])),
            data.get("expected"),
            data.get("actual"),
            str(data.get("reason", "")),
            size if isinstance(size, int) else None,
            ref if isinstance(ref, str) else None,
            float(cost) if isinstance(cost, int | float) else None,
        )

    def cut(self, ref: str | None) -> CheckResult:
        """Keep at most ACTUAL_BYTES of ``actual``: the excerpt, the size and ``ref``."""
        actual = self.actual
        if type(actual) is str:
            if len(actual) <= ACTUAL_BYTES // 4:  # 4 bytes a character at most: it fits
                return self
            text = actual
        elif isinstance(actual, dict | list):
            text = json_text(actual)
        else:
            return self
        size = len(text.encode("utf-8"))
        if size <= ACTUAL_BYTES:
            return self
        excerpt = text.encode("utf-8")[: ACTUAL_BYTES - 3].decode("utf-8", "ignore")
        self.actual, self.actual_bytes, self.actual_ref = excerpt + "…", size, ref
        return self


@dataclass(slots=True)
class TrialRecord:
    """One graded case-trial."""

    case_id: str
    trial: int
    status: TrialStatus
    checks: list[CheckResult] = field(default_factory=list)
    error: str | None = None
    latency_s: float = 0.0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0

    @classmethod
    def from_row(cls, row: ResultRow) -> TrialRecord:
        """A record from a store row (the ``results`` table)."""
        return cls(
            case_id=row["case_id"],
            trial=row["trial"],
            status=TrialStatus(row["status"]),
            checks=[CheckResult.from_json(c) for c in json.loads(row["checks_json"])],
            error=row["error"],
            latency_s=row["latency_s"],
            cost_usd=row["cost_usd"],
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
        )

    def to_row(
        self,
        run_id: str,
        finished_at: str,
        response_json: str | None = None,
        outcomes_json: str | None = None,
        fixtures_json: str | None = None,
        log_json: str | None = None,
        spans_json: str | None = None,
    ) -> ResultRow:
        """The store row of this record, with the raw response, what the probe read, how
        the trial used the fixtures, what the agent's side wrote (its log) and the agent's
        spans."""
        return {
            "run_id": run_id,
            "case_id": self.case_id,
            "trial": self.trial,
            "status": self.status.value,
            "error": self.error,
            "latency_s": self.latency_s,
            "cost_usd": self.cost_usd,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "response_json": response_json,
            "outcomes_json": outcomes_json,
            "checks_json": _encode([c.to_json() for c in self.checks]),
            "finished_at": finished_at,
            "fixtures_json": fixtures_json,
            "log_json": log_json,
            "spans_json": spans_json,
        }


def _encode(value: object) -> str:
    """Compact UTF-8 JSON, a non-finite float as ``{"$float": "NaN"}``; pydantic-core's
    encoder is about 4× the standard library's, and a run encodes one list of checks per
    case-trial."""
    return json_text(value)


# How a failed outcome probe's check reason begins: the failure is the agent side's.
PROBE_FAILED = "the outcome probe failed"


# --- judge bookkeeping ------------------------------------------------------------------------

NO_JUDGE_REASON = (
    "no judge available: not judged (the judge needs a model, judge.model in "
    "caseforge.yaml or CASEFORGE_MODEL, and an endpoint, OPENAI_API_KEY or OPENAI_BASE_URL; "
    "or pass --no-judge to skip judge checks on purpose)"
)


def needs_judge(record: TrialRecord) -> bool:
    """Whether a graded case-trial has judge checks still waiting for the judge."""
    return any(c.mode == "judge" and c.status is CheckStatus.NOT_JUDGED for c in record.checks)


def trial_status(results: list[CheckResult]) -> TrialStatus:
    """error if a check could not run; else fail if any failed; else incomplete if a check
    was not judged (a judge check without its judge, a cost nobody reported); else pass."""
    statuses = {r.status for r in results}
    if _CHECK_ERROR in statuses:
        return _ERROR
    if _CHECK_FAIL in statuses:
        return _FAIL
    if _NOT_JUDGED in statuses:
        return _INCOMPLETE
    return _PASS


# Enum members are read through a class descriptor: looked up once, not per case-trial.
_CHECK_ERROR, _CHECK_FAIL, _NOT_JUDGED = CheckStatus.ERROR, CheckStatus.FAIL, CheckStatus.NOT_JUDGED
_ERROR, _FAIL, _INCOMPLETE, _PASS = (
    TrialStatus.ERROR,
    TrialStatus.FAIL,
    TrialStatus.INCOMPLETE,
    TrialStatus.PASS,
)
