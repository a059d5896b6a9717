"""caseforge: an agent's golden dataset as code.

The names below are the library's public API; everything else is importable from its
module but may change between releases. They load on first use, so ``import caseforge``
stays cheap and the subpackages can import each other without cycles. (The ``@oracle``
decorator stays at ``caseforge.oracle``: a package attribute cannot share a subpackage's name.)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

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
}

__all__ = [
    "AgentContext",
    "Case",
    "CheckMode",
    "OptionOrder",
    "Reads",
    "Suite",
    "SuiteConfig",
    "Verdict",
    "__version__",
    "failed",
    "load_case",
    "load_suite",
    "passed",
]

if TYPE_CHECKING:
    from caseforge.agent.context import AgentContext
    from caseforge.case.load import Suite, load_case, load_suite
    from caseforge.case.model import Case
    from caseforge.case.suite import SuiteConfig
    from caseforge.checks.base import OptionOrder, Reads, Verdict, failed, passed
    from caseforge.checks.custom import CheckMode


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'caseforge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
