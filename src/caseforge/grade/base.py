"""The grader registry: one small grader per check mode, and the verdicts they return."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar, Protocol, TypeVar

from caseforge.results import CheckStatus


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
