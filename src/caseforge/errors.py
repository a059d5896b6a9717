"""Problems found in user files, each pinned to ``path:line:col`` and a field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

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

    def to_json(self) -> dict[str, Any]:
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

    Every caseforge exception derives from it. Each subclass carries the exit code the
    README's table gives it; ``caseforge.cli.main`` is the one place that turns an error
    into that code. A plain ``CaseforgeError`` is an invalid dataset or config (1)."""

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


def first_validation_error(exc: ValidationError) -> str:
    """``where.it.is: what is wrong (and N more)`` for the first error pydantic found."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"
