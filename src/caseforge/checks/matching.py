"""How the built-in modes compare values: phrases in text and lists, outcomes, and call
order."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from caseforge.values import same

if TYPE_CHECKING:
    from caseforge.checks.text import TextOptions


@lru_cache(maxsize=4096)
def _phrase(value: str) -> re.Pattern[str]:
    # Not inside a longer ASCII word or number: "3:conflict" is not in "13:conflict",
    # "refund" not in "get_refund_policy"; CJK has no such boundary ("結帳頁效能" is in
    # "結帳頁效能問題").
    return re.compile(r"(?<![0-9A-Za-z_])" + re.escape(value) + r"(?![0-9A-Za-z_])")


def contains(container: object, value: object, text: TextOptions | None = None) -> bool:
    """Text: substring. List: an equal item, or a text item holding the value as a phrase.
    ``text`` options, when not the defaults, apply to every comparison of two texts."""
    if text is not None and not text.literal:
        if isinstance(container, str):
            return text.text_contains(container, str(value))
        if isinstance(container, list | tuple | set):
            for item in container:
                if same(value, item):
                    return True
                if isinstance(value, str) and isinstance(item, str):
                    mine, theirs = text.prepared(value), text.prepared(item)
                    if mine == theirs or _phrase(mine).search(theirs):
                        return True
            return False
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


@lru_cache(maxsize=1024)
def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def outcome_matches(expected: object, actual: object) -> bool:
    """Outcome equality (:func:`caseforge.values.same`): mappings key by key, numbers as
    numbers. Alternatives are a check's ``any_of``, never keys of the value."""
    return same(expected, actual)
