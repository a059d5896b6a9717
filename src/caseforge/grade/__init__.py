"""Grading a whole case-trial into check results (the modes themselves are in ``checks``)."""

from caseforge.grade.trial import GradeOptions, grade_trial

__all__ = ["GradeOptions", "grade_trial"]
