"""caseforge: an agent's golden dataset as code.

The names below are the library's public API; everything else is importable from its
module but may change between releases. They load on first use, so ``import caseforge``
stays cheap and the subpackages can import each other without cycles. (The ``@oracle``
decorator stays at ``caseforge.oracle``: a package attribute cannot share a subpackage's name.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge._version import __version__
from caseforge.imports import lazy_names

_EXPORTS: dict[str, str] = {
    # the dataset
    "Case": "caseforge.case.model",
    "Suite": "caseforge.case.load",
    "SuiteConfig": "caseforge.case.suite",
    "load_case": "caseforge.case.load",
    "load_suite": "caseforge.case.load",
    # check modes, built in and your own
    "CheckMode": "caseforge.checks.custom",
    "OptionOrder": "caseforge.checks.base",
    "Reads": "caseforge.checks.base",
    "Verdict": "caseforge.checks.base",
    "failed": "caseforge.checks.base",
    "passed": "caseforge.checks.base",
    # the agent's side
    "AgentContext": "caseforge.agent.context",
    # running, comparing, gating
    "run_suite": "caseforge.api",
    "arun_suite": "caseforge.api",
    "validate_suite": "caseforge.api",
    "build_report": "caseforge.api",
    "make_baseline": "caseforge.api",
    "compare_runs": "caseforge.api",
    "gate_run": "caseforge.api",
    "Cancellation": "caseforge.run.cancel",
    "Interrupted": "caseforge.errors",
    "load_report": "caseforge.report.build",
    "RunReport": "caseforge.report.model",
    "CompareResult": "caseforge.compare.pairing",
    "GateResult": "caseforge.compare.gate",
    "Baseline": "caseforge.compare.baseline",
    "write_baseline": "caseforge.compare.baseline",
    # errors, each with its exit code
    "CaseforgeError": "caseforge.errors",
    "DatasetError": "caseforge.errors",
    "UsageError": "caseforge.errors",
    "BudgetExceeded": "caseforge.errors",
    "TooManyAgentErrors": "caseforge.errors",
    "EnvError": "caseforge.errors",
}

__all__ = [
    "AgentContext",
    "Baseline",
    "BudgetExceeded",
    "Cancellation",
    "Case",
    "CaseforgeError",
    "CheckMode",
    "CompareResult",
    "DatasetError",
    "EnvError",
    "GateResult",
    "Interrupted",
    "OptionOrder",
    "Reads",
    "RunReport",
    "Suite",
    "SuiteConfig",
    "TooManyAgentErrors",
    "UsageError",
    "Verdict",
    "__version__",
    "arun_suite",
    "build_report",
    "compare_runs",
    "failed",
    "gate_run",
    "load_case",
    "load_report",
    "load_suite",
    "make_baseline",
    "passed",
    "run_suite",
    "validate_suite",
    "write_baseline",
]

if TYPE_CHECKING:
    from caseforge.agent.context import AgentContext
    from caseforge.api import (
        arun_suite,
        build_report,
        compare_runs,
        gate_run,
        make_baseline,
        run_suite,
        validate_suite,
    )
    from caseforge.case.load import Suite, load_case, load_suite
    from caseforge.case.model import Case
    from caseforge.case.suite import SuiteConfig
    from caseforge.checks.base import OptionOrder, Reads, Verdict, failed, passed
    from caseforge.checks.custom import CheckMode
    from caseforge.compare.baseline import Baseline, write_baseline
    from caseforge.compare.gate import GateResult
    from caseforge.compare.pairing import CompareResult
    from caseforge.errors import (
        BudgetExceeded,
        CaseforgeError,
        DatasetError,
        EnvError,
        Interrupted,
        TooManyAgentErrors,
        UsageError,
    )
    from caseforge.report.build import load_report
    from caseforge.report.model import RunReport
    from caseforge.run.cancel import Cancellation


__getattr__ = lazy_names("caseforge", _EXPORTS)


def __dir__() -> list[str]:
    return sorted(__all__)
