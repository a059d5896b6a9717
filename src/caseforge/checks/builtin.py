"""The built-in check modes (DESIGN §3), each one class: its fields, its declarations and its
``grade`` method. The ``must_include``/``must_not_include`` shorthand (expanded into two checks)
sits beside them; ``tool_calls`` has its own module, ``checks.tools``."""

from __future__ import annotations

import json
import math
import re
from typing import ClassVar, Literal, SupportsFloat, SupportsIndex

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from caseforge.checks.base import (
    BaseCheck,
    OptionOrder,
    Reads,
    Verdict,
    failed,
    passed,
    show,
)
from caseforge.checks.matching import compiled, contains, outcome_matches
from caseforge.checks.text import TextOptions, normalize_text, word_pattern
from caseforge.values import item_key, same

# How each text option loosens a check that requires text (must_include, exact, regex);
# one that forbids text (must_not_include) loosens the other way.
TEXT_LOOSENING = {
    "case_sensitive": OptionOrder("false", kind="case-insensitive"),
    "normalize": OptionOrder("true", kind="text-normalized"),
    "word": OptionOrder("false", kind="word-boundary-dropped"),
}
FORBIDDING_TEXT_LOOSENING = {
    "case_sensitive": OptionOrder("true", kind="case-sensitive"),
    "normalize": OptionOrder("false", kind="text-normalization-dropped"),
    "word": OptionOrder("true", kind="word-boundary-added"),
}


class ExactCheck(BaseCheck, TextOptions):
    """The field equals ``value`` (two texts under ``case_sensitive`` and ``normalize``)."""

    strength: ClassVar[int] = 70
    pins: ClassVar[bool] = True
    options: ClassVar[dict[str, OptionOrder]] = {
        k: v for k, v in TEXT_LOOSENING.items() if k != "word"
    }

    mode: Literal["exact"]
    value: object

    @model_validator(mode="after")
    def _no_word(self) -> ExactCheck:
        if self.word:
            raise ValueError("`word` applies to must_include, must_not_include and regex")
        return self

    def grade(self, actual: object) -> Verdict:
        if isinstance(self.value, str) and isinstance(actual, str) and not self.literal:
            if self.prepared(self.value) == self.prepared(actual):
                return passed()
        elif same(self.value, actual):
            return passed()
        return failed(f"expected {show(self.value)}, got {show(actual)}")

    def render(self) -> str:
        return f"exact {show(self.value)}{self.options_text()}"


class ExactSetCheck(BaseCheck):
    """The field, as a set, equals ``values`` (the set, not the count)."""

    expected_field: ClassVar[str | None] = "values"
    strength: ClassVar[int] = 70
    items_field: ClassVar[str | None] = "values"
    feeds_items: ClassVar[bool] = True
    pins: ClassVar[bool] = True

    mode: Literal["exact_set"]
    values: list[object]

    def grade(self, actual: object) -> Verdict:
        if not isinstance(actual, list | tuple | set):
            return failed(f"expected a list, got {show(actual)}")
        want = {item_key(v): v for v in self.values}
        got = {item_key(v): v for v in actual}
        if want.keys() == got.keys():
            return passed()

        def listed(items: dict[str, object], keys: set[str]) -> str:
            return ", ".join(
                v if isinstance(v, str) else show(v) for v in (items[k] for k in sorted(keys))
            )

        parts = []
        if want.keys() - got.keys():
            parts.append(f"missing {listed(want, want.keys() - got.keys())}")
        if got.keys() - want.keys():
            parts.append(f"unexpected {listed(got, got.keys() - want.keys())}")
        return failed("; ".join(parts))


class MustIncludeCheck(BaseCheck, TextOptions):
    """Every value is in the field (substring of a string, member of a list)."""

    expected_field: ClassVar[str | None] = "values"
    strength: ClassVar[int] = 40
    items_field: ClassVar[str | None] = "values"
    options: ClassVar[dict[str, OptionOrder]] = TEXT_LOOSENING

    mode: Literal["must_include"]
    values: list[object] = Field(min_length=1)

    def grade(self, actual: object) -> Verdict:
        if actual is None:
            return failed("the field is empty")
        missing = [v for v in self.values if not contains(actual, v, self)]
        if missing:
            return failed(f"does not include {show(missing)}{self.options_text()}")
        return passed()

    def render(self) -> str:
        return f"must_include {show(self.values)}{self.options_text()}"


class MustNotIncludeCheck(BaseCheck, TextOptions):
    """No value is in the field."""

    expected_field: ClassVar[str | None] = "values"
    strength: ClassVar[int] = 30  # it only forbids: below must_include
    items_field: ClassVar[str | None] = "values"
    items_kind: ClassVar[str] = "must-not-include-dropped"
    guard: ClassVar[bool] = True
    options: ClassVar[dict[str, OptionOrder]] = FORBIDDING_TEXT_LOOSENING

    mode: Literal["must_not_include"]
    values: list[object] = Field(min_length=1)

    def grade(self, actual: object) -> Verdict:
        if actual is None:
            return passed()
        found = [v for v in self.values if contains(actual, v, self)]
        if found:
            return failed(f"includes {show(found)}{self.options_text()}")
        return passed()

    def render(self) -> str:
        return f"must_not_include {show(self.values)}{self.options_text()}"


class RegexCheck(BaseCheck, TextOptions):
    """The field (as text) matches the regular expression ``value``."""

    strength: ClassVar[int] = 50
    options: ClassVar[dict[str, OptionOrder]] = TEXT_LOOSENING

    mode: Literal["regex"]
    value: str

    @field_validator("value")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    def grade(self, actual: object) -> Verdict:
        if actual is None:
            return failed("the field is empty")
        text = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
        if self.normalize:
            text = normalize_text(text)
        pattern = word_pattern(self.value) if self.word else self.value
        flags = 0 if self.case_sensitive else re.IGNORECASE
        if compiled(pattern, flags).search(text):
            return passed()
        return failed(f"{show(text)} does not match /{self.value}/{self.options_text()}")

    def render(self) -> str:
        return f"regex {show(self.value)}{self.options_text()}"


class NumberCheck(BaseCheck):
    """The field is a number within ``tolerance`` of ``value``."""

    strength: ClassVar[int] = 60
    options: ClassVar[dict[str, OptionOrder]] = {
        "tolerance": OptionOrder("higher", kind="tolerance-widened")
    }

    mode: Literal["number"]
    value: float = Field(strict=True, description="A number (a string is not coerced).")
    tolerance: float = Field(default=0.0, ge=0.0, strict=True, description="0: exactly.")

    def grade(self, actual: object) -> Verdict:
        if not isinstance(actual, str | bytes | bytearray | SupportsFloat | SupportsIndex):
            return failed(f"not a number: {show(actual)}")
        try:
            number = float(actual)
        except (TypeError, ValueError):
            return failed(f"not a number: {show(actual)}")
        if isinstance(actual, bool) or math.isnan(number):
            return failed(f"not a number: {show(actual)}")
        diff = abs(number - self.value)
        if diff <= self.tolerance + 1e-12:
            return passed()
        return failed(f"{number:g} is {diff:g} from {self.value:g} (tolerance {self.tolerance:g})")

    def render(self) -> str:
        return f"number {self.value:g} ± {self.tolerance:g}"


class OutcomeCheck(BaseCheck):
    """What the run left in its workspace (read by the suite's probe) equals ``value``.

    ``value: null`` means the run must leave no outcome (e.g. no refund request).
    """

    strength: ClassVar[int] = 70
    reads: ClassVar[Reads] = Reads.WORKSPACE

    mode: Literal["outcome"]
    value: object = Field(description="Required; null means no outcome is expected.")

    @model_validator(mode="before")
    @classmethod
    def _value_present(cls, data: object) -> object:
        if isinstance(data, dict) and "value" not in data:
            raise ValueError("an outcome check needs `value` (write `value: null` for none)")
        return data

    def grade(self, actual: object) -> Verdict:
        if outcome_matches(self.value, actual):
            return passed()
        return failed(f"the run left {show(actual)}, expected {show(self.value)}")


class JudgeCheck(BaseCheck):
    """Facts (``values``) or a ``rubric`` for the LLM judge."""

    expected_field: ClassVar[str | None] = "values"
    strength: ClassVar[int] = 20
    reads: ClassVar[Reads] = Reads.JUDGE
    items_field: ClassVar[str | None] = "values"

    mode: Literal["judge"]
    values: list[str] | None = None
    rubric: str | None = None

    @property
    def expected(self) -> list[str] | str | None:
        return self.values if self.values else self.rubric

    @model_validator(mode="after")
    def _facts_or_rubric(self) -> JudgeCheck:
        if not self.values and not self.rubric:
            raise ValueError("a judge check needs `values` (facts) or a `rubric`")
        return self


class IgnoreCheck(BaseCheck):
    """An ungradable cell, written down with the reason it is not graded."""

    expected_field: ClassVar[str | None] = None
    strength: ClassVar[int] = 10
    reads: ClassVar[Reads] = Reads.NOTHING

    mode: Literal["ignore"]
    reason: str = Field(min_length=1)

    def render(self) -> str:
        return f"ignore ({self.reason})"


BUILTIN_CHECKS: tuple[type[BaseCheck], ...] = (
    ExactCheck,
    ExactSetCheck,
    MustIncludeCheck,
    MustNotIncludeCheck,
    RegexCheck,
    NumberCheck,
    OutcomeCheck,
    JudgeCheck,
    IgnoreCheck,
)


class IncludeShorthand(TextOptions):
    """``{must_include: [...], must_not_include: [...]}``: two checks on one field, both
    with the text options given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    must_include: list[object] = Field(default_factory=list)
    must_not_include: list[object] = Field(default_factory=list)
    field: str | None = None

    @property
    def mode(self) -> str:
        return "must_include+must_not_include"

    def render(self) -> str:
        included, excluded = show(self.must_include), show(self.must_not_include)
        return f"must_include {included}; must_not_include {excluded}{self.options_text()}"

    @property
    def text_options(self) -> dict[str, bool]:
        return {
            "case_sensitive": self.case_sensitive,
            "normalize": self.normalize,
            "word": self.word,
        }


TOOL_CALLS_STRENGTH = 70


class UndeclaredCheck(BaseModel):
    """A stored or historical check whose mode no declaration knows (read, never graded)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    mode: str

    @property
    def data(self) -> dict[str, object]:
        return self.model_dump()

    def render(self) -> str:
        return f"{self.mode} (no declaration of this mode)"
