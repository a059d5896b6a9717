"""Grading: one grader per check mode, and grading a whole case-trial."""

from caseforge.grade.base import GRADERS, CheckResult, CheckStatus, grader
from caseforge.grade.trial import GradeOptions, TrialStatus, grade_trial, trial_status

__all__ = [
    "GRADERS",
    "CheckResult",
    "CheckStatus",
    "GradeOptions",
    "TrialStatus",
    "grade_trial",
    "grader",
    "trial_status",
]
