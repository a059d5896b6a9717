"""``tool_calls``: expectations on the tool calls a case-trial made, by name, by arguments
(a partial match, each value a plain value or a value check) and by count.

```yaml
tool_calls:
  must_call:
    - get_subscription                                   # at least once
    - {name: create_refund_request, args: {invoice_id: INV-2026-0091}, count: 1}
    - {name: list_invoices, count: {min: 1, max: 2}}
  must_not_call: [delete_account, {name: create_refund_request, args: {invoice_id: INV-2026-0090}}]
  order: [get_subscription, create_refund_request]      # or several chains: [[a, b], [c, d]]
  max_calls: 6                                           # or {"*": 6, list_invoices: 2}
writes:                                                  # more checks, under keys of your own
  field: tool_calls                                      # (or mode: tool_calls)
  order: [[cancel_order, refund], [update_address, notify]]
```

The matchers, the count and the order are ``checks/grammar.py``'s, which ``spans``
(``checks/spans.py``) shares.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.config import JsonDict

from caseforge.checks.base import Verdict, failed, passed, show
from caseforge.checks.grammar import (
    VALUE_MODES,
    Count,
    Matcher,
    as_chains,
    broken_chains,
    chains_of,
    check_order_form,
    check_values,
    matcher_schema,
    order_any_of,
    plain_name,
    value_differences,
)

# A recorded tool call as the grader hands it over: at least ``name`` and ``args``.
Call = Mapping[str, object]


class CallMatcher(Matcher, BaseModel):
    """A tool call by ``name``, with ``args`` that must match (others may be there too)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        ser_json_inf_nan="constants",
        json_schema_extra=matcher_schema,
    )
    values_field: ClassVar[str] = "args"

    name: str = Field(min_length=1, description="The tool's name.")
    args: dict[str, object] = Field(
        default_factory=dict,
        description="Each argument a plain value (equal), or a value check "
        f"({', '.join(VALUE_MODES)}) such as {{mode: number, value: 6578, tolerance: 0.01}}.",
    )
    count: Count | None = Field(None, description="N exactly, or {min, max}.")

    @model_validator(mode="before")
    @classmethod
    def _plain_name(cls, data: object) -> object:
        return plain_name(data)

    @model_validator(mode="after")
    def _value_checks(self) -> CallMatcher:
        check_values(self.args, "args")
        return self

    def differences(self, call: Call) -> list[str]:
        """How ``call`` differs from this matcher (empty: it matches)."""
        if call.get("name") != self.name:
            return [f"name {call.get('name')!r}"]
        return value_differences(self.args, call.get("args"))

    def matches(self, call: Call) -> bool:
        return not self.differences(call)


TOOL_CALLS = "tool_calls"  # the field a tool-call check reads, and its form's name


def _schema_extra(schema: JsonDict) -> None:
    """``mode: tool_calls`` in the schema (the validator takes it before the fields do),
    and ``order``'s two forms as ``anyOf``: an empty list is both."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    properties["mode"] = {
        "const": TOOL_CALLS,
        "description": "`tool_calls`: says what the check is (as `field: tool_calls` does).",
    }
    order_any_of(schema)


class ToolCallsCheck(BaseModel):
    """Expectations on the recorded tool calls. Under the key `tool_calls`, or under a key
    of your own with `field: tool_calls` (or `mode: tool_calls`): a case may hold several."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        ser_json_inf_nan="constants",
        json_schema_extra=_schema_extra,
    )

    field: str | None = Field(
        None,
        description="`tool_calls` (what the check reads): needed under a key of your own, "
        "unless `mode: tool_calls` says it.",
    )
    must_call: list[CallMatcher] = Field(
        default_factory=list,
        description="Calls that must be made (at least once, or `count` times).",
    )
    must_not_call: list[CallMatcher] = Field(
        default_factory=list, description="Calls that must not be made (no count)."
    )
    if TYPE_CHECKING:
        order: list[CallMatcher] | list[list[CallMatcher]]
    else:
        order: chains_of(CallMatcher) = Field(
            default_factory=list,
            description="Calls matching these, in this relative order; or several such "
            "chains ([[a, b], [c, d]]), each holding on its own (a partial order).",
        )
    max_calls: int | dict[str, int] | None = Field(
        None, description='At most N calls in all, or {"*": N, tool: M, …} per tool.'
    )
    turn: int | None = Field(
        default=None, ge=1, description="In a conversation: only this agent turn's calls."
    )

    @model_validator(mode="before")
    @classmethod
    def _mode_says_the_field(cls, data: object) -> object:
        """``mode: tool_calls`` (the form named, as other checks name their mode) says what
        ``field: tool_calls`` says; it is kept as the field, so the check reads back."""
        if not isinstance(data, dict) or "mode" not in data:
            return data
        rest = {k: v for k, v in data.items() if k != "mode"}
        if data["mode"] != TOOL_CALLS:
            raise ValueError(f"mode {data['mode']!r} with must_call/must_not_call/order")
        rest.setdefault("field", TOOL_CALLS)
        return rest

    @field_validator("field")
    @classmethod
    def _reads_the_calls(cls, value: str | None) -> str | None:
        if value is not None and value != TOOL_CALLS:
            raise ValueError(
                f"a tool-call check reads the tool calls: `field` is `tool_calls` (got "
                f"{value!r}); to check another field, give the check a `mode`"
            )
        return value

    @field_validator("order", mode="before")
    @classmethod
    def _order_form(cls, value: object) -> object:
        return check_order_form(value, "calls")

    @property
    def mode(self) -> Literal["tool_calls"]:
        return "tool_calls"

    @cached_property
    def chains(self) -> list[list[CallMatcher]]:
        """``order`` as chains: one, or the several written."""
        return as_chains(self.order)

    @cached_property
    def expected(self) -> dict[str, object]:  # once per check: it is read on every grade
        return self.model_dump(mode="json", exclude_defaults=True)

    @model_validator(mode="after")
    def _consistent(self) -> ToolCallsCheck:
        plain_call = {m.name for m in self.must_call if not m.args}
        plain_never = {m.name for m in self.must_not_call if not m.args}
        both = sorted(plain_call & plain_never)
        if both:
            raise ValueError(f"in both must_call and must_not_call: {', '.join(both)}")
        if any(m.count is not None for m in self.must_not_call):
            raise ValueError("must_not_call takes no count (use must_call with count)")
        limits = self.max_calls
        if (isinstance(limits, int) and limits < 0) or (
            isinstance(limits, dict) and any(v < 0 for v in limits.values())
        ):
            raise ValueError("max_calls must be 0 or more")
        return self

    def grade(self, actual: object) -> Verdict:
        calls = _calls(actual)
        if self._by_name_only:  # names alone, the common case: no matcher to build
            return self._grade_names([str(c["name"]) for c in calls])
        problems = []
        for matcher in self.must_call:
            n = sum(1 for c in calls if matcher.matches(c))
            if matcher.counted.holds(n):
                continue
            if n == 0:
                problems.append(f"not called: {matcher.text()}{_closest(matcher, calls)}")
            else:
                problems.append(f"{matcher.text()}: called {n}×, expected {matcher.counted.text()}")
        for matcher in self.must_not_call:
            hits = [c for c in calls if matcher.matches(c)]
            if hits:
                shown = matcher.text() if matcher.args else matcher.name
                problems.append(f"called but forbidden: {shown}")
        broken = broken_chains(calls, self.chains, CallMatcher.matches)
        if broken:
            names = ", ".join(str(c.get("name")) for c in calls)
            wanted = "; not in order ".join(" -> ".join(m.text() for m in c) for c in broken)
            problems.append(f"not in order {wanted} (calls: {names})")
        problems += self._over_limits(calls)
        return failed("; ".join(problems)) if problems else passed()

    @cached_property
    def _by_name_only(self) -> bool:
        return self.max_calls is None and all(
            m.plain
            for m in (*self.must_call, *self.must_not_call, *(m for c in self.chains for m in c))
        )

    def _grade_names(self, names: list[str]) -> Verdict:
        if not names and not self.must_call:  # nothing called, nothing required
            return passed()
        problems = []
        missing = [m.name for m in self.must_call if m.name not in names]
        if missing:
            called = ", ".join(dict.fromkeys(names)) or "none"
            problems.append(f"not called: {', '.join(missing)} (calls: {called})")
        forbidden = [m.name for m in self.must_not_call if m.name in names]
        if forbidden:
            problems.append(f"called but forbidden: {', '.join(forbidden)}")
        broken = broken_chains(names, self.chains, _same_name)
        if broken:
            wanted = "; not in order ".join(" -> ".join(m.name for m in c) for c in broken)
            problems.append(f"not in order {wanted} (calls: {', '.join(names)})")
        return failed("; ".join(problems)) if problems else passed()

    def _over_limits(self, calls: list[Call]) -> list[str]:
        limits = self.max_calls
        if limits is None:
            return []
        if isinstance(limits, int):
            limits = {"*": limits}
        found = []
        for tool, limit in limits.items():
            n = len(calls) if tool == "*" else sum(1 for c in calls if c.get("name") == tool)
            if n > limit:
                what = "calls in all" if tool == "*" else f"calls of {tool}"
                found.append(f"{n} {what}, at most {limit} allowed")
        return found

    def render(self) -> str:
        parts = [
            f"{label} {', '.join(m.text() for m in matchers)}"
            for label, matchers in (
                ("call", self.must_call),
                ("never call", self.must_not_call),
                *(("in order", chain) for chain in self.chains),
            )
            if matchers
        ]
        if self.max_calls is not None:
            parts.append(f"max_calls {json.dumps(self.max_calls)}")
        return "tool_calls: " + ("; ".join(parts) or "anything")


def _calls(actual: object) -> list[Call]:
    """The recorded calls as ``{name, args}``; a plain list of names (older results) too."""
    found: list[Call] = []
    if isinstance(actual, list | tuple):  # the grader's list: no ABC check on every grade
        items: Iterable[object] = actual
    elif isinstance(actual, Iterable) and not isinstance(actual, str):
        items = actual
    else:
        items = ()
    for item in items:
        if isinstance(item, str):
            found.append({"name": item, "args": {}})
        elif isinstance(item, dict) and "name" in item and "args" in item:
            found.append(item)  # as the grader hands them over
        elif isinstance(item, Mapping):
            found.append({"name": item.get("name"), "args": item.get("args") or {}})
    return found


def _closest(matcher: CallMatcher, calls: list[Call]) -> str:
    """How the nearest call of that tool differed, or which tools were called."""
    same_name = [c for c in calls if c.get("name") == matcher.name]
    if not same_name:
        names = ", ".join(dict.fromkeys(str(c.get("name")) for c in calls)) or "none"
        return f" (calls: {names})"
    nearest = min(same_name, key=lambda c: len(matcher.differences(c)))
    given = nearest.get("args")
    pairs = given.items() if isinstance(given, Mapping) else ()
    args = ", ".join(f"{k}={show(v, 40)}" for k, v in pairs)
    how = "; ".join(matcher.differences(nearest))
    return f" — closest: {matcher.name}({args}): {how}"


def _same_name(matcher: CallMatcher, name: str) -> bool:
    return matcher.name == name
