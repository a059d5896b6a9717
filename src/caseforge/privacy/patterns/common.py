"""What every kind of pattern is written with: the rows of the table and their gates, the
ASCII look-arounds, and the context window that the checks after matching read.

A row is ``(class, name, regex, base score, gate)``. The gate is a cheap test a chunk must pass
before the regex is tried (``contains("@")``, ``any_digit``), or instead ``At(regex)``: try the
pattern only where that cheap regex matches, or ``After(words)``: only where one of these words
starts (found for every such pattern at once by one Aho–Corasick pass).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

L = r"(?<![0-9A-Za-z])"  # no ASCII letter or digit just before
R = r"(?![0-9A-Za-z])"  # no ASCII letter or digit just after
VI_LETTER = r"[A-Za-zÀ-ỹ]"
HAN_CHARS = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CN_DIGIT = "〇零一二两兩三四五六七八九"


class Match(Protocol):
    """What the scanner uses of a match of a compiled ``regex`` pattern."""

    def group(self, group: str, /) -> str | None: ...

    def start(self, group: str | int = 0, /) -> int: ...

    def end(self, group: str | int = 0, /) -> int: ...

    def span(self, group: str | int = 0, /) -> tuple[int, int]: ...


class Regex(Protocol):
    """What the scanner uses of a pattern compiled with ``regex.compile``."""

    @property
    def groupindex(self) -> Mapping[str, int]: ...

    def finditer(self, string: str, /) -> Iterator[Match]: ...

    def match(self, string: str, pos: int = 0, /) -> Match | None: ...


class KeywordAutomaton(Protocol):
    """The ``ahocorasick.Automaton`` of the ``After`` words: ``iter`` yields
    ``(end index, (word length, pattern indices))``."""

    def add_word(self, word: str, value: tuple[int, tuple[int, ...]], /) -> bool: ...

    def make_automaton(self) -> None: ...

    def iter(self, text: str, /) -> Iterator[tuple[int, tuple[int, tuple[int, ...]]]]: ...


@dataclass(frozen=True)
class Pattern:
    """One pattern: the class it finds, its name, its compiled regex and base score, and a
    cheap test a chunk must pass before the regex is tried."""

    cls: str
    name: str
    regex: Regex
    score: float
    gate: Callable[[str], bool]
    anchor: Regex | None = None  # a cheap regex: the pattern is tried only where it matches
    words: tuple[str, ...] = ()  # or: the pattern is tried only where one of these words is


@dataclass(frozen=True)
class At:
    """In the table, instead of a gate: try the pattern only where this cheap regex matches
    (the start of a run of digits of the right length), not at every position."""

    keywords: str


@dataclass(frozen=True)
class After:
    """In the table, instead of a gate: the pattern starts with one of these words (lower
    case); it is tried only where one is, found for all such patterns at once by one
    Aho–Corasick pass over the lower-cased chunk."""

    words: tuple[str, ...]


Row: TypeAlias = tuple[str, str, str, float, Callable[[str], bool] | At | After]
Check: TypeAlias = Callable[[Pattern, str, int, int, "Match | None"], "float | None"]
"""A kind's checks after matching: ``(pattern, text, start, end, match) -> score or None``."""


def any_word(words: Sequence[str]) -> str:
    """A regex of any of ``words``, any case, the longest first (``order no`` before
    ``order``): what a row after its word opens with."""
    return r"(?i:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")"


def contains(*needles: str) -> Callable[[str], bool]:
    return lambda text: any(n in text for n in needles)


_DIGIT = re.compile(r"[0-9]")
_UPPER_RUN = re.compile(r"[A-Z][A-Z0-9]")


def any_digit(text: str) -> bool:
    return _DIGIT.search(text) is not None


def upper_run(text: str) -> bool:
    return _UPPER_RUN.search(text) is not None


def always(text: str) -> bool:
    return True


def split_words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_CONTEXT_BEFORE = 48
_CONTEXT_AFTER = 24


def window(text: str, start: int, end: int) -> str:
    """The text around a match on the same line, lower-cased, the match itself left out."""
    before = text[max(0, start - _CONTEXT_BEFORE) : start]
    after = text[end : end + _CONTEXT_AFTER]
    before = before.rsplit("\n", 1)[-1]
    after = after.split("\n", 1)[0]
    return f"{before} \x00 {after}".lower()


def has_context(text: str, start: int, end: int, words: Sequence[str]) -> bool:
    around = window(text, start, end)
    return any(word in around for word in words)


def has_word(text: str, start: int, end: int, words: Sequence[str]) -> bool:
    """A context word standing as a word (``pr`` is not in ``prices``)."""
    around = window(text, start, end)
    return any(
        re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", around) if w.isascii() else w in around
        for w in words
    )
