"""Check modes: the built-in ones, the table they are read from, and your own.

Names are imported on first use, so importing one module of the package does not
load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.checks.base import BaseCheck as BaseCheck
    from caseforge.checks.base import OptionOrder as OptionOrder
    from caseforge.checks.base import Reads as Reads
    from caseforge.checks.base import SuiteFileError as SuiteFileError
    from caseforge.checks.base import TrialFacts as TrialFacts
    from caseforge.checks.base import Verdict as Verdict
    from caseforge.checks.base import failed as failed
    from caseforge.checks.base import passed as passed
    from caseforge.checks.base import show as show
    from caseforge.checks.builtin import BUILTIN_CHECKS as BUILTIN_CHECKS
    from caseforge.checks.builtin import ExactCheck as ExactCheck
    from caseforge.checks.builtin import ExactSetCheck as ExactSetCheck
    from caseforge.checks.builtin import IgnoreCheck as IgnoreCheck
    from caseforge.checks.builtin import IncludeShorthand as IncludeShorthand
    from caseforge.checks.builtin import JudgeCheck as JudgeCheck
    from caseforge.checks.builtin import MustIncludeCheck as MustIncludeCheck
    from caseforge.checks.builtin import MustNotIncludeCheck as MustNotIncludeCheck
    from caseforge.checks.builtin import NumberCheck as NumberCheck
    from caseforge.checks.builtin import OutcomeCheck as OutcomeCheck
    from caseforge.checks.builtin import RegexCheck as RegexCheck
    from caseforge.checks.builtin import UndeclaredCheck as UndeclaredCheck
    from caseforge.checks.custom import CheckMode as CheckMode
    from caseforge.checks.custom import declare as declare
    from caseforge.checks.custom import load_checks_file as load_checks_file
    from caseforge.checks.custom import mode_table as mode_table
    from caseforge.checks.json_mode import JsonCheck as JsonCheck
    from caseforge.checks.matching import outcome_matches as outcome_matches
    from caseforge.checks.measures import CostCheck as CostCheck
    from caseforge.checks.measures import LatencyCheck as LatencyCheck
    from caseforge.checks.scripts import JavascriptCheck as JavascriptCheck
    from caseforge.checks.scripts import PythonCheck as PythonCheck
    from caseforge.checks.table import BUILTIN_MODES as BUILTIN_MODES
    from caseforge.checks.table import Check as Check
    from caseforge.checks.table import ModeSpec as ModeSpec
    from caseforge.checks.table import ModeTable as ModeTable
    from caseforge.checks.tools import CallMatcher as CallMatcher
    from caseforge.checks.tools import ToolCallsCheck as ToolCallsCheck

_WHERE = {
    "BaseCheck": "caseforge.checks.base",
    "OptionOrder": "caseforge.checks.base",
    "Reads": "caseforge.checks.base",
    "SuiteFileError": "caseforge.checks.base",
    "TrialFacts": "caseforge.checks.base",
    "Verdict": "caseforge.checks.base",
    "failed": "caseforge.checks.base",
    "passed": "caseforge.checks.base",
    "show": "caseforge.checks.base",
    "BUILTIN_CHECKS": "caseforge.checks.builtin",
    "ExactCheck": "caseforge.checks.builtin",
    "ExactSetCheck": "caseforge.checks.builtin",
    "IgnoreCheck": "caseforge.checks.builtin",
    "IncludeShorthand": "caseforge.checks.builtin",
    "JudgeCheck": "caseforge.checks.builtin",
    "MustIncludeCheck": "caseforge.checks.builtin",
    "MustNotIncludeCheck": "caseforge.checks.builtin",
    "NumberCheck": "caseforge.checks.builtin",
    "OutcomeCheck": "caseforge.checks.builtin",
    "RegexCheck": "caseforge.checks.builtin",
    "UndeclaredCheck": "caseforge.checks.builtin",
    "CheckMode": "caseforge.checks.custom",
    "declare": "caseforge.checks.custom",
    "load_checks_file": "caseforge.checks.custom",
    "mode_table": "caseforge.checks.custom",
    "JsonCheck": "caseforge.checks.json_mode",
    "outcome_matches": "caseforge.checks.matching",
    "CostCheck": "caseforge.checks.measures",
    "LatencyCheck": "caseforge.checks.measures",
    "JavascriptCheck": "caseforge.checks.scripts",
    "PythonCheck": "caseforge.checks.scripts",
    "BUILTIN_MODES": "caseforge.checks.table",
    "Check": "caseforge.checks.table",
    "ModeSpec": "caseforge.checks.table",
    "ModeTable": "caseforge.checks.table",
    "CallMatcher": "caseforge.checks.tools",
    "ToolCallsCheck": "caseforge.checks.tools",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.checks", _WHERE)
