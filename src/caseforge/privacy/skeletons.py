"""Id skeletons: an identifier however it is spaced, separated, cased or cut short.

Every token of the original that mixes letters and digits, or is ``MIN_DIGITS`` digits or
more (an account, a tracking number, digit groups joined by single spaces), is reduced to
its skeleton: case-folded, full width folded, separators and spaces removed
(``HT-2024-SZ-0318`` → ``ht2024sz0318``). Whether the scanner has a class for it does not
matter. A variant leaks an id when

- an original skeleton is in the variant's text written without separators
  (``HT 2024 SZ 0318``, ``ht2024sz0318``), or
- one of the variant's own id-like tokens, of ``MIN_PART`` characters or more with a digit,
  is part of an original skeleton (``HT-2024`` or ``SZ-0318`` cut from it, the last six
  digits of an account).

Numbers as amounts are ``values``' business; a skeleton is about the string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from caseforge.privacy.fold import FULL, WIDTH, squashed

MIN_SKELETON = 5  # characters of an id skeleton before it is distinctive
MIN_DIGITS = 6  # digits alone that make an id (an account, a tracking number)
MIN_PART = 5  # characters of a variant's id-like token to compare with an original's

# letters and digits joined by separators (not spaces), or digit groups joined by one space
_ID = re.compile(r"[0-9]+(?: [0-9]+)+(?![0-9A-Za-z])|[0-9A-Za-z]+(?:[-_./#:][0-9A-Za-z]+)*")


def skeleton(token: str) -> str:
    """A token without its separators and spaces, case-folded, full width folded."""
    return "".join(ch for ch in FULL(token) if ch.isalnum())


_NUMBER_OR_DATE = re.compile(
    r"[0-9]+(?:[.,][0-9]+)+"  # 2.300.000, 1,280.50: a number, compared by value
    r"|[0-9]{4}[-/.][0-9]{1,2}[-/.][0-9]{1,2}|[0-9]{1,2}[-/.][0-9]{1,2}[-/.][0-9]{2,4}"  # a date
    r"|[0-9]{4}[-/][0-9]{1,2}"
)


def _id_like(token: str) -> str | None:
    """The skeleton of an id-like token, or None for a word, a number or a date."""
    if _NUMBER_OR_DATE.fullmatch(token):
        return None
    bones = skeleton(token)
    digits = sum(ch.isdigit() for ch in bones)
    if not digits:
        return None
    if digits < len(bones) and len(bones) >= MIN_SKELETON:
        return bones
    if digits == len(bones) and digits >= MIN_DIGITS:
        return bones
    return None


def skeletons(text: str) -> set[str]:
    """The skeletons of every id-like token of ``text``."""
    return {bones for m in _ID.finditer(WIDTH(text)) if (bones := _id_like(m.group()))}


def leaks(original: Iterable[str], text: str) -> bool:
    """Whether ``text`` holds one of the ``original`` skeletons, whole or in part."""
    return found(original, text) is not None


def found(original: Iterable[str], text: str) -> str | None:
    """The first of the ``original`` skeletons ``text`` holds, whole or in part, or None."""
    bones = [b for b in original if b]
    if not bones:
        return None
    flat = squashed(text)
    for b in bones:
        if b in flat:
            return b
    for match in _ID.finditer(WIDTH(text)):
        if _NUMBER_OR_DATE.fullmatch(match.group()):
            continue
        part = skeleton(match.group())
        if len(part) < MIN_PART or not any(ch.isdigit() for ch in part):
            continue
        if part.isdigit() and len(part) < MIN_DIGITS:
            continue  # a short number is values' to compare, by value
        for b in bones:
            if part in b:
                return b
    return None
