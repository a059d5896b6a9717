"""Pairing two runs, baselines, the regression gate, and history across runs.

Names are imported on first use, so importing one module of the package does not
load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.compare.baseline import baseline_from_report as baseline_from_report
    from caseforge.compare.baseline import load_baseline as load_baseline
    from caseforge.compare.baseline import write_baseline as write_baseline
    from caseforge.compare.gate import GateDecision as GateDecision
    from caseforge.compare.gate import GateResult as GateResult
    from caseforge.compare.gate import RuleVerdict as RuleVerdict
    from caseforge.compare.gate import gate as gate
    from caseforge.compare.outcomes import CaseOutcome as CaseOutcome
    from caseforge.compare.outcomes import RunOutcomes as RunOutcomes
    from caseforge.compare.outcomes import outcomes_from_report as outcomes_from_report
    from caseforge.compare.pairing import Comparison as Comparison
    from caseforge.compare.pairing import compare_runs as compare_runs

_WHERE = {
    "baseline_from_report": "caseforge.compare.baseline",
    "load_baseline": "caseforge.compare.baseline",
    "write_baseline": "caseforge.compare.baseline",
    "GateDecision": "caseforge.compare.gate",
    "GateResult": "caseforge.compare.gate",
    "RuleVerdict": "caseforge.compare.gate",
    "gate": "caseforge.compare.gate",
    "CaseOutcome": "caseforge.compare.outcomes",
    "RunOutcomes": "caseforge.compare.outcomes",
    "outcomes_from_report": "caseforge.compare.outcomes",
    "Comparison": "caseforge.compare.pairing",
    "compare_runs": "caseforge.compare.pairing",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.compare", _WHERE)
