"""The matcher grammar ``tool_calls`` and ``spans`` share: a name, a partial mapping of
values (a tool call's ``args``, a span's ``attributes``: the ones named must match, others
may be there too, each a plain value or a value check), a ``count`` (N, or ``{min, max}``),
and an ``order`` (matchers that must match a subsequence, in order).

``checks.tools`` builds its :class:`~caseforge.checks.tools.CallMatcher` on it, and
``checks.spans`` its :class:`~caseforge.checks.spans.SpanMatcher`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, ClassVar, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, model_validator

from caseforge.checks.base import show
from caseforge.checks.builtin import (
    ExactCheck,
    ExactSetCheck,
    MustIncludeCheck,
    MustNotIncludeCheck,
    NumberCheck,
    RegexCheck,
)
from caseforge.values import same

ValueCheck = Annotated[
    Annotated[ExactCheck, Tag("exact")]
    | Annotated[ExactSetCheck, Tag("exact_set")]
    | Annotated[MustIncludeCheck, Tag("must_include")]
    | Annotated[MustNotIncludeCheck, Tag("must_not_include")]
    | Annotated[NumberCheck, Tag("number")]
    | Annotated[RegexCheck, Tag("regex")],
    Discriminator(lambda data: data.get("mode") if isinstance(data, dict) else data.mode),
]
VALUE_MODES = ("exact", "exact_set", "must_include", "must_not_include", "number", "regex")
ValueCheckModel = (
    ExactCheck | ExactSetCheck | MustIncludeCheck | MustNotIncludeCheck | NumberCheck | RegexCheck
)
VALUE_CHECK = cast("TypeAdapter[ValueCheckModel]", TypeAdapter(ValueCheck))


class Count(BaseModel):
    """How many matching calls: at least ``min``, at most ``max``."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    min: int = Field(0, ge=0)
    max: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Count:
        if self.max is not None and self.max < self.min:
            raise ValueError(f"count.max ({self.max}) is below count.min ({self.min})")
        return self

    def holds(self, n: int) -> bool:
        return n >= self.min and (self.max is None or n <= self.max)

    def text(self) -> str:
        if self.max == self.min:
            return f"{self.min}×"
        if self.max is None:
            return f"at least {self.min}×"
        return f"{self.min}–{self.max}×"


def plain_name(data: object) -> object:
    """A matcher's shorthands: a bare string is its name, an integer ``count`` is exactly
    that many (``{min: N, max: N}``)."""
    if isinstance(data, str):
        return {"name": data}
    count = data.get("count") if isinstance(data, dict) else None
    if isinstance(count, int) and not isinstance(count, bool):
        return {**data, "count": {"min": count, "max": count}}  # type: ignore[dict-item]
    return data


def check_values(values: Mapping[str, object], field: str) -> None:
    """Each value written as a value check (a mapping with ``mode``) is a valid one."""
    for key, value in values.items():
        if isinstance(value, dict) and "mode" in value:
            if value["mode"] not in VALUE_MODES:
                raise ValueError(
                    f"{field}.{key}: mode {value['mode']!r} is not a value check "
                    f"({', '.join(VALUE_MODES)})"
                )
            VALUE_CHECK.validate_python(value)


def value_differences(wanted: Mapping[str, object], given: object) -> list[str]:
    """How ``given`` (a mapping, else empty) differs from the partial ``wanted``: each key
    missing, or its value not equal (not passing its value check)."""
    values: Mapping[object, object] = given if isinstance(given, Mapping) else {}
    found = []
    for key, want in wanted.items():
        if key not in values:
            found.append(f"{key} missing")
            continue
        if isinstance(want, dict) and "mode" in want:
            verdict = VALUE_CHECK.validate_python(want).grade(values[key])
            if verdict.status.value != "pass":
                found.append(f"{key}: {verdict.reason}")
        elif not same(want, values[key]):
            found.append(f"{key} expected {show(want)}, got {show(values[key])}")
    return found


def value_text(value: object) -> str:
    """A wanted value, short: a value check as it renders, else the value."""
    if isinstance(value, dict) and "mode" in value:
        return str(VALUE_CHECK.validate_python(value).render())
    return show(value, 40)


Item = TypeVar("Item")
Wanted = TypeVar("Wanted")


class Matcher:
    """What every matcher of the grammar does, given its ``name``, its ``count`` and the
    partial mapping it matches (``values_field``: ``args``, ``attributes``)."""

    values_field: ClassVar[str]
    if TYPE_CHECKING:  # the model's own fields (declared here, pydantic would reorder them)
        name: str
        count: Count | None

    @property
    def wanted(self) -> dict[str, object]:
        values: dict[str, object] = getattr(self, self.values_field)
        return values

    @property
    def counted(self) -> Count:
        return Count(min=1) if self.count is None else self.count

    @property
    def plain(self) -> bool:
        return not self.wanted and self.count is None

    def text(self, with_count: bool = True) -> str:
        wanted = self.wanted
        values = ", ".join(f"{k}={value_text(v)}" for k, v in wanted.items())
        count = f" {self.counted.text()}" if self.count is not None and with_count else ""
        return f"{self.name}({values}){count}" if wanted else f"{self.name}{count}"


def in_order(
    items: Sequence[Item], order: Sequence[Wanted], matches: Callable[[Wanted, Item], bool]
) -> bool:
    """``order`` matches a subsequence of ``items`` (``matches(matcher, item)``)."""
    position = 0
    for item in items:
        if position < len(order) and matches(order[position], item):
            position += 1
    return position == len(order)


__all__ = [
    "VALUE_CHECK",
    "VALUE_MODES",
    "Count",
    "Matcher",
    "ValueCheck",
    "ValueCheckModel",
    "check_values",
    "in_order",
    "plain_name",
    "value_differences",
    "value_text",
]
