"""The built-in check modes (docs/reference/modes.md), each one class: its fields, its
declarations and its ``grade`` method. The ``must_include``/``must_not_include`` shorthand
(expanded into two checks) sits beside them; ``tool_calls`` has its own module,
``checks.tools``, and so do ``json`` (``checks.json_mode``), ``cost`` and ``latency``
(``checks.measures``), ``javascript`` and ``python`` (``checks.scripts``)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import cached_property
from typing import ClassVar, Literal, SupportsFloat, SupportsIndex

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from caseforge.checks.base import (
    BaseCheck,
    OptionOrder,
    Reads,
    TrialFacts,
    Verdict,
    failed,
    passed,
    replies_count,
    show,
)
from caseforge.checks.json_mode import JsonCheck
from caseforge.checks.matching import compiled, contains, outcome_matches
from caseforge.checks.measures import CostCheck, LatencyCheck
from caseforge.checks.scripts import JavascriptCheck, PythonCheck
from caseforge.checks.text import TextOptions, normalize_text, word_pattern
from caseforge.values import differences, item_key, same

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


# Turning ``negate`` on makes a check that required a value one that only forbids it.
NEGATE_LOOSENING = OptionOrder("true", kind="negated")


class ExactCheck(BaseCheck, TextOptions):
    """The field equals ``value`` or one of ``any_of`` (two texts under ``case_sensitive``
    and ``normalize``; with ``strict_types``, 1, 1.0 and "1" differ and floats are exact).
    With ``negate``, it must equal none of them."""

    strength: ClassVar[int] = 70
    pins: ClassVar[bool] = True
    alternatives_field: ClassVar[str | None] = "any_of"
    options: ClassVar[dict[str, OptionOrder]] = {
        **{k: v for k, v in TEXT_LOOSENING.items() if k != "word"},
        "strict_types": OptionOrder("false", kind="strict-types-dropped"),
        "negate": NEGATE_LOOSENING,
    }

    mode: Literal["exact"]
    value: object
    any_of: list[object] = Field(
        default_factory=list, description="Other values that are right too."
    )
    strict_types: bool = Field(False, description='1 ≠ 1.0 ≠ "1", and floats compare exactly.')
    negate: bool = Field(
        False, description="true: the field must equal neither `value` nor any of `any_of`."
    )

    @model_validator(mode="after")
    def _no_word(self) -> ExactCheck:
        if self.word:
            raise ValueError("`word` applies to must_include, must_not_include and regex")
        return self

    def _equal(self, expected: object, actual: object) -> bool:
        if isinstance(expected, str) and isinstance(actual, str) and not self.literal:
            return self.prepared(expected) == self.prepared(actual)
        return same(expected, actual, self.strict_types)

    @cached_property
    def _plain(self) -> bool:
        return self.literal and not self.strict_types and not self.any_of and not self.negate

    def grade(self, actual: object) -> Verdict:
        if self._plain:  # the common case, on every case-trial: one comparison
            if same(self.value, actual):
                return passed()
        elif self.negate:
            equal = next((v for v in (self.value, *self.any_of) if self._equal(v, actual)), _NONE)
            if equal is _NONE:
                return passed()
            which = "" if equal is self.value else " (one of any_of)"
            return failed(f"equals {whole(equal)}{which} but must not{self.options_text()}")
        elif any(self._equal(v, actual) for v in (self.value, *self.any_of)):
            return passed()
        return failed(_mismatch(self.value, self.any_of, actual))

    @property
    def forbids(self) -> bool:
        return self.negate

    def render(self) -> str:
        extra = f" (or any of {show(self.any_of)})" if self.any_of else ""
        strict = " (strict types)" if self.strict_types else ""
        negated = "not " if self.negate else ""
        return f"exact {negated}{show(self.value)}{extra}{self.options_text()}{strict}"


_NONE = object()  # no value matched


def _mismatch(value: object, any_of: list[object], actual: object) -> str:
    """Why ``actual`` is not ``value`` (nor an alternative): path by path for structures."""
    others = f" (or any of {whole(any_of)})" if any_of else ""
    paths = differences(value, actual) if isinstance(value, dict | list) else []
    if paths and isinstance(actual, dict | list):
        return f"{'; '.join(paths)}{others}"
    return f"expected {whole(value)}{others}, got {whole(actual)}"


def whole(value: object) -> str:
    """A value in a reason, uncut: reports shorten what they display, the result keeps it."""
    return json.dumps(value, ensure_ascii=False, default=str)


class ExactSetCheck(BaseCheck):
    """The field, as a set, equals ``values`` (the set, not the count); with ``duplicates:
    keep``, as a multiset: each item as many times as ``values`` holds it."""

    expected_field: ClassVar[str | None] = "values"
    strength: ClassVar[int] = 70
    items_field: ClassVar[str | None] = "values"
    feeds_items: ClassVar[bool] = True
    pins: ClassVar[bool] = True
    per_reply: ClassVar[bool] = False  # it compares a whole list, not one reply
    options: ClassVar[dict[str, OptionOrder]] = {
        "duplicates": OptionOrder("later", kind="duplicates-ignored", ranks=("keep", "ignore"))
    }

    mode: Literal["exact_set"]
    values: list[object]
    duplicates: Literal["ignore", "keep"] = Field(
        "ignore",
        description="`ignore`: a set, `[a, a]` is `[a]`; `keep`: a multiset, the field holds "
        "each item as many times as `values` does.",
    )

    def grade(self, actual: object) -> Verdict:
        if not isinstance(actual, list | tuple | set):
            return failed(f"expected a list, got {show(actual)}")
        if self.duplicates == "keep":
            return self._grade_counted(actual)
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

    def _grade_counted(self, actual: list[object] | tuple[object, ...] | set[object]) -> Verdict:
        items = {item_key(v): v for v in (*self.values, *actual)}
        want, got = Counter(map(item_key, self.values)), Counter(map(item_key, actual))
        if want == got:
            return passed()
        parts = []
        missing = sorted(want.keys() - got.keys())
        if missing:
            parts.append(f"missing {', '.join(_counted(items[k], want[k]) for k in missing)}")
        unexpected = sorted(got.keys() - want.keys())
        if unexpected:
            parts.append(f"unexpected {', '.join(_counted(items[k], got[k]) for k in unexpected)}")
        parts += [
            f"{_item_text(items[k])} {got[k]}× (expected {want[k]}×)"
            for k in sorted(want.keys() & got.keys())
            if want[k] != got[k]
        ]
        return failed("; ".join(parts))

    def repeated(self) -> list[object]:
        """The items ``values`` holds more than once (each once, in order)."""
        counts = Counter(map(item_key, self.values))
        seen: set[str] = set()
        found = []
        for value in self.values:
            key = item_key(value)
            if counts[key] > 1 and key not in seen:
                seen.add(key)
                found.append(value)
        return found

    def render(self) -> str:
        counted = " (duplicates kept)" if self.duplicates == "keep" else ""
        return f"exact_set {show(self.values)}{counted}"


def _item_text(value: object) -> str:
    """An item in a reason: text as it is, unless it would read as another value (``"1"``)."""
    if not isinstance(value, str):
        return show(value)
    try:
        json.loads(value)
    except ValueError:
        return value
    return show(value)


def _counted(value: object, times: int) -> str:
    return _item_text(value) + (f" ×{times}" if times > 1 else "")


class MustIncludeCheck(BaseCheck, TextOptions):
    """Every value is in the field (substring of a string, member of a list); with
    ``match: any``, at least one of them is."""

    expected_field: ClassVar[str | None] = "values"
    strength: ClassVar[int] = 40
    items_field: ClassVar[str | None] = "values"
    options: ClassVar[dict[str, OptionOrder]] = {
        **TEXT_LOOSENING,
        "match": OptionOrder("later", kind="match-any", ranks=("all", "any")),
    }

    mode: Literal["must_include"]
    values: list[object] = Field(min_length=1)
    match: Literal["all", "any"] = Field(
        "all", description="`all`: every value must be in the field; `any`: at least one."
    )

    def grade(self, actual: object) -> Verdict:
        if actual is None:
            return failed("the field is empty")
        if self.match == "any":
            found = [v for v in self.values if contains(actual, v, self)]
            if found:
                return passed(f"includes {show(found)}{self.options_text()}")
            return failed(f"includes none of {show(self.values)}{self.options_text()}")
        missing = [v for v in self.values if not contains(actual, v, self)]
        if missing:
            return failed(f"does not include {show(missing)}{self.options_text()}")
        return passed()

    def grade_replies(self, replies: Sequence[str], trial: TrialFacts | None = None) -> Verdict:
        """Each value in any reply (not necessarily the same one); with ``match: any``, one
        value in one reply. The reason says which reply held each value."""
        found: list[tuple[object, int]] = []  # (value, the first reply holding it)
        missing: list[object] = []
        for value in self.values:
            number = next(
                (n for n, reply in enumerate(replies, start=1) if contains(reply, value, self)),
                None,
            )
            if number is None:
                missing.append(value)
            else:
                found.append((value, number))
                if self.match == "any":
                    break
        where = ", ".join(f"{show(value)} in reply {number}" for value, number in found)
        count = f" ({replies_count(replies)}){self.options_text()}"
        if self.match == "any":
            if found:
                return passed(where)
            return failed(f"no reply includes any of {show(self.values)}{count}")
        if missing:
            return failed(f"no reply includes {show(missing)}{count}")
        return passed(where)

    def render(self) -> str:
        which = " (any of them)" if self.match == "any" else ""
        return f"must_include {show(self.values)}{which}{self.options_text()}"


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

    @property
    def forbids(self) -> bool:
        return True

    def render(self) -> str:
        return f"must_not_include {show(self.values)}{self.options_text()}"


class RegexCheck(BaseCheck, TextOptions):
    """The field (as text) matches the regular expression ``value``; with ``negate``, it
    does not."""

    strength: ClassVar[int] = 50
    options: ClassVar[dict[str, OptionOrder]] = {**TEXT_LOOSENING, "negate": NEGATE_LOOSENING}

    mode: Literal["regex"]
    value: str
    negate: bool = Field(False, description="true: the field must not match.")

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
            return passed() if self.negate else failed("the field is empty")
        text = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
        if self.normalize:
            text = normalize_text(text)
        pattern = word_pattern(self.value) if self.word else self.value
        flags = 0 if self.case_sensitive else re.IGNORECASE
        found = compiled(pattern, flags).search(text)
        if self.negate:
            if found is None:
                return passed()
            return failed(
                f"{show(text)} matches /{self.value}/ ({show(found.group(0))}) but must not"
                f"{self.options_text()}"
            )
        if found:
            return passed()
        return failed(f"{show(text)} does not match /{self.value}/{self.options_text()}")

    @property
    def forbids(self) -> bool:
        return self.negate

    def render(self) -> str:
        negated = "not " if self.negate else ""
        return f"regex {negated}{show(self.value)}{self.options_text()}"


class NumberCheck(BaseCheck):
    """The field is a number within ``tolerance`` of ``value``."""

    strength: ClassVar[int] = 60
    options: ClassVar[dict[str, OptionOrder]] = {
        "tolerance": OptionOrder("higher", kind="tolerance-widened")
    }

    alternatives_field: ClassVar[str | None] = "any_of"

    mode: Literal["number"]
    value: float = Field(strict=True, description="A number (a string is not coerced).")
    tolerance: float = Field(default=0.0, ge=0.0, strict=True, description="0: exactly.")
    any_of: list[float] = Field(default_factory=list, description="Other right numbers.")

    def grade(self, actual: object) -> Verdict:
        if not isinstance(actual, str | bytes | bytearray | SupportsFloat | SupportsIndex):
            return failed(f"not a number: {show(actual)}")
        try:
            number = float(actual)
        except (TypeError, ValueError):
            return failed(f"not a number: {show(actual)}")
        if isinstance(actual, bool) or (isinstance(actual, str) and not math.isfinite(number)):
            return failed(f"not a number: {show(actual)}")
        if not math.isfinite(number):  # NaN or ±Infinity: right only where it is expected
            if any(_same_non_finite(number, v) for v in (self.value, *self.any_of)):
                return passed()
            return failed(
                f"{_non_finite_name(number)} is not a finite number; expected {self.value:g}"
                f" ± {self.tolerance:g}"
            )
        if any(abs(number - v) <= self.tolerance + 1e-12 for v in self.any_of):
            return passed()
        diff = abs(number - self.value)
        if diff <= self.tolerance + 1e-12:
            return passed()
        others = f" (nor any of {show(self.any_of)})" if self.any_of else ""
        return failed(
            f"{number:g} is {diff:g} from {self.value:g} (tolerance {self.tolerance:g}){others}"
        )

    def render(self) -> str:
        extra = f" (or any of {show(self.any_of)})" if self.any_of else ""
        return f"number {self.value:g} ± {self.tolerance:g}{extra}"


def _same_non_finite(number: float, wanted: float) -> bool:
    return (math.isnan(number) and math.isnan(wanted)) or number == wanted


def _non_finite_name(number: float) -> str:
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")


class OutcomeCheck(BaseCheck):
    """What the run left in its workspace (read by the suite's probe) equals ``value`` or
    one of ``any_of``.

    ``value: null`` means the run must leave no outcome (e.g. no refund request).
    """

    strength: ClassVar[int] = 70
    reads: ClassVar[Reads] = Reads.WORKSPACE
    alternatives_field: ClassVar[str | None] = "any_of"

    mode: Literal["outcome"]
    value: object = Field(description="Required; null means no outcome is expected.")
    any_of: list[object] = Field(
        default_factory=list, description="Other outcomes that are right too."
    )

    @model_validator(mode="before")
    @classmethod
    def _value_present(cls, data: object) -> object:
        if isinstance(data, dict) and "value" not in data:
            raise ValueError("an outcome check needs `value` (write `value: null` for none)")
        if isinstance(data, dict):
            for value in (data.get("value"), *(data.get("any_of") or [])):
                old = _old_alternatives(value)
                if old:
                    raise ValueError(
                        f"`{old}` in an outcome value no longer lists alternatives: write "
                        "each right outcome whole, the first as `value` and the others under "
                        "`any_of: [...]` beside it (an oracle returns AnyOf(value, [others])); "
                        "`caseforge validate SUITE --fix` rewrites the case files"
                    )
        return data

    def grade(self, actual: object) -> Verdict:
        if any(outcome_matches(v, actual) for v in (self.value, *self.any_of)):
            return passed()
        if isinstance(self.value, dict) and isinstance(actual, dict):
            return failed(f"the run left: {_mismatch(self.value, self.any_of, actual)}")
        others = f" (or any of {whole(self.any_of)})" if self.any_of else ""
        return failed(f"the run left {whole(actual)}, expected {whole(self.value)}{others}")

    def render(self) -> str:
        extra = f" (or any of {show(self.any_of)})" if self.any_of else ""
        return f"outcome {show(self.value)}{extra}"


def _old_alternatives(value: object) -> str | None:
    """The ``alt_<key>s`` key of the retired convention, if ``value`` has one."""
    if isinstance(value, dict):
        for key, inner in value.items():
            old = isinstance(key, str) and key.startswith("alt_") and key.endswith("s")
            if old and isinstance(inner, list):
                return str(key)
    return None


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
    JsonCheck,
    CostCheck,
    LatencyCheck,
    JavascriptCheck,
    PythonCheck,
    JudgeCheck,
    IgnoreCheck,
)


class IncludeShorthand(TextOptions):
    """``{must_include: [...], must_not_include: [...]}``: two checks on one field, both
    with the text options given."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    must_include: list[object] = Field(default_factory=list)
    must_not_include: list[object] = Field(default_factory=list)
    field: str | None = None
    turn: int | None = Field(default=None, ge=1)

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

    model_config = ConfigDict(extra="allow", frozen=True, ser_json_inf_nan="constants")

    mode: str

    @property
    def data(self) -> dict[str, object]:
        return self.model_dump()

    def render(self) -> str:
        return f"{self.mode} (no declaration of this mode)"
