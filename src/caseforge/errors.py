"""Problems found in user files, each pinned to ``path:line:col`` and a field."""

from __future__ import annotations

import difflib
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from caseforge.jsontypes import JSONObject

if TYPE_CHECKING:  # pydantic itself is imported by what raises one, not by every command
    from pydantic import ValidationError

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One error or warning about a user file: where, which field, and what is wrong.

    ``line`` and ``col`` are 1-based; 0 means the position is not known.
    """

    path: Path
    line: int
    col: int
    field: str
    message: str
    severity: Severity = "error"
    case_id: str | None = None

    def format(self) -> str:
        """``path:line:col: field: message``, the one-line form the CLI prints. A position
        that is not known is left out (``path: message``), never printed as ``:0:0``."""
        where = str(self.path)
        if self.line > 0:
            where += f":{self.line}:{self.col}" if self.col > 0 else f":{self.line}"
        field = f"{self.field}: " if self.field else ""
        return f"{where}: {field}{self.message}"

    def to_json(self) -> JSONObject:
        """A JSON-ready mapping of this problem."""
        return {
            "path": str(self.path),
            "line": self.line,
            "col": self.col,
            "field": self.field,
            "message": self.message,
            "severity": self.severity,
            "case_id": self.case_id,
        }


class CaseforgeError(Exception):
    """A mistake caseforge reports as one or more one-line problems, never a traceback.

    Every caseforge exception derives from it. Each subclass carries its exit code, from
    ``EXIT_CODES`` (the docs site's exit-code reference is generated from it);
    ``caseforge.cli.main`` is the one place that turns an error into that code. A plain
    ``CaseforgeError`` is an invalid dataset or config (1)."""

    exit_code: ClassVar[int] = 1

    def __init__(self, problems: list[Problem] | Problem | str) -> None:
        if isinstance(problems, str):
            self.problems: list[Problem] = []
            self.text = problems
        else:
            self.problems = [problems] if isinstance(problems, Problem) else list(problems)
            self.text = "\n".join(p.format() for p in self.problems)
        super().__init__(self.text)


class DatasetError(CaseforgeError):
    """An invalid case, suite config, oracle or check module; a finding; a blocked request."""

    exit_code = 1


class UsageError(CaseforgeError):
    """A missing, wrong or contradictory option."""

    exit_code = 2


class BudgetExceeded(CaseforgeError):
    """The run stopped at ``--max-cost``; it can be resumed."""

    exit_code = 3


class TooManyAgentErrors(CaseforgeError):
    """More case-trials ended in agent errors than the run allows."""

    exit_code = 4


class EnvError(CaseforgeError):
    """The machine, not the user's files: a store or git that cannot be read, a missing
    tool, I/O, a shallow clone where history is required."""

    exit_code = 5


EXIT_INTERRUPTED = 130  # SIGINT
EXIT_TERMINATED = 143  # SIGTERM

# Every exit code, with what it means: the same for every command (the docs' reference
# page is generated from this table, and a test holds the README's and --help's to it).
EXIT_CODES: dict[int, str] = {
    0: "success",
    1: "a regression, an invalid dataset or config (a gate rule naming an unknown metric or "
    "tag included), audit findings, a blocked request",
    2: "a usage error: a missing, wrong or out-of-range option (`--trials 0`, `--format html` "
    "for `gate`), an unknown run id, case or config, a file that is not what the command "
    "reads (a truncated report, a baseline from a newer caseforge), a store URL that does "
    "not parse, no gate rules, a missing baseline",
    3: "stopped by budget (`--max-cost`)",
    4: "too many agent errors: more than `--max-error-rate` (the suite's `max_error_rate`, "
    "default 0.1) of a configuration's case-trials ended in an agent exception, a timeout, "
    "an invalid answer or a failed outcome probe",
    5: "an environment error: a store that cannot be opened, created or written (locked, "
    "read-only), a shared store whose schema needs `store upgrade`, a missing database "
    "driver, git that cannot be read, a shallow clone under `--require-history`, no model "
    "for a command that needs one (`synth write`, `resynth`)",
    130: "interrupted by SIGINT",
    143: "interrupted by SIGTERM",
}


class Interrupted(BaseException):
    """A stop asked for from outside: Ctrl-C, SIGTERM, or a caller's cancellation.

    Never a mistake in the user's files, so it is not a :class:`CaseforgeError`; and a
    ``BaseException``, so no ``except Exception`` on the way (around a suite's own code,
    say) takes it for that code's failure. The CLI exits 143 for SIGTERM, else 130.
    ``detail`` says what was kept (``the run is saved as stopped: …``)."""

    def __init__(self, signal_name: str = "cancelled", detail: str = "") -> None:
        self.signal_name = signal_name
        self.detail = detail
        super().__init__(self.text)

    def __str__(self) -> str:
        return self.text

    @property
    def text(self) -> str:
        """``interrupted (SIGTERM); the run is saved as stopped: …``"""
        return f"interrupted ({self.signal_name})" + (f"; {self.detail}" if self.detail else "")

    @property
    def exit_code(self) -> int:
        return EXIT_TERMINATED if self.signal_name == "SIGTERM" else EXIT_INTERRUPTED


def did_you_mean(word: object, known: Iterable[object], cutoff: float = 0.6) -> str:
    """`` (did you mean 'trials'?)`` with the known name nearest ``word``, or ``""`` when
    none is near: the one hint every rejection of an unknown key, mode or name gives."""
    names = sorted({str(name) for name in known} - {str(word)})
    near = difflib.get_close_matches(str(word), names, n=1, cutoff=cutoff)
    return f" (did you mean {near[0]!r}?)" if near else ""


def first_validation_error(exc: ValidationError) -> str:
    """``where.it.is: what is wrong (and N more)`` for the first error pydantic found."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"


class SuiteExit(DatasetError):
    """A suite's own code (an agent, oracle, check, hook or simulated user) raised
    ``SystemExit`` or ``KeyboardInterrupt``: that code's failure, never caseforge's. An
    ordinary exception, so it is handled where that code's other failures are (an agent's
    is an error on its case-trial; one that reached the CLI would be the suite's: 1)."""

    def __init__(self, original: BaseException) -> None:
        self.original = original
        super().__init__(describe_exit(original))


def describe_exit(exc: BaseException) -> str:
    """``called sys.exit(3)`` or ``raised KeyboardInterrupt``: what the code did."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})" if exc.code is not None else "called sys.exit()"
    return f"raised {type(exc).__name__}" + (f": {exc}" if str(exc) else "")


def suite_exit(exc: BaseException) -> SuiteExit | None:
    """``exc``, raised by a suite's code on this thread, as that code's failure; None when
    it is a real stop. ``SystemExit`` always is the code's own. ``KeyboardInterrupt`` is too,
    unless SIGINT still raises it (Python's own handler: a library caller's Ctrl-C); under
    the CLI's handler (``cli/signals.py``) a signal never raises it."""
    if isinstance(exc, SystemExit):
        return SuiteExit(exc)
    if isinstance(exc, KeyboardInterrupt):
        real = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        return None if real else SuiteExit(exc)
    return None
