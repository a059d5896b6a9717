"""Small shared helpers on JSON values: equality, set-member identity, item counts, and how
a share is written for people."""

from __future__ import annotations

import json
import math

from caseforge.stats import ItemCounts


def same(expected: object, actual: object, strict: bool = False) -> bool:
    """Equality for JSON values: 1 == 1.0, dict/list compared deeply, bools not numbers.
    ``strict``: types matter too (1, 1.0 and "1" all differ) and floats compare exactly
    (``0.1 + 0.2`` is not ``0.3``)."""
    if strict:
        if type(expected) is not type(actual):
            return False
    elif isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected is actual
    elif isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            same(expected[k], actual[k], strict) for k in expected
        )
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(expected) == len(actual) and all(
            same(e, a, strict) for e, a in zip(expected, actual, strict=True)
        )
    return bool(expected == actual)


def differences(expected: object, actual: object, path: str = "") -> list[str]:
    """Where two structured values differ, path by path (``refund.amount_yuan: expected
    6578.0, got 6000``); empty when :func:`same` holds."""
    where = path or "(the value)"
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = []
        for key in expected:
            inner = f"{path}.{key}" if path else str(key)
            if key not in actual:
                found.append(f"{inner}: missing (expected {_brief(expected[key])})")
            else:
                found += differences(expected[key], actual[key], inner)
        for key in actual:
            if key not in expected:
                inner = f"{path}.{key}" if path else str(key)
                found.append(f"{inner}: unexpected {_brief(actual[key])}")
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        found = []
        for index, (e, a) in enumerate(zip(expected, actual, strict=False)):
            found += differences(e, a, f"{path}[{index}]")
        if len(expected) != len(actual):
            found.append(f"{where}: {len(actual)} items, expected {len(expected)}")
        return found
    if same(expected, actual):
        return []
    return [f"{where}: expected {_brief(expected)}, got {_brief(actual)}"]


def _brief(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


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
