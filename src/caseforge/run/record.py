"""From what the executor returned to a graded record and its store row."""

from __future__ import annotations

import json
from typing import Any

from caseforge.grade.trial import GradeOptions, grade_trial
from caseforge.results import CheckResult, TrialRecord, TrialStatus
from caseforge.run.executor import TrialOutcome
from caseforge.store.db import utcnow
from caseforge.values import finite_text, json_text


def grade_outcome(outcome: TrialOutcome, options: GradeOptions) -> TrialRecord:
    """Grade what the executor returned (an agent error is an ``error`` with no checks)."""
    task = outcome.task
    result = outcome.result
    usage = result.usage if result is not None else None
    if result is None:
        status, checks = TrialStatus.ERROR, list[CheckResult]()
    else:
        status, checks = grade_trial(
            task.case, result, outcome.outcomes, options, outcome.outcome_error
        )
    return TrialRecord(
        case_id=task.case.id,
        trial=task.trial,
        status=status,
        checks=checks,
        error=outcome.error,
        latency_s=outcome.latency_s,
        cost_usd=usage.cost_usd if usage else 0.0,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
    )


def store_row(outcome: TrialOutcome, record: TrialRecord) -> dict[str, Any]:
    """The store row of a graded case-trial: the record, the raw response, the probe's reading."""
    result = outcome.result
    if outcome.stderr_tail:
        record.error = f"{record.error}\n--- stderr (tail) ---\n{outcome.stderr_tail}"
    return record.to_row(
        outcome.task.run_id,
        utcnow(),
        finite_text(result.model_dump_json()) if result is not None else None,
        json_text(outcome.outcomes) if outcome.outcomes is not None else None,
        json.dumps(outcome.fixtures, ensure_ascii=False) if outcome.fixtures else None,
        json.dumps({"text": outcome.log, "dropped": outcome.log_dropped}, ensure_ascii=False)
        if outcome.log
        else None,
    )
