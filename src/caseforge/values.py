"""Small shared helpers on JSON values: equality, set-member identity, item counts, and how
a share is written for people."""

from __future__ import annotations

import json
import math

import pydantic_core

from caseforge.jsontypes import JSONValue
from caseforge.stats.counts import ItemCounts


def same(expected: object, actual: object, strict: bool = False) -> bool:
    """Equality for JSON values: 1 == 1.0, dict/list compared deeply, bools not numbers,
    NaN equal to NaN (an expected NaN is written down on purpose).
    ``strict``: types matter too (1, 1.0 and "1" all differ) and floats compare exactly
    (``0.1 + 0.2`` is not ``0.3``)."""
    if strict:
        if type(expected) is not type(actual):
            return False
    elif isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected is actual
    elif isinstance(expected, int | float) and isinstance(actual, int | float):
        if math.isnan(expected) or math.isnan(actual):  # NaN is data: it equals NaN only
            return math.isnan(expected) and math.isnan(actual)
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            same(expected[k], actual[k], strict) for k in expected
        )
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(expected) == len(actual) and all(
            same(e, a, strict) for e, a in zip(expected, actual, strict=True)
        )
    if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected):
        return math.isnan(actual)
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


# --- non-finite numbers -----------------------------------------------------------------------
# JSON has no NaN or Infinity. An agent's output may hold them (they are data), so what
# caseforge stores and reports writes each as {"$float": "NaN"} ("Infinity", "-Infinity"):
# an object no agent's string "NaN" can be taken for. The report schema documents it.

FLOAT_KEY = "$float"
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def json_text(value: object) -> str:
    """Compact UTF-8 JSON of ``value`` (objects it cannot encode as their ``str``), with a
    non-finite float written as ``{"$float": "NaN"}``. pydantic-core's encoder: a run
    encodes several values per case-trial."""
    return finite_text(pydantic_core.to_json(value, fallback=str, inf_nan_mode="constants"))


def finite_text(text: bytes | str) -> str:
    """JSON text that may hold the bare ``NaN``/``Infinity`` tokens, as valid JSON with each
    written as ``{"$float": …}`` (the text unchanged when it holds none)."""
    decoded = text.decode() if isinstance(text, bytes) else text
    if "NaN" not in decoded and "Infinity" not in decoded:  # the common case: one scan
        return decoded
    marked = mark_floats(json.loads(decoded))
    return pydantic_core.to_json(marked, fallback=str).decode()


def mark_floats(value: JSONValue) -> JSONValue:
    """``value`` with each non-finite float replaced by ``{"$float": "NaN"}`` and the like."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {
            FLOAT_KEY: "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        }
    if isinstance(value, dict):
        return {k: mark_floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mark_floats(v) for v in value]
    return value


def unmark_floats(value: JSONValue) -> JSONValue:
    """The reverse of :func:`mark_floats`: ``{"$float": "NaN"}`` back to ``nan``."""
    if isinstance(value, dict):
        marker = value.get(FLOAT_KEY)
        if len(value) == 1 and isinstance(marker, str) and marker in _NON_FINITE:
            return _NON_FINITE[marker]
        return {k: unmark_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unmark_floats(v) for v in value]
    return value
