"""From what the executor returned to a graded record and its store row."""

from __future__ import annotations

import json
import math

from caseforge.grade.trial import GradeOptions, grade_trial
from caseforge.results import CheckResult, ResultRow, TrialRecord, TrialStatus
from caseforge.run.executor import TrialOutcome
from caseforge.store.db import utcnow
from caseforge.tracing.spans import stored_json
from caseforge.values import finite_text, json_text


def grade_outcome(outcome: TrialOutcome, options: GradeOptions) -> TrialRecord:
    """Grade what the executor returned (an agent error is an ``error`` with no checks)."""
    task = outcome.task
    result = outcome.result
    usage = result.usage if result is not None else None
    if usage is not None and not math.isfinite(usage.cost_usd):  # set after it was parsed
        outcome.error = f"the agent's usage.cost_usd is not a finite number ({usage.cost_usd})"
        result = outcome.result = usage = None
    if result is None:
        status, checks = TrialStatus.ERROR, list[CheckResult]()
    else:
        status, checks = grade_trial(
            task.case,
            result,
            outcome.outcomes,
            options,
            outcome.outcome_error,
            outcome.latency_s,
            outcome.spans,
            outcome.spans_missing,
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


def store_row(outcome: TrialOutcome, record: TrialRecord) -> ResultRow:
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
        _log_json(outcome, record) if outcome.log else None,
        stored_json(outcome.spans, outcome.spans_dropped, outcome.spans_missing)
        if outcome.spans or outcome.spans_missing
        else None,
    )


PASSING_LOG_CHARS = 8 * 1024  # a passing trial keeps this much of its log's head and tail


def _log_json(outcome: TrialOutcome, record: TrialRecord) -> str:
    """The trial's log as stored: all that was kept (64 KB each end) for a trial that did
    not pass, where it is read; 8 KB each end for one that passed, so a chatty agent does
    not grow the store by a gigabyte every 10,000 case-trials."""
    text, dropped = outcome.log, outcome.log_dropped
    if record.status is TrialStatus.PASS and len(text) > 2 * PASSING_LOG_CHARS:
        kept = text.replace(f"\n[… {dropped:,} bytes dropped …]\n", "", 1) if dropped else text
        head, tail = kept[:PASSING_LOG_CHARS], kept[-PASSING_LOG_CHARS:]
        written = len(kept.encode("utf-8")) + dropped
        dropped = written - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
        text = f"{head}\n[… {dropped:,} bytes dropped …]\n{tail}"
    return json.dumps({"text": text, "dropped": dropped}, ensure_ascii=False)
