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
  digits of an account), or
- a number the variant writes alone is a digit group of an original id or phone number of
  ``MIN_GROUP`` digits or more (``4172``, the last group of ``188-50-0336-4172``; ``88317`` of
  ``YF-ORD-2605-88317``; a year is no group), or an IPv4 address of the variant is in the
  same /24 network as one of the original's (``10.24.3.0/24`` of ``10.24.3.17``; the home
  networks every router ships with excepted).

An id written in short groups with spaces (a plate ``LK19 XPZ``, a postcode ``HG2 8PL``) is
one token, and a phone number also has a skeleton without its trunk ``0`` and, written with
its country code, one without it (``0977 485 120`` is in ``+84977485120``).

Numbers as amounts are ``values``' business; a skeleton is about the string.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from caseforge.privacy.fold import FULL, WIDTH, phone_forms, squashed
from caseforge.privacy.values import phone_spans

MIN_SKELETON = 5  # characters of an id skeleton before it is distinctive
MIN_DIGITS = 6  # digits alone that make an id (an account, a tracking number)
MIN_PART = 5  # characters of a variant's id-like token to compare with an original's
MIN_GROUP = 4  # digits of an id's group that a variant writing it alone leaks

# letters and digits joined by separators (not spaces), or digit groups joined by one space
_ID = re.compile(r"[0-9]+(?: [0-9]+)+(?![0-9A-Za-z])|[0-9A-Za-z]+(?:[-_./#:][0-9A-Za-z]+)*")
# capitals and digits in short groups joined by one space, each group with a letter and one
# mixing both: a plate (LK19 XPZ), a postcode (HG2 8PL, SW1A 1AA); not Q3 2026
_SPACED_ID = re.compile(r"(?<![\w-])[A-Z0-9]{2,5}(?: [A-Z0-9]{2,5})+(?![\w-])")
_IPV4 = re.compile(r"(?<![\w.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?(?![\w]|\.\d)")
# the /24 networks home routers and defaults use: no ticket's own
_COMMON_NETS = frozenset(
    {"192.168.0", "192.168.1", "192.168.2", "10.0.0", "10.0.1", "127.0.0", "172.16.0", "0.0.0"}
)
_ALONE = re.compile(r"(?<![\w.,/-])[0-9]+(?![\w]|[.,/-][0-9])")


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
    """The skeletons of every id-like token of ``text``, and of its phone numbers in their
    other spellings."""
    width = WIDTH(text)
    out = {bones for m in _ID.finditer(width) if (bones := _id_like(m.group()))}
    for match in _SPACED_ID.finditer(width):
        groups = match.group().split()
        if all(any(c.isalpha() for c in g) for g in groups) and any(
            any(c.isdigit() for c in g) for g in groups
        ):
            out.add(skeleton(match.group()))
    for start, end in phone_spans(width):
        out.update(form for form in phone_forms(width[start:end]) if len(form) >= MIN_DIGITS)
    return out


def _network(match: re.Match[str]) -> str | None:
    octets = match.groups()[:3]
    if any(int(o) > 255 for o in octets):
        return None
    net = ".".join(str(int(o)) for o in octets)
    return None if net in _COMMON_NETS else net


def parts(text: str) -> set[str]:
    """What a variant leaks by writing it alone: every digit group of ``MIN_GROUP`` digits
    or more of an id-like token of ``text``, the last of a phone number (its area's or
    carrier's code is many numbers'), and the last four to six digits of a phone number or
    an all-digit id, but no year; and the /24
    network of each of its IPv4 addresses (as ``net:10.24.3``)."""
    width = WIDTH(text)
    out: set[str] = set()
    phones = [width[start:end] for start, end in phone_spans(width)]
    groups = [
        g
        for m in _ID.finditer(width)
        if _id_like(m.group()) and m.group() not in phones
        for g in re.findall(r"[0-9]+", m.group())
    ]
    groups += [re.findall(r"[0-9]+", phone)[-1] for phone in phones]  # not its area's code
    # the last four to six digits of a phone or an account, however it is grouped: "ending
    # 55839" of 2047 5583 9, "đuôi 1238" of a phone
    digits = [re.sub(r"[^0-9]", "", t) for t in phones]
    digits += [b for m in _ID.finditer(width) if (b := _id_like(m.group())) and b.isdigit()]
    groups += [d[-n:] for d in digits for n in (4, 5, 6) if len(d) > n]
    for group in groups:
        if len(group) >= MIN_GROUP and not (len(group) == 4 and 1900 <= int(group) <= 2100):
            out.add(group)
    for match in _IPV4.finditer(width):
        if match.group(4) is not None and (net := _network(match)):
            out.add("net:" + net)
    return out


def leaks(original: Iterable[str], text: str, groups: Collection[str] = ()) -> bool:
    """Whether ``text`` holds one of the ``original`` skeletons, whole or in part, or one
    of its ``parts`` (``groups``) alone."""
    return found(original, text, groups) is not None


def found(original: Iterable[str], text: str, groups: Collection[str] = ()) -> str | None:
    """The first of the ``original`` skeletons ``text`` holds, whole or in part, or of its
    ``parts`` (``groups``) it writes alone, or None."""
    if groups:
        width = WIDTH(text)
        for match in _ALONE.finditer(width):
            if match.group() in groups:
                return match.group()
        for match in _IPV4.finditer(width):
            if (net := _network(match)) and "net:" + net in groups:
                return "net:" + net
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
