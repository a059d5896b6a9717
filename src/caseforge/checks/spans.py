"""``spans``: expectations on the agent's OpenTelemetry spans, kept with the case-trial, in
the grammar ``tool_calls`` uses (``checks/grammar.py``): a span by name (exact, or a glob:
``*`` any text, ``?`` one character) with partial ``attributes``, a ``count``, an
``order`` of one chain or several (a partial order); and, for spans only, a longest
duration per span and a most error spans.

```yaml
trace:
  mode: spans
  must_have:
    - "chat *"                                                   # at least once
    - {name: "execute_tool *", attributes: {gen_ai.tool.name: lookup_order}, count: 1}
    - {name: retrieve, max_duration_ms: 500}                     # each at most 500 ms
    - {name: "*", count: {max: 40}}                              # 40 spans at most
  must_not_have: ["*retry*"]
  order: [retrieve, "chat *"]                                    # or [[a, b], [c, d]]
  max_errors: 0                                                  # or {"*": 1, "chat *": 0}
```

A case-trial with no spans at all is not judged (so ``incomplete``, never passed): the agent
is not instrumented, or its spans did not reach caseforge, and the reason says how.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from caseforge.checks.base import OptionOrder, TrialFacts, Verdict, failed, passed
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
from caseforge.checks.measures import _TrialLimit
from caseforge.results import CheckStatus
from caseforge.tracing.spans import (
    SpanData,
    duration_ms,
    is_error,
    is_glob,
    name_matches,
    ordered,
    status_line,
)

NO_SPANS = (
    "no spans from the agent: not judged. Instrument it with OpenTelemetry (an in-process "
    "agent: any tracer or an OpenInference instrumentor, with caseforge[otel] installed; a "
    "command or HTTP agent: export OTLP/HTTP to caseforge's receiver, which a command finds in "
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), see the tracing guide"
)


EMPTY_GLOB = (
    'an empty glob ("") matches no span: write a span name or a glob (`*` any text, `?` one '
    'character; "*" every span)'
)


class NoSpans(list[SpanData]):
    """No spans came for the case-trial (an empty list), and why, when the run knows."""

    def __init__(self, why: str | None) -> None:
        super().__init__()
        self.why = why


def no_spans_reason(why: str | None) -> str:
    """The reason a spans check was not judged: the cause when known, else how to
    instrument the agent."""
    return f"no spans from the agent: not judged ({why})" if why else NO_SPANS


class SpanMatcher(Matcher, BaseModel):
    """Spans by ``name`` (exact, or a glob) with ``attributes`` that must match (others may
    be there too), how many (``count``) and how long each may take."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        ser_json_inf_nan="constants",
        json_schema_extra=matcher_schema,
    )
    values_field: ClassVar[str] = "attributes"

    name: str = Field(min_length=1, description="A span name, or a glob: `*` any text, `?` one.")
    attributes: dict[str, object] = Field(
        default_factory=dict,
        description="Each attribute a plain value (equal), or a value check "
        f"({', '.join(VALUE_MODES)}).",
    )
    count: Count | None = Field(None, description="N exactly, or {min, max}; default: 1 or more.")
    max_duration_ms: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="Each matching span took at most this."
    )
    percentile: float | None = Field(
        None,
        gt=0,
        le=100,
        description="With max_duration_ms: this percentile of their durations, not each one.",
    )

    @model_validator(mode="before")
    @classmethod
    def _plain_name(cls, data: object) -> object:
        return plain_name(data)

    @field_validator("name", mode="before")
    @classmethod
    def _not_empty(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            raise ValueError(EMPTY_GLOB)
        return value

    @model_validator(mode="after")
    def _valid(self) -> SpanMatcher:
        check_values(self.attributes, "attributes")
        if self.percentile is not None and self.max_duration_ms is None:
            raise ValueError("`percentile` goes with `max_duration_ms`")
        return self

    def differences(self, span: Mapping[str, object]) -> list[str]:
        """How ``span`` differs from this matcher (empty: it matches)."""
        name = span.get("name")
        if not isinstance(name, str) or not name_matches(self.name, name):
            return [f"name {name!r}"]
        return value_differences(self.attributes, span.get("attributes"))

    def matches(self, span: Mapping[str, object]) -> bool:
        return not self.differences(span)

    def text(self, with_count: bool = True) -> str:
        shown = super().text(with_count)
        if self.max_duration_ms is not None:
            which = f"p{self.percentile:g} " if self.percentile is not None else ""
            shown += f" {which}≤ {self.max_duration_ms:g} ms"
        return shown

    def too_slow(self, spans: Sequence[SpanData]) -> str | None:
        """Why the matching ``spans`` break ``max_duration_ms`` (None: they do not)."""
        limit = self.max_duration_ms
        if limit is None:
            return None
        timed = [(d, s["name"]) for s in spans if (d := duration_ms(s)) is not None]
        if not timed:
            return None
        if self.percentile is not None:
            durations = sorted(d for d, _ in timed)
            index = max(0, math.ceil(self.percentile / 100 * len(durations)) - 1)
            value = durations[index]
            if value <= limit:
                return None
            return (
                f"{self.name}: p{self.percentile:g} of {len(durations)} spans took {value:.1f} ms,"
                f" over {limit:g} ms"
            )
        slow = sorted((t for t in timed if t[0] > limit), reverse=True)
        if not slow:
            return None
        shown = ", ".join(f"{name} {took:.1f} ms" for took, name in slow[:3])
        more = f" and {len(slow) - 3} more" if len(slow) > 3 else ""
        noun = "span" if len(slow) == 1 else "spans"
        return f"{self.name}: {len(slow)} {noun} over {limit:g} ms ({shown}{more})"


class SpansCheck(_TrialLimit):
    """Expectations on the agent's OpenTelemetry spans: ``must_have`` (a name or glob with
    attributes, a count, a longest duration), ``must_not_have``, ``order`` and
    ``max_errors``. Not judged when the case-trial has no spans at all."""

    expected_field: ClassVar[str | None] = None
    strength: ClassVar[int] = 60
    refused: ClassVar[frozenset[str]] = frozenset({"field", "turn", "oracle", "args"})
    options: ClassVar[dict[str, OptionOrder]] = {
        "max_errors": OptionOrder("higher", kind="error-limit-raised")
    }

    model_config = ConfigDict(json_schema_extra=order_any_of)

    mode: Literal["spans"]
    must_have: list[SpanMatcher] = Field(
        default_factory=list, description="Spans that must be there (each 1 or more times)."
    )
    must_not_have: list[SpanMatcher] = Field(
        default_factory=list, description="Spans that must not be there."
    )
    if TYPE_CHECKING:
        order: list[SpanMatcher] | list[list[SpanMatcher]]
    else:
        order: chains_of(SpanMatcher) = Field(
            default_factory=list,
            description="Spans matching these, in this relative order (by start time); or "
            "several such chains ([[a, b], [c, d]]), each holding on its own (a partial order).",
        )
    max_errors: int | dict[str, int] | None = Field(
        None,
        description='At most N spans with the status ERROR, or {"*": N, glob: M, …} per name.',
    )

    @field_validator("order", mode="before")
    @classmethod
    def _order_form(cls, value: object) -> object:
        return check_order_form(value, "spans")

    @field_validator("max_errors", mode="before")
    @classmethod
    def _globs_not_empty(cls, value: object) -> object:
        if isinstance(value, dict) and any(isinstance(k, str) and not k.strip() for k in value):
            raise ValueError(f"a key is {EMPTY_GLOB}")
        return value

    @cached_property
    def chains(self) -> list[list[SpanMatcher]]:
        """``order`` as chains: one, or the several written."""
        return as_chains(self.order)

    @model_validator(mode="after")
    def _something(self) -> SpansCheck:
        if not (self.must_have or self.must_not_have or self.order) and self.max_errors is None:
            raise ValueError(
                "a spans check needs must_have, must_not_have, order or max_errors "
                '(`must_have: ["*"]`: any span at all)'
            )
        for matcher in self.must_not_have:
            if matcher.count is not None or matcher.max_duration_ms is not None:
                raise ValueError("must_not_have takes no count or max_duration_ms")
        limits = self.max_errors
        if (isinstance(limits, int) and limits < 0) or (
            isinstance(limits, dict) and any(v < 0 for v in limits.values())
        ):
            raise ValueError("max_errors must be 0 or more")
        return self

    @cached_property
    def _expected(self) -> dict[str, object]:
        return self.model_dump(mode="json", exclude_defaults=True, exclude={"mode"})

    @property
    def expected(self) -> object:
        return self._expected

    def measured(self, trial: TrialFacts) -> object:
        return trial.spans or NoSpans(trial.spans_missing)

    def kept(self, actual: object) -> object:
        """What the result keeps of the spans graded: their count, errors and names."""
        if not isinstance(actual, list) or not actual:
            return None
        spans = ordered(cast("SpanData", s) for s in actual if isinstance(s, dict))
        counts = Counter(str(s.get("name")) for s in spans)  # in the order they started
        return {
            "spans": len(actual),
            "errors": sum(1 for s in spans if is_error(s)),
            "names": [f"{n} ×{c}" if c > 1 else n for n, c in list(counts.items())[:50]],
        }

    def grade(self, actual: object) -> Verdict:
        if not isinstance(actual, list) or not actual:
            why = actual.why if isinstance(actual, NoSpans) else None
            return Verdict(CheckStatus.NOT_JUDGED, no_spans_reason(why))
        spans = ordered(cast("SpanData", s) for s in actual if isinstance(s, dict))
        problems: list[str] = []
        for matcher in self.must_have:
            found = [s for s in spans if matcher.matches(s)]
            if not matcher.counted.holds(len(found)):
                if found:
                    problems.append(
                        f"{matcher.text(with_count=False)}: {len(found)} "
                        f"{'span' if len(found) == 1 else 'spans'}, expected "
                        f"{matcher.counted.text()}"
                    )
                else:
                    problems.append(f"no span {matcher.text()}{_closest(matcher, spans)}")
            slow = matcher.too_slow(found)
            if slow:
                problems.append(slow)
        for matcher in self.must_not_have:
            hits = [s for s in spans if matcher.matches(s)]
            if hits:
                names = ", ".join(dict.fromkeys(s["name"] for s in hits))
                problems.append(f"forbidden span {matcher.text()}: {len(hits)}× ({names})")
        broken = broken_chains(spans, self.chains, SpanMatcher.matches)
        if broken:
            wanted = "; not in order ".join(" -> ".join(m.text() for m in c) for c in broken)
            problems.append(f"not in order {wanted} (spans: {_names(spans)})")
        problems += self._over_error_limits(spans)
        return failed("; ".join(problems)) if problems else passed()

    def _over_error_limits(self, spans: list[SpanData]) -> list[str]:
        limits = self.max_errors
        if limits is None:
            return []
        if isinstance(limits, int):
            limits = {"*": limits}
        found = []
        for pattern, limit in limits.items():
            errors = [s for s in spans if is_error(s) and name_matches(pattern, s["name"])]
            if len(errors) > limit:
                shown = ", ".join(_with_message(s) for s in errors[:3])
                which = "" if pattern == "*" else f" named {pattern}"
                noun = "error span" if len(errors) == 1 else "error spans"
                found.append(f"{len(errors)} {noun}{which}, at most {limit} allowed: {shown}")
        return found

    def render(self) -> str:
        parts = [
            f"{label} {', '.join(m.text() for m in matchers)}"
            for label, matchers in (
                ("have", self.must_have),
                ("never", self.must_not_have),
                *(("in order", chain) for chain in self.chains),
            )
            if matchers
        ]
        if self.max_errors is not None:
            parts.append(f"max_errors {json.dumps(self.max_errors)}")
        return "spans: " + "; ".join(parts)


def _with_message(span: SpanData) -> str:
    """A span's name with its status message in one short line."""
    message = status_line(span.get("status_message"), 80)
    return f"{span['name']} ({message})" if message else span["name"]


def _names(spans: Sequence[SpanData], limit: int = 12) -> str:
    names = list(dict.fromkeys(s["name"] for s in spans))
    more = f", … {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _closest(matcher: SpanMatcher, spans: Sequence[SpanData]) -> str:
    """How the nearest span of that name differed, or which spans there were."""
    named = [s for s in spans if name_matches(matcher.name, s["name"])]
    if not named:
        return f" (spans: {_names(spans)})"
    nearest = min(named, key=lambda s: len(matcher.differences(s)))
    what = "a span" if is_glob(matcher.name) else "the span"
    return f" — closest: {what} {nearest['name']}: {'; '.join(matcher.differences(nearest))}"
