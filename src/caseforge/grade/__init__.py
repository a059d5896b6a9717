"""Grading a whole case-trial into check results (the modes themselves are in ``checks``).

Names are imported on first use, so importing one module of the package does not
load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.grade.trial import GradeOptions as GradeOptions
    from caseforge.grade.trial import grade_trial as grade_trial

_WHERE = {
    "GradeOptions": "caseforge.grade.trial",
    "grade_trial": "caseforge.grade.trial",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.grade", _WHERE)
