"""Grading: one grader per check mode, and grading a whole case-trial into results."""

from caseforge.grade.base import GRADERS, grader
from caseforge.grade.trial import GradeOptions, grade_trial

__all__ = ["GRADERS", "GradeOptions", "grade_trial", "grader"]
