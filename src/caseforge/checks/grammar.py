"""The grammar the checks on what an agent did share: ``tool_calls`` (``checks/tools.py``) on
its tool calls, ``spans`` (``checks/spans.py``) on its OpenTelemetry spans.

- **A matcher**: a ``name``, a partial mapping of values (a tool call's ``args``, a span's
  ``attributes``: the ones named must match, others may be there too), each a plain value
  or a value check (:data:`VALUE_MODES`), and a ``count``. A bare string is a matcher of
  that name. A matcher class subclasses :class:`Matcher` and ``BaseModel``, names its
  mapping in ``values_field``, and validates with :func:`plain_name` and
  :func:`check_values`; :func:`value_differences` says how an item's values differ.
- **A count** (:class:`Count`): N exactly (``count: 2``), or ``{min, max}``.
- **An order** of one chain or several (a partial order): the check types its ``order``
  field ``chains_of(TheMatcher)``, checks the form with :func:`check_order_form`, and
  grades with :func:`as_chains` and :func:`broken_chains`.

```yaml
order: [get_subscription, create_refund_request]        # one chain
order:                                                   # several: each holds on its own
  - [get_subscription, create_refund_request]
  - [list_invoices, send_receipt]
```

A chain holds when the sequence contains matches of its entries in that relative order,
with anything between them. Chains are independent: each is looked for from the start of
the sequence, so ``[[a, b], [c, d]]`` says nothing of where ``c`` falls against ``a``.
:func:`is_subchain` is the criteria audit's test of a chain still required.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, model_validator
from pydantic.config import JsonDict

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

M = TypeVar("M")
T = TypeVar("T")

# --- value checks: what a matcher's values may be besides a plain value ----------------

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


# --- count ------------------------------------------------------------------------------


class Count(BaseModel):
    """How many matching items: at least ``min``, at most ``max``."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    min: int = Field(0, ge=0, description="At least this many.")
    max: int | None = Field(None, ge=0, description="At most this many (none: no limit).")

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


# --- matcher ----------------------------------------------------------------------------


def plain_name(data: object) -> object:
    """A matcher's shorthands (its before-validator): a bare string is its name, an integer
    ``count`` is exactly that many (``count: 2`` as ``{min: 2, max: 2}``)."""
    if isinstance(data, str):
        return {"name": data}
    count = data.get("count") if isinstance(data, dict) else None
    if isinstance(count, int) and not isinstance(count, bool):
        return {**cast("dict[str, object]", data), "count": {"min": count, "max": count}}
    return data


def matcher_schema(schema: JsonDict) -> None:
    """A matcher's JSON Schema (its ``json_schema_extra``) with the shorthands
    :func:`plain_name` takes: a bare name for the whole matcher, an integer ``count``."""
    properties = schema.get("properties")
    count = properties.get("count") if isinstance(properties, dict) else None
    forms = count.get("anyOf") if isinstance(count, dict) else None
    if isinstance(forms, list):
        forms.insert(0, {"type": "integer", "minimum": 0})
    whole = dict(schema)
    schema.clear()
    schema["anyOf"] = [{"type": "string", "minLength": 1, "description": "A name alone."}, whole]


class Matcher:
    """What every matcher of the grammar does, given its ``name``, its ``count`` and the
    partial mapping it matches (``values_field``: ``args``, ``attributes``). A subclass is
    also a ``BaseModel`` declaring those fields (its config's ``json_schema_extra``:
    :func:`matcher_schema`), and defines ``matches``."""

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
        """A name and nothing else: matched by the name alone."""
        return not self.wanted and self.count is None

    def text(self, with_count: bool = True) -> str:
        wanted = self.wanted
        values = ", ".join(f"{k}={value_text(v)}" for k, v in wanted.items())
        count = f" {self.counted.text()}" if self.count is not None and with_count else ""
        return f"{self.name}({values}){count}" if wanted else f"{self.name}{count}"


# --- order: one chain, or several (a partial order) -------------------------------------

#: The tags of the two forms of ``order`` (pydantic names them in an error's location).
CHAIN_TAGS = ("one-chain", "chains")


def _order_form(data: object) -> str:
    if isinstance(data, list) and data and all(isinstance(item, list) for item in data):
        return CHAIN_TAGS[1]
    return CHAIN_TAGS[0]


def chains_of(matcher: type[M]) -> Any:
    """The type of an ``order`` field over ``matcher``: one chain (a list of matchers) or
    several (a list of such lists), told apart by the first level holding lists."""
    return Annotated[
        Annotated[list[matcher], Tag(CHAIN_TAGS[0])]  # type: ignore[valid-type]
        | Annotated[list[list[matcher]], Tag(CHAIN_TAGS[1])],  # type: ignore[valid-type]
        Discriminator(_order_form),
    ]


def order_any_of(schema: JsonDict) -> None:
    """A check's JSON Schema with ``order``'s two forms as ``anyOf`` rather than ``oneOf``:
    an empty list is both (for a model's ``json_schema_extra``)."""
    properties = schema.get("properties")
    order = properties.get("order") if isinstance(properties, dict) else None
    if isinstance(order, dict) and "oneOf" in order:
        order["anyOf"] = order.pop("oneOf")


def check_order_form(value: object, entries: str) -> object:
    """Refuse an ``order`` mixing the two forms, or holding an empty chain (a
    before-validator: the message names the mistake, and what the ``entries`` are, instead
    of a type error)."""
    if not isinstance(value, list) or not any(isinstance(item, list) for item in value):
        return value
    if not all(isinstance(item, list) for item in value):
        raise ValueError(
            "`order` is one chain ([a, b]) or a list of chains ([[a, b], [c, d]]), not a mix "
            f"of {entries} and chains"
        )
    if any(not item for item in value):
        raise ValueError("`order` holds an empty chain")
    return value


def as_chains(order: Sequence[M] | Sequence[Sequence[M]]) -> list[list[M]]:
    """``order`` as a list of chains, whichever form it was written in."""
    if not order:
        return []
    if isinstance(order[0], list | tuple):
        return [list(cast("Sequence[M]", chain)) for chain in order]
    return [list(cast("Sequence[M]", order))]


def holds(items: Sequence[T], chain: Sequence[M], matches: Callable[[M, T], bool]) -> bool:
    """Whether ``items`` hold matches of ``chain``'s entries in that order (a subsequence;
    each entry takes the first item after the previous one's that it matches)."""
    position = 0
    for item in items:
        if position < len(chain) and matches(chain[position], item):
            position += 1
    return position == len(chain)


def broken_chains(
    items: Sequence[T], chains: Sequence[Sequence[M]], matches: Callable[[M, T], bool]
) -> list[Sequence[M]]:
    """The chains that do not hold on ``items``, each on its own."""
    return [chain for chain in chains if not holds(items, chain, matches)]


def is_subchain(inner: Sequence[object], outer: Sequence[object]) -> bool:
    """Whether ``inner`` is ``outer`` with entries left out (so ``outer`` holding implies
    ``inner`` holds): the criteria audit's test of an order still required."""
    position = 0
    for entry in outer:
        if position < len(inner) and inner[position] == entry:
            position += 1
    return position == len(inner)
