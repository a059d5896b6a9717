"""What every check mode is: a small pydantic model of the expectation, a ``grade`` method,
and a few class-level declarations the grader, the metrics and the criteria audit read.

A mode declares:

``strength``
    its place in the audit's order, strictest highest (``exact`` is 70, ``ignore`` 10); a
    change to a mode with a lower number is a loosening.
``reads``
    what it grades: the output ``field`` (the default), the run's ``workspace`` (what the
    suite's outcome probe read), the LLM ``judge``, or ``nothing`` (``ignore``).
``items_field`` / ``items_kind``
    the field holding expected items (``values``), if any: dropping one is a loosening of
    that kind. ``feeds_items`` says whether those items count in the item-level
    precision/recall.
``options``
    per-option strength: for each option, which direction loosens it (``tolerance`` growing
    on ``number``).
``alternatives_field``
    the field of other right values (``any_of``), if any: one added is a loosening.

On the reserved field ``replies`` (every agent reply of a conversation, in order) a check is
graded reply by reply in ``grade_replies``: one that requires something passes when any
reply passes it, one that ``forbids`` something (``must_not_include``, ``negate: true``)
when every reply does; ``must_include`` looks for each value in any reply. A mode that
compares a whole list (``exact_set``) sets ``per_reply = False`` and may not read it.

A mode that reads more of the case-trial than the graded value (the case's input for a
script's ``context``, the agent's cost and latency) sets ``uses_trial`` and grades in
``grade_in(actual, trial)``, handed a :class:`TrialFacts`; a mode that reads only what the
run measured (``reads = Reads.TRIAL``) says what in ``measured(trial)`` (and, with
``kept(actual)``, what its result keeps of it when that is large: ``spans``). A mode naming a
file of its suite (a schema, a script) reads it in ``bind(suite_dir)`` when its suite
loads, and a mode needing an optional package says so in ``require_environment()``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from caseforge.errors import DatasetError
from caseforge.results import CheckStatus

if TYPE_CHECKING:
    from caseforge.tracing.spans import SpanData


class Verdict(tuple[CheckStatus, str]):
    """``(status, reason)`` returned by a grader."""

    __slots__ = ()

    def __new__(cls, status: CheckStatus, reason: str = "") -> Verdict:
        return super().__new__(cls, (status, reason))

    @property
    def status(self) -> CheckStatus:
        return self[0]

    @property
    def reason(self) -> str:
        return self[1]


def passed(reason: str = "") -> Verdict:
    """The check holds.

    Args:
        reason: Why, if worth saying (most passes say nothing).

    Returns:
        The verdict a check mode's ``grade`` returns."""
    return _PASSED if not reason else Verdict(CheckStatus.PASS, reason)


_PASSED = Verdict(CheckStatus.PASS, "")  # one for every reasonless pass: most checks pass


def failed(reason: str) -> Verdict:
    """The check does not hold.

    Args:
        reason: How it does not, in one line (reports and ``caseforge show`` print it).

    Returns:
        The verdict a check mode's ``grade`` returns."""
    return Verdict(CheckStatus.FAIL, reason)


def show(value: object, limit: int = 80) -> str:
    """A short one-line rendering of a value for a reason."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Reads(StrEnum):
    """What a check mode grades."""

    FIELD = "field"  # a field of the agent's output (or the reply, or the tool calls)
    WORKSPACE = "workspace"  # what the suite's outcome probe read from the trial's workspace
    JUDGE = "judge"  # the LLM judge, on the reply or a field
    NOTHING = "nothing"  # not graded (``ignore``)
    TRIAL = "trial"  # what the run measured of the case-trial: its cost, its latency


Looser = Literal["higher", "lower", "true", "false", "dropped", "later"]


@dataclass(frozen=True)
class OptionOrder:
    """How one option of a mode loosens: a ``higher`` (``lower``) number, turning it
    ``true`` (``false``), ``dropped`` (set, then null), or a ``later`` value of ``ranks``
    (strictest first: ``match`` from ``all`` to ``any``). ``kind`` names the loosening in
    the audit."""

    looser: Looser
    kind: str = "option-loosened"
    ranks: tuple[object, ...] = ()

    def loosens(self, before: object, after: object) -> bool:
        if self.looser in ("higher", "lower"):
            if not isinstance(before, int | float) or not isinstance(after, int | float):
                return False
            return after > before if self.looser == "higher" else after < before
        if self.looser == "dropped":
            return before is not None and after is None
        if self.looser == "later":
            if before not in self.ranks or after not in self.ranks:
                return False
            return self.ranks.index(after) > self.ranks.index(before)
        wanted = self.looser == "true"
        return before is not wanted and after is wanted


@dataclass(frozen=True, slots=True)
class TrialFacts:
    """What a check may read of a case-trial beyond the graded value: the case (its id,
    input and description) and what the run measured. ``cost_usd`` is ``None`` when the
    agent reported no usage (no cost, no tokens); ``latency_s`` when it was not recorded;
    ``spans`` are the agent's OpenTelemetry spans kept with the case-trial."""

    case_id: str
    input: Mapping[str, object]
    description: str | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    spans: Sequence[SpanData] | None = None  # the agent's spans; None or empty: none came
    spans_missing: str | None = None  # why none came, when the run knows

    @property
    def prompt(self) -> str | None:
        """The case input's ``prompt``, when it is text (an imported promptfoo prompt)."""
        prompt = self.input.get("prompt")
        return prompt if isinstance(prompt, str) else None


REASONS_SHOWN = 5  # a failed check on ``replies`` gives the reasons of this many replies


def replies_count(replies: Sequence[object]) -> str:
    """``1 reply``, ``3 replies``: how many a reason on ``replies`` looked at."""
    return f"{len(replies)} repl{'y' if len(replies) == 1 else 'ies'}"


class SuiteFileError(DatasetError):
    """A file a check names (``field``: the check's field holding its path) is missing or
    not what the check reads; raised by ``bind`` and reported against the case."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


def suite_path(suite_dir: Path, relative: str, field: str) -> Path:
    """``relative`` under the suite folder: it must stay inside it, and be there."""
    if Path(relative).is_absolute():
        raise SuiteFileError(field, f"{relative}: give a path relative to the suite folder")
    root = suite_dir.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise SuiteFileError(field, f"{relative}: the file must be inside the suite folder")
    if not path.is_file():
        raise SuiteFileError(field, f"{relative}: file not found in the suite folder ({root})")
    return path


class BaseCheck(BaseModel):
    """Fields every check mode shares, and the declarations each mode makes."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    mode: str  # each mode narrows it to ``Literal["its-name"]``
    field: str | None = Field(
        default=None, description="Dotted path of the output field to grade; defaults to the key."
    )
    oracle: str | None = Field(
        default=None, description="Name of the suite oracle that computed this expectation."
    )
    args: dict[str, object] = Field(
        default_factory=dict, description="Keyword arguments handed to the oracle."
    )
    turn: int | None = Field(
        default=None,
        ge=1,
        description="In a conversation: grade this agent turn (1 is the first), not the last.",
    )

    # Which field holds the expectation: "value", "values" or none (ignore).
    expected_field: ClassVar[str | None] = "value"
    strength: ClassVar[int] = 50
    reads: ClassVar[Reads] = Reads.FIELD
    items_field: ClassVar[str | None] = None
    items_kind: ClassVar[str] = "values-removed"
    feeds_items: ClassVar[bool] = False
    # Still binds when the rest of a check is replaced by a stronger mode (must_not_include).
    guard: ClassVar[bool] = False
    # Pins the field outright, so a guard it replaces is not lost (exact, exact_set).
    pins: ClassVar[bool] = False
    options: ClassVar[dict[str, OptionOrder]] = {}
    # The field listing other right values (``any_of``): adding one loosens the check.
    alternatives_field: ClassVar[str | None] = None
    # Grades with the case-trial's facts too: the grader calls ``grade_in``.
    uses_trial: ClassVar[bool] = False
    # May read ``replies`` one reply at a time (a mode comparing a whole list may not).
    per_reply: ClassVar[bool] = True

    @property
    def expected(self) -> object:
        """The expectation the oracle is compared with (``value`` or ``values``)."""
        return getattr(self, self.expected_field, None) if self.expected_field else None

    @property
    def items(self) -> list[object] | None:
        """The expected items (``items_field``), or ``None`` for a mode without items."""
        if self.items_field is None:
            return None
        value = getattr(self, self.items_field)
        return list(value) if isinstance(value, list | tuple) else None

    def __eq__(self, other: object) -> bool:
        # What a check read of its suite's files (its private attributes) is not what the
        # check is: two checks with the same fields are the same check.
        if not isinstance(other, BaseModel):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = BaseModel.__hash__

    def grade(self, actual: object) -> Verdict:
        """Grade the value read for this check (see ``reads``)."""
        raise NotImplementedError(f"check mode {self.mode!r} has no grade method")

    def grade_in(self, actual: object, trial: TrialFacts) -> Verdict:
        """Grade with the case-trial's facts (for a mode with ``uses_trial``)."""
        return self.grade(actual)

    @property
    def forbids(self) -> bool:
        """Whether this check only forbids something (``must_not_include``, ``negate:
        true``): on ``replies`` it then holds when every reply passes it, not just one."""
        return False

    def grade_replies(self, replies: Sequence[str], trial: TrialFacts | None = None) -> Verdict:
        """Grade every agent reply of a conversation (the reserved field ``replies``), one
        at a time: a check that requires something passes when any reply passes it, one
        that :attr:`forbids` something when every reply does. The reason names the reply
        (``reply 2``: the second agent turn). ``trial`` is handed to ``grade_in``."""

        def one(reply: str) -> Verdict:
            if trial is not None and self.uses_trial:
                return self.grade_in(reply, trial)
            return self.grade(reply)

        failures: list[str] = []
        for number, reply in enumerate(replies, start=1):
            verdict = one(reply)
            if not isinstance(verdict, tuple) or len(verdict) != 2:
                return verdict  # not a Verdict: the grader reports it as this mode's error
            status = CheckStatus(verdict[0])
            why = f"reply {number}: {verdict[1]}" if verdict[1] else f"reply {number}"
            if status is CheckStatus.FAIL:
                if self.forbids:
                    return failed(why)
                failures.append(why)
            elif status is not CheckStatus.PASS:
                return Verdict(status, why)  # undecided (an error): so is the check
            elif not self.forbids:
                return passed(why)
        if self.forbids:
            return passed()
        if not replies:
            return failed("no agent reply")
        shown = failures[:REASONS_SHOWN]
        more = len(failures) - len(shown)
        rest = f"; and {more} more" if more else ""
        return failed(f"no reply passes ({replies_count(replies)}): {'; '.join(shown)}{rest}")

    def measured(self, trial: TrialFacts) -> object:
        """What a ``Reads.TRIAL`` mode grades, read from the case-trial's facts."""
        return None

    def kept(self, actual: object) -> object:
        """What the check's result keeps of the value it graded (``actual``): the value
        itself, unless a mode keeps less of a large one (``spans``: a summary)."""
        return actual

    def bind(self, suite_dir: Path) -> None:
        """Read the files of the suite this check names (a schema, a script), once, when its
        suite loads. Raises :class:`SuiteFileError` naming the field and the problem."""

    @classmethod
    def require_environment(cls) -> None:
        """Raise ``EnvError`` when this machine lacks what grading this mode needs (an
        optional package); a run asks before it starts."""

    def render(self) -> str:
        """The check for people, in one line (``exact "refund"``): the reports show it
        beside each verdict. A mode may say it better by overriding this."""
        expected = self.expected
        return self.mode if expected is None else f"{self.mode} {show(expected)}"
