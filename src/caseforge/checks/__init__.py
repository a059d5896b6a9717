"""Check modes: the built-in ones, the table they are read from, and your own."""

from caseforge.checks.base import (
    BaseCheck,
    OptionOrder,
    Reads,
    Verdict,
    failed,
    passed,
    show,
)
from caseforge.checks.builtin import (
    BUILTIN_CHECKS,
    ExactCheck,
    ExactSetCheck,
    IgnoreCheck,
    IncludeShorthand,
    JudgeCheck,
    MustIncludeCheck,
    MustNotIncludeCheck,
    NumberCheck,
    OutcomeCheck,
    RegexCheck,
    UndeclaredCheck,
)
from caseforge.checks.custom import CheckMode, declare, load_checks_file, mode_table
from caseforge.checks.matching import outcome_matches
from caseforge.checks.table import BUILTIN_MODES, Check, ModeSpec, ModeTable
from caseforge.checks.tools import CallMatcher, ToolCallsCheck

__all__ = [
    "BUILTIN_CHECKS",
    "BUILTIN_MODES",
    "BaseCheck",
    "CallMatcher",
    "Check",
    "CheckMode",
    "ExactCheck",
    "ExactSetCheck",
    "IgnoreCheck",
    "IncludeShorthand",
    "JudgeCheck",
    "ModeSpec",
    "ModeTable",
    "MustIncludeCheck",
    "MustNotIncludeCheck",
    "NumberCheck",
    "OptionOrder",
    "OutcomeCheck",
    "Reads",
    "RegexCheck",
    "ToolCallsCheck",
    "UndeclaredCheck",
    "Verdict",
    "declare",
    "failed",
    "load_checks_file",
    "mode_table",
    "outcome_matches",
    "passed",
    "show",
]
