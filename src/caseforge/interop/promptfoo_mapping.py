"""What mapping a promptfoo assertion reads and gives, shared by the modules of the table:
the :class:`Context` an assertion is read in, the :class:`Mapped` result, :class:`NotMapped`
(an assertion with no check, and why), and small writers: a check on the reply, a ``not-``
type's ``negate``, a value as promptfoo's ``String()`` writes it, a value shown short.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.errors import DatasetError

FIELD = "reply"  # promptfoo grades the provider's output: the agent's reply


@dataclass
class Context:
    """What mapping an assertion needs beyond it: the config's folder (``file://``), the
    test's vars and a renderer of ``{{var}}`` (raises ``Unrenderable``), and the suite files
    the checks use (scripts, schemas), collected by path across the import."""

    base: Path
    variables: Mapping[str, object]
    render: Callable[[str], str]
    files: dict[str, str] = field(default_factory=dict)
    judge: bool = False  # the suite configures a judge: `similar` becomes a judge check


@dataclass
class Mapped:
    """What one assertion became: the key it wants, the check (an ``ignore`` check when it
    is not mapped), the report's line for it, and, when not mapped, why (``reason``) and
    the reason's kind (for the counts). ``notes`` name where a mapped check still grades
    differently."""

    key: str
    check: dict[str, object]
    line: str
    reason: str = ""
    kind: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def mapped(self) -> bool:
        return not self.reason


class NotMapped(DatasetError):
    """Raised inside the table: the assertion has no check, for ``reason`` (of ``kind``)."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)  # caught inside the table: never the user's error
        self.kind, self.reason = kind, reason


def reply(check: dict[str, object]) -> dict[str, object]:
    """``check`` on the reply: ``mode`` first, then ``field``."""
    return {"mode": check.pop("mode"), "field": FIELD, **check}


def negated(check: dict[str, object], kind: str) -> dict[str, object]:
    if kind.startswith("not-"):
        check["negate"] = True
    return check


def as_text(value: object) -> str:
    """A value as promptfoo's ``String(value)`` writes it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def short(value: object, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return f"`{text if len(text) <= limit else text[: limit - 1] + '…'}`"
