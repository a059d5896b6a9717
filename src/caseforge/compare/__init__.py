"""Pairing two runs, baselines, the regression gate, and history across runs."""

from caseforge.compare.baseline import baseline_from_report, load_baseline, write_baseline
from caseforge.compare.gate import GateResult, RuleVerdict, gate
from caseforge.compare.outcomes import CaseOutcome, RunOutcomes, outcomes_from_report
from caseforge.compare.pairing import Comparison, compare_runs

__all__ = [
    "CaseOutcome",
    "Comparison",
    "GateResult",
    "RuleVerdict",
    "RunOutcomes",
    "baseline_from_report",
    "compare_runs",
    "gate",
    "load_baseline",
    "outcomes_from_report",
    "write_baseline",
]
