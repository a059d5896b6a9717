"""Typed records of graded case-trials, and reading them back from the run store.

Names are imported on first use, so importing one module of the package does not
load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.results.records import ACTUAL_BYTES as ACTUAL_BYTES
    from caseforge.results.records import NO_JUDGE_REASON as NO_JUDGE_REASON
    from caseforge.results.records import PROBE_FAILED as PROBE_FAILED
    from caseforge.results.records import CheckResult as CheckResult
    from caseforge.results.records import CheckStatus as CheckStatus
    from caseforge.results.records import ResultRow as ResultRow
    from caseforge.results.records import RunStatus as RunStatus
    from caseforge.results.records import TrialRecord as TrialRecord
    from caseforge.results.records import TrialStatus as TrialStatus
    from caseforge.results.records import needs_judge as needs_judge
    from caseforge.results.records import trial_letters as trial_letters
    from caseforge.results.records import trial_status as trial_status

_WHERE = {
    "ACTUAL_BYTES": "caseforge.results.records",
    "NO_JUDGE_REASON": "caseforge.results.records",
    "PROBE_FAILED": "caseforge.results.records",
    "CheckResult": "caseforge.results.records",
    "CheckStatus": "caseforge.results.records",
    "ResultRow": "caseforge.results.records",
    "RunStatus": "caseforge.results.records",
    "TrialRecord": "caseforge.results.records",
    "TrialStatus": "caseforge.results.records",
    "needs_judge": "caseforge.results.records",
    "trial_letters": "caseforge.results.records",
    "trial_status": "caseforge.results.records",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.results", _WHERE)
