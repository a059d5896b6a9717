"""The identifier patterns the scanner runs, and the checks applied after a pattern matches.

Patterns run on ``fold.WIDTH``-folded text (NFKC: full-width digits and letters are ASCII;
zero-width characters gone), so one pattern covers every width. Every pattern is wrapped in
ASCII look-arounds (``(?<![0-9A-Za-z])…(?![0-9A-Za-z])``) rather than ``\\b``, because CJK
characters count as word characters and ``\\b`` fails between ``到`` and ``alice@…``.
Patterns are case-sensitive unless a part of them says ``(?i:…)``. A pattern with a group
named ``v`` reports only that group (``LINE ID: (v)``).

Checks after matching keep false alarms down on clean text: checksums for national and
business ids (python-stdnum, and the Taiwanese id's letter table), calendar validity for
dates, context words for short SHAs, IPs outside private ranges, bare host names and hash
numbers, and stop lists for standard codes (``NOT_FOUND``, ``UTF-8``, ``Q4-2026``), ranks,
counts and library names (``socket.io``).

Each kind of identifier has its module, with its patterns and its checks: ``codes`` (commit
SHAs, branches, error codes, ticket keys, project codes), ``money``, ``dates``, ``hosts``
(e-mails, URLs, host names, IPs), ``contact`` (messaging ids, handles, channels, phones) and
``ids`` (national and business ids), ``secrets`` (passwords, API keys, tokens, coupon codes),
``addresses`` (street addresses, postcodes), ``references`` (order, tracking, account …
numbers named by their word);
``common`` holds what they are written with. This module
puts them together in one table, in a fixed order: the order of the classes in it is the
order ``identifiers.CLASSES`` lists them in and breaks ties between overlapping matches.
"""

from __future__ import annotations

import functools

import regex

from caseforge.privacy.patterns import (
    addresses,
    codes,
    contact,
    dates,
    hosts,
    ids,
    money,
    references,
    secrets,
)
from caseforge.privacy.patterns.codes import ERROR_CONTEXT, SHA_CONTEXT, STANDARD_CODES, TICKET_STOP
from caseforge.privacy.patterns.common import (
    After,
    At,
    Check,
    KeywordAutomaton,
    Match,
    Pattern,
    Regex,
    Row,
    always,
    has_context,
    window,
)
from caseforge.privacy.patterns.dates import (
    MONTHS_EN,
    WEEKDAY_AFTER,
    WEEKDAY_BEFORE,
    WEEKDAY_LEAD,
    valid_date,
    weekday_before,
    with_weekday,
)
from caseforge.privacy.patterns.hosts import PUBLIC_HOSTS
from caseforge.privacy.patterns.ids import tw_national_id_valid
from caseforge.privacy.patterns.money import NUMBER

__all__ = [
    "CLASSES_FOUND",
    "ERROR_CONTEXT",
    "MONTHS_EN",
    "NUMBER",
    "PUBLIC_HOSTS",
    "SHA_CONTEXT",
    "STANDARD_CODES",
    "TICKET_STOP",
    "WEEKDAY_AFTER",
    "WEEKDAY_BEFORE",
    "WEEKDAY_LEAD",
    "KeywordAutomaton",
    "Match",
    "Pattern",
    "Regex",
    "check",
    "has_context",
    "keyword_automaton",
    "keyword_starts",
    "patterns",
    "tw_national_id_valid",
    "valid_date",
    "weekday_before",
    "window",
    "with_weekday",
]

# Each kind's rows with its checks, in the table's order (see the module's docstring).
_KINDS: tuple[tuple[tuple[Row, ...], Check], ...] = (
    (codes.TABLE, codes.check),
    (money.TABLE, money.check),
    (dates.TABLE, dates.check),
    (hosts.TABLE, hosts.check),
    (contact.CHATS, contact.check),
    (ids.TABLE, ids.check),
    (codes.PROJECT_CODES, codes.check),
    (contact.PHONES, contact.check),
    (secrets.TABLE, secrets.check),
    (addresses.TABLE, addresses.check),
    (references.TABLE, references.check),
)
# (class, name, regex, base score, gate or anchor). Scores below 0.5 need a context word.
_TABLE: tuple[Row, ...] = tuple(row for rows, _ in _KINDS for row in rows)
_CHECKS: dict[str, Check] = {row[0]: check for rows, check in _KINDS for row in rows}

_FLAGS = regex.DOTALL | regex.MULTILINE
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


@functools.cache
def patterns() -> tuple[Pattern, ...]:
    """The compiled pattern table."""
    out = []
    for cls, name, rx, score, gate in _TABLE:
        compiled = regex.compile(rx, _FLAGS)
        if isinstance(gate, At):
            out.append(
                Pattern(cls, name, compiled, score, always, regex.compile(gate.keywords, _FLAGS))
            )
        elif isinstance(gate, After):
            out.append(Pattern(cls, name, compiled, score, always, words=gate.words))
        else:
            out.append(Pattern(cls, name, compiled, score, gate))
    return tuple(out)


CLASSES_FOUND: tuple[str, ...] = tuple(dict.fromkeys(cls for cls, *_ in _TABLE))


@functools.cache
def keyword_automaton() -> KeywordAutomaton:
    """One Aho–Corasick automaton of every ``After`` word: ``word → [pattern index]``."""
    import ahocorasick

    automaton: KeywordAutomaton = ahocorasick.Automaton()
    by_word: dict[str, list[int]] = {}
    for index, pattern in enumerate(patterns()):
        for word in pattern.words:
            by_word.setdefault(word, []).append(index)
    for word, indices in by_word.items():
        automaton.add_word(word, (len(word), tuple(indices)))
    automaton.make_automaton()
    return automaton


def keyword_starts(text: str) -> dict[int, list[int]]:
    """``{pattern index: sorted start positions}`` of the ``After`` words in ``text``."""
    starts: dict[int, set[int]] = {}
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer (İ): ASCII only
        lowered = text.translate(_ASCII_LOWER)
    for end, (size, indices) in keyword_automaton().iter(lowered):
        for index in indices:
            starts.setdefault(index, set()).add(end - size + 1)
    return {index: sorted(positions) for index, positions in starts.items()}


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """Checks after matching; the score to keep the match with, or ``None`` to drop it."""
    checks = _CHECKS.get(pattern.cls)
    return pattern.score if checks is None else checks(pattern, text, start, end, match)
