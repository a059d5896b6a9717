"""The grammar the checks on what an agent did share: a ``count`` (N, or ``{min, max}``) and
an ``order`` of one chain or several (a partial order).

``tool_calls`` is written in it (``checks/tools.py``), and so is any check over a sequence of
named things an agent did (its spans, say): give the matcher class a ``count`` of
:class:`Count`, type its ``order`` field ``chains_of(Matcher)``, and grade with
:func:`as_chains` and :func:`broken_chains`.

```yaml
order: [get_subscription, create_refund_request]        # one chain
order:                                                   # several: each holds on its own
  - [get_subscription, create_refund_request]
  - [list_invoices, send_receipt]
```

A chain holds when the sequence contains matches of its entries in that relative order,
with anything between them. Chains are independent: each is looked for from the start of
the sequence, so ``[[a, b], [c, d]]`` says nothing of where ``c`` falls against ``a``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

M = TypeVar("M")
T = TypeVar("T")

#: The tags of the two forms of ``order`` (pydantic names them in an error's location).
CHAIN_TAGS = ("one-chain", "chains")


class Count(BaseModel):
    """How many matching calls: at least ``min``, at most ``max``."""

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


def count_shorthand(data: object) -> object:
    """``count: 2`` as ``count: {min: 2, max: 2}`` (for a matcher's before-validator)."""
    count = data.get("count") if isinstance(data, dict) else None
    if isinstance(count, int) and not isinstance(count, bool):
        return {**cast("dict[str, object]", data), "count": {"min": count, "max": count}}
    return data


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


def check_order_form(value: object) -> object:
    """Refuse an ``order`` mixing the two forms, or holding an empty chain (a
    before-validator: the message names the mistake instead of a type error)."""
    if not isinstance(value, list) or not any(isinstance(item, list) for item in value):
        return value
    if not all(isinstance(item, list) for item in value):
        raise ValueError(
            "`order` is one chain ([a, b]) or a list of chains ([[a, b], [c, d]]), not a mix "
            "of calls and chains"
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
