"""Check results and the grader registry: one small grader per check mode."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Protocol, TypeVar


class CheckStatus(StrEnum):
    """The verdict of one check on one case-trial."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the check could not run (e.g. no outcome probe)
    SKIPPED = "skipped"  # `ignore`, written down on purpose
    NOT_JUDGED = "not_judged"  # a judge check with no judge: keeps the case-trial from passing
    CANNOT_JUDGE = "cannot_judge"  # paused for approval before replying: reply checks don't apply


@dataclass(slots=True)
class CheckResult:
    """One check's verdict with what was expected, what was found, and why."""

    name: str
    mode: str
    status: CheckStatus
    expected: Any = None
    actual: Any = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "mode": self.mode,
            "status": self.status.value,
            "expected": self.expected,
            "actual": self.actual,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckResult:
        return cls(
            name=data["name"],
            mode=data["mode"],
            status=CheckStatus(data["status"]),
            expected=data.get("expected"),
            actual=data.get("actual"),
            reason=data.get("reason", ""),
        )


class Verdict(tuple[CheckStatus, str]):
    """``(status, reason)`` returned by a grader."""

    __slots__ = ()

    def __new__(cls, status: CheckStatus, reason: str = "") -> Verdict:
        return super().__new__(cls, (status, reason))


def passed(reason: str = "") -> Verdict:
    return Verdict(CheckStatus.PASS, reason)


def failed(reason: str) -> Verdict:
    return Verdict(CheckStatus.FAIL, reason)


class Grader(Protocol):
    """Grades one check mode: ``grade(check, actual) -> Verdict``."""

    mode: ClassVar[str]

    def grade(self, check: Any, actual: Any) -> Verdict: ...


G = TypeVar("G", bound=type)
GRADERS: dict[str, Grader] = {}


def grader(mode: str) -> Callable[[G], G]:
    """Register a grader class for ``mode`` (one instance serves every check)."""

    def register(cls: G) -> G:
        cls.mode = mode  # type: ignore[attr-defined]
        GRADERS[mode] = cls()
        return cls

    return register


def show(value: Any, limit: int = 80) -> str:
    """A short one-line rendering of a value for a reason."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
