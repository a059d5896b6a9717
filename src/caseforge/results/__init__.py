"""Typed records of graded case-trials, and reading them back from the run store."""

from caseforge.results.records import (
    ACTUAL_BYTES,
    NO_JUDGE_REASON,
    PROBE_FAILED,
    CheckResult,
    CheckStatus,
    RunStatus,
    TrialRecord,
    TrialStatus,
    needs_judge,
    trial_letters,
    trial_status,
)

__all__ = [
    "ACTUAL_BYTES",
    "NO_JUDGE_REASON",
    "PROBE_FAILED",
    "CheckResult",
    "CheckStatus",
    "RunStatus",
    "TrialRecord",
    "TrialStatus",
    "needs_judge",
    "trial_letters",
    "trial_status",
]
