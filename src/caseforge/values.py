"""Small shared helpers on JSON values: equality, set-member identity, item counts, and how
a share is written for people."""

from __future__ import annotations

import json
import math

from caseforge.stats import ItemCounts


def same(expected: object, actual: object) -> bool:
    """Equality for JSON values: 1 == 1.0, dict/list compared deeply, bools not numbers."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            same(expected[k], actual[k]) for k in expected
        )
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(expected) == len(actual) and all(
            same(e, a) for e, a in zip(expected, actual, strict=True)
        )
    return bool(expected == actual)


def item_key(value: object) -> str:
    """A set member's identity: its JSON, so 1 and "1" stay different items (a string is
    keyed without encoding it; JSON text never starts with NUL, so keys cannot collide)."""
    if type(value) is str:
        return "\0" + value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def item_counts(expected: object, actual: object) -> ItemCounts:
    """True positives, false positives and false negatives of ``actual`` against the
    expected set; a non-list ``actual`` reports no item."""
    want = {item_key(v) for v in expected} if isinstance(expected, list) else set()
    got = {item_key(v) for v in actual} if isinstance(actual, list) else set()
    return ItemCounts(len(want & got), len(got - want), len(want - got))


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal, ``n/a`` when undefined."""
    return "n/a" if value is None else f"{100 * value:.1f}%"
