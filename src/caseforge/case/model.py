"""The case model: one golden-dataset case, its input, and its goal state (``expect``).

A check is ``{mode: M, value: V}`` or ``{mode: M, values: [...]}``; the shorthand
``{must_include: [...], must_not_include: [...]}`` puts two checks on one field, and
``tool_calls: {must_call: [...], must_not_call: [...], order: [...]}`` is graded on the
recorded tool calls. Any check may name the ``oracle`` (and its ``args``) that computed its
expectation, and a ``field`` other than its key.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

ID_PATTERN = r"^[a-z0-9-]+$"
Source = Literal["manual", "synthetic", "error-analysis", "production"]
Split = Literal["dev", "test"]


class BaseCheck(BaseModel):
    """Fields every check mode shares."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str | None = Field(
        default=None, description="Dotted path of the output field to grade; defaults to the key."
    )
    oracle: str | None = Field(
        default=None, description="Name of the suite oracle that computed this expectation."
    )
    args: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments handed to the oracle."
    )

    # Which field holds the expectation: "value", "values" or none (ignore).
    expected_field: ClassVar[str | None] = "value"

    @property
    def expected(self) -> Any:
        """The expectation the oracle is compared with (``value`` or ``values``)."""
        return getattr(self, self.expected_field) if self.expected_field else None


class ExactCheck(BaseCheck):
    """The field equals ``value``."""

    mode: Literal["exact"]
    value: Any


class ExactSetCheck(BaseCheck):
    """The field, as a set, equals ``values`` (the set, not the count)."""

    expected_field: ClassVar[str | None] = "values"

    mode: Literal["exact_set"]
    values: list[Any]


class MustIncludeCheck(BaseCheck):
    """Every value is in the field (substring of a string, member of a list)."""

    expected_field: ClassVar[str | None] = "values"

    mode: Literal["must_include"]
    values: list[Any] = Field(min_length=1)


class MustNotIncludeCheck(BaseCheck):
    """No value is in the field."""

    expected_field: ClassVar[str | None] = "values"

    mode: Literal["must_not_include"]
    values: list[Any] = Field(min_length=1)


class RegexCheck(BaseCheck):
    """The field (as text) matches the regular expression ``value``."""

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


class NumberCheck(BaseCheck):
    """The field is a number within ``tolerance`` of ``value``."""

    mode: Literal["number"]
    value: float
    tolerance: float = Field(default=0.0, ge=0.0)


class OutcomeCheck(BaseCheck):
    """What the run left in its workspace (read by the suite's probe) equals ``value``.

    ``value: null`` means the run must leave no outcome (e.g. no refund request).
    """

    mode: Literal["outcome"]
    value: Any = Field(description="Required; null means no outcome is expected.")

    @model_validator(mode="before")
    @classmethod
    def _value_present(cls, data: Any) -> Any:
        if isinstance(data, dict) and "value" not in data:
            raise ValueError("an outcome check needs `value` (write `value: null` for none)")
        return data


class JudgeCheck(BaseCheck):
    """Facts (``values``) or a ``rubric`` for the LLM judge."""

    expected_field: ClassVar[str | None] = "values"

    mode: Literal["judge"]
    values: list[str] | None = None
    rubric: str | None = None

    @property
    def expected(self) -> Any:
        return self.values if self.values else self.rubric

    @model_validator(mode="after")
    def _facts_or_rubric(self) -> JudgeCheck:
        if not self.values and not self.rubric:
            raise ValueError("a judge check needs `values` (facts) or a `rubric`")
        return self


class IgnoreCheck(BaseCheck):
    """An ungradable cell, written down with the reason it is not graded."""

    expected_field: ClassVar[str | None] = None

    mode: Literal["ignore"]
    reason: str = Field(min_length=1)


class IncludeShorthand(BaseModel):
    """``{must_include: [...], must_not_include: [...]}``: two checks on one field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    must_include: list[Any] = Field(default_factory=list)
    must_not_include: list[Any] = Field(default_factory=list)
    field: str | None = None

    @property
    def mode(self) -> str:
        return "must_include+must_not_include"


class ToolCallsCheck(BaseModel):
    """Expectations on the recorded tool calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    must_call: list[str] = Field(default_factory=list)
    must_not_call: list[str] = Field(default_factory=list)
    order: list[str] = Field(
        default_factory=list, description="These tools are called in this relative order."
    )

    @property
    def mode(self) -> str:
        return "tool_calls"

    @model_validator(mode="after")
    def _consistent(self) -> ToolCallsCheck:
        if not (self.must_call and self.must_not_call):
            return self
        both = sorted(set(self.must_call) & set(self.must_not_call))
        if both:
            raise ValueError(f"in both must_call and must_not_call: {', '.join(both)}")
        return self


MODES: dict[str, type[BaseCheck]] = {
    "exact": ExactCheck,
    "exact_set": ExactSetCheck,
    "must_include": MustIncludeCheck,
    "must_not_include": MustNotIncludeCheck,
    "regex": RegexCheck,
    "number": NumberCheck,
    "outcome": OutcomeCheck,
    "judge": JudgeCheck,
    "ignore": IgnoreCheck,
}

ModeCheck = (
    ExactCheck
    | ExactSetCheck
    | MustIncludeCheck
    | MustNotIncludeCheck
    | RegexCheck
    | NumberCheck
    | OutcomeCheck
    | JudgeCheck
    | IgnoreCheck
)
Check = ModeCheck | IncludeShorthand | ToolCallsCheck


def _check_kind(data: Any) -> str | None:
    if isinstance(data, BaseModel):
        mode = getattr(data, "mode", None)
        if isinstance(data, IncludeShorthand):
            return "shorthand"
        if isinstance(data, ToolCallsCheck):
            return "tool_calls"
        return str(mode) if mode is not None else None
    if not isinstance(data, dict):
        return None
    if "mode" in data:
        mode = data["mode"]
        return mode if isinstance(mode, str) and mode in MODES else "unknown-mode"
    if {"must_call", "must_not_call", "order"} & data.keys():
        return "tool_calls"
    if {"must_include", "must_not_include"} & data.keys():
        return "shorthand"
    return None


CheckSpec = Annotated[
    Annotated[ExactCheck, Tag("exact")]
    | Annotated[ExactSetCheck, Tag("exact_set")]
    | Annotated[MustIncludeCheck, Tag("must_include")]
    | Annotated[MustNotIncludeCheck, Tag("must_not_include")]
    | Annotated[RegexCheck, Tag("regex")]
    | Annotated[NumberCheck, Tag("number")]
    | Annotated[OutcomeCheck, Tag("outcome")]
    | Annotated[JudgeCheck, Tag("judge")]
    | Annotated[IgnoreCheck, Tag("ignore")]
    | Annotated[IncludeShorthand, Tag("shorthand")]
    | Annotated[ToolCallsCheck, Tag("tool_calls")],
    Discriminator(
        _check_kind,
        custom_error_type="check_mode",
        custom_error_message=(
            "a check needs `mode` (one of: " + ", ".join(MODES) + "), or the shorthand "
            "`must_include`/`must_not_include`, or `must_call`/`must_not_call` on tool_calls"
        ),
    ),
]


class Case(BaseModel):
    """One case of a golden dataset: the input, the goal state and the metadata."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ID_PATTERN, description="Slug; never renamed or reused.")
    input: dict[str, Any] = Field(description="The mapping handed to the agent.")
    expect: dict[str, CheckSpec] = Field(
        description="The goal state: one check per field of the agent's output."
    )
    tags: list[str] = Field(default_factory=list)
    source: Source = "manual"
    split: Split | None = None
    added: dt.date | None = None
    note: str = ""
    provenance: dict[str, Any] = Field(default_factory=dict)
    clock: dt.datetime | None = Field(default=None, description="Frozen clock for the case.")
    seed: int | None = Field(default=None, description="Fixed seed; else derived from id.")

    @field_validator("expect")
    @classmethod
    def _tool_calls_placement(cls, expect: dict[str, Check]) -> dict[str, Check]:
        for key, check in expect.items():
            if isinstance(check, ToolCallsCheck) and key != "tool_calls":
                raise PydanticCustomError(
                    "tool_calls_misplaced",
                    "must_call/must_not_call/order belong under `tool_calls`",
                    {"field": key},
                )
        return expect

    def checks(self) -> list[tuple[str, str, Check]]:
        """``(name, field, check)`` for each check, the shorthand expanded into two."""
        return self._expanded_checks

    @cached_property
    def _expanded_checks(self) -> list[tuple[str, str, Check]]:
        return list(self._expand())

    def _expand(self) -> Iterator[tuple[str, str, Check]]:
        for key, check in self.expect.items():
            field = check.field if not isinstance(check, ToolCallsCheck) else None
            target = field or key
            if isinstance(check, IncludeShorthand):
                if check.must_include:
                    yield (
                        f"{key}.must_include",
                        target,
                        MustIncludeCheck(mode="must_include", values=check.must_include),
                    )
                if check.must_not_include:
                    yield (
                        f"{key}.must_not_include",
                        target,
                        MustNotIncludeCheck(mode="must_not_include", values=check.must_not_include),
                    )
            else:
                yield key, target, check

    def category(self) -> str:
        """The case's category: ``expect.category``'s exact value, else its first tag."""
        check = self.expect.get("category")
        if isinstance(check, ExactCheck) and isinstance(check.value, str):
            return check.value
        return self.tags[0] if self.tags else "(none)"

    def exact_set_fields(self) -> dict[str, list[Any]]:
        """The fields graded with ``exact_set`` and their expected items."""
        return {
            name: list(check.values)
            for name, _, check in self.checks()
            if isinstance(check, ExactSetCheck)
        }


def case_json_schema() -> dict[str, Any]:
    """The JSON Schema of a case file, for editors (``caseforge schema``)."""
    schema = Case.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "caseforge case"
    return schema
