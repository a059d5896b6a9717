"""The code-first graders, one per check mode (DESIGN §3)."""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from typing import Any

from caseforge.case.model import (
    ExactCheck,
    ExactSetCheck,
    MustIncludeCheck,
    MustNotIncludeCheck,
    NumberCheck,
    OutcomeCheck,
    RegexCheck,
    ToolCallsCheck,
)
from caseforge.grade.base import Verdict, failed, grader, passed, show
from caseforge.values import item_key, same


@lru_cache(maxsize=4096)
def _phrase(value: str) -> re.Pattern[str]:
    # Not inside a longer ASCII word or number: "3:conflict" is not in "13:conflict",
    # "refund" not in "get_refund_policy"; CJK has no such boundary ("結帳頁效能" is in
    # "結帳頁效能問題").
    return re.compile(r"(?<![0-9A-Za-z_])" + re.escape(value) + r"(?![0-9A-Za-z_])")


def _contains(container: Any, value: Any) -> bool:
    """Text: substring. List: an equal item, or a text item holding the value as a phrase."""
    if isinstance(container, str):
        return str(value) in container
    if isinstance(container, list | tuple | set):
        for item in container:
            if same(value, item):
                return True
            if isinstance(value, str) and isinstance(item, str) and _phrase(value).search(item):
                return True
        return False
    if isinstance(container, dict):
        return value in container
    return False


@grader("exact")
class ExactGrader:
    def grade(self, check: ExactCheck, actual: Any) -> Verdict:
        if same(check.value, actual):
            return passed()
        return failed(f"expected {show(check.value)}, got {show(actual)}")


@grader("exact_set")
class ExactSetGrader:
    def grade(self, check: ExactSetCheck, actual: Any) -> Verdict:
        if not isinstance(actual, list | tuple | set):
            return failed(f"expected a list, got {show(actual)}")
        want = {item_key(v): v for v in check.values}
        got = {item_key(v): v for v in actual}
        if want.keys() == got.keys():
            return passed()

        def listed(items: dict[str, Any], keys: set[str]) -> str:
            return ", ".join(
                v if isinstance(v, str) else show(v) for v in (items[k] for k in sorted(keys))
            )

        parts = []
        if want.keys() - got.keys():
            parts.append(f"missing {listed(want, want.keys() - got.keys())}")
        if got.keys() - want.keys():
            parts.append(f"unexpected {listed(got, got.keys() - want.keys())}")
        return failed("; ".join(parts))


@grader("must_include")
class MustIncludeGrader:
    def grade(self, check: MustIncludeCheck, actual: Any) -> Verdict:
        if actual is None:
            return failed("the field is empty")
        missing = [v for v in check.values if not _contains(actual, v)]
        if missing:
            return failed(f"does not include {show(missing)}")
        return passed()


@grader("must_not_include")
class MustNotIncludeGrader:
    def grade(self, check: MustNotIncludeCheck, actual: Any) -> Verdict:
        if actual is None:
            return passed()
        found = [v for v in check.values if _contains(actual, v)]
        if found:
            return failed(f"includes {show(found)}")
        return passed()


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@grader("regex")
class RegexGrader:
    def grade(self, check: RegexCheck, actual: Any) -> Verdict:
        if actual is None:
            return failed("the field is empty")
        text = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
        if _compiled(check.value).search(text):
            return passed()
        return failed(f"{show(text)} does not match /{check.value}/")


@grader("number")
class NumberGrader:
    def grade(self, check: NumberCheck, actual: Any) -> Verdict:
        try:
            number = float(actual)
        except (TypeError, ValueError):
            return failed(f"not a number: {show(actual)}")
        if isinstance(actual, bool) or math.isnan(number):
            return failed(f"not a number: {show(actual)}")
        diff = abs(number - check.value)
        if diff <= check.tolerance + 1e-12:
            return passed()
        return failed(
            f"{number:g} is {diff:g} from {check.value:g} (tolerance {check.tolerance:g})"
        )


def outcome_matches(expected: Any, actual: Any) -> bool:
    """Outcome equality; in an expected mapping, ``alt_<key>s`` lists accepted alternatives
    for ``<key>`` (e.g. ``alt_invoice_ids`` for ``invoice_id``) and is not compared itself."""
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return same(expected, actual)
    alternatives: dict[str, list[Any]] = {}
    plain: dict[str, Any] = {}
    for key, value in expected.items():
        if key.startswith("alt_") and key.endswith("s") and isinstance(value, list):
            alternatives[key[4:-1]] = value
        else:
            plain[key] = value
    if plain.keys() != actual.keys():
        return False
    for key, value in plain.items():
        options = [value, *alternatives.get(key, [])]
        if not any(same(option, actual[key]) for option in options):
            return False
    return True


@grader("outcome")
class OutcomeGrader:
    def grade(self, check: OutcomeCheck, actual: Any) -> Verdict:
        if outcome_matches(check.value, actual):
            return passed()
        return failed(f"the run left {show(actual)}, expected {show(check.value)}")


@grader("tool_calls")
class ToolCallsGrader:
    def grade(self, check: ToolCallsCheck, actual: Any) -> Verdict:
        names: list[str] = list(actual or [])
        problems = []
        missing = [n for n in check.must_call if n not in names]
        if missing:
            problems.append(f"not called: {', '.join(missing)}")
        forbidden = [n for n in check.must_not_call if n in names]
        if forbidden:
            problems.append(f"called but forbidden: {', '.join(forbidden)}")
        if check.order and not _in_order(names, check.order):
            problems.append(f"not in order {' -> '.join(check.order)} (calls: {', '.join(names)})")
        return failed("; ".join(problems)) if problems else passed()


def _in_order(calls: list[str], order: list[str]) -> bool:
    """``order`` appears in ``calls`` as a subsequence."""
    position = 0
    for name in calls:
        if position < len(order) and name == order[position]:
            position += 1
    return position == len(order)
