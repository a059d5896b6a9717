"""Leaks of private data into the repository, and the lint that runs without the store.

With the suite's private store, everything it knows is searched for in every file git would
publish from the repository and in its whole history (``sources``), with the folds of the
overlap check (``privacy.overlap``): glossary entries and recorded originals in every width,
case, script and spelling (``林 佩萱``, ``陈佩萱``, ``Lin Pei-Hsuan``), amounts and dates by value
(``1,280,000`` = ``128萬``), and runs of text of the sensitive source cases the store keeps.
A finding names the class, ``file:line`` and a short HMAC of the original keyed by the
store's secret — never the original, and never a plain hash of it, which a two-character
name would give away by enumeration.

Cases marked ``provenance: {fictional_original: true}`` (an example written to look like an
original, as the shipped ``ac-conflict-001``) are not private: their file is not searched
and what only they contribute to the store is not searched for.

The lint needs no store, and always runs on the suites' data files (cases, fixtures, labels,
``retired.yaml``): redaction marks (``privacy.policy``), 40-hex commit SHAs, e-mail addresses
on domains that are not reserved, and identifiers of the classes that never belong in a
committed case unless it was re-synthesised (national and business ids, messaging ids,
phones, IPs outside the documentation ranges). Templates, workflows and code may hold
``{{…}}`` or ``${…}`` and are not linted.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import hmac
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from caseforge.decoding import Text, Unreadable
from caseforge.privacy import distinct
from caseforge.privacy.fold import (
    FULL,
    is_separator,
    leet_readings,
    marks_agree,
    other_vietnamese_spelling,
    pinyin,
)
from caseforge.privacy.overlap import (
    LONG_RUNS,
    Settings,
    SoundAlikes,
    email_users,
    homophone_names,
    run_units,
    term_in,
)
from caseforge.privacy.patterns.addresses import address_parts
from caseforge.privacy.policy import (
    is_documentation_ip,
    is_fictional_phone,
    is_reserved_domain,
    redaction_marks,
)
from caseforge.privacy.skeletons import found as skeleton_found
from caseforge.privacy.skeletons import parts as id_parts
from caseforge.privacy.skeletons import skeletons
from caseforge.privacy.values import (
    Dates,
    dates,
    is_distinctive,
    numbers,
    numbers_outside,
    phone_spans,
    prepare,
)

if TYPE_CHECKING:
    from caseforge.privacy.identifiers import Span


def _leet_line(line: str) -> str:
    readings = leet_readings(line)
    return readings[0] if readings else line


# A word that mixes letters and digits, which may spell a name with digits for letters.
_MIXED_WORD = re.compile(r"[A-Za-z0-9@]*[A-Za-z][A-Za-z0-9@]*")
# Three Han characters in a row: a line that may name someone by the sound of their name.
_HAN3 = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{3}")
# A line worth reading for values: a digit, a Chinese numeral, a number word.
# a line that may hold a name respelled: two capitalised words, or a Han character
_NAME_PAIR_OR_HAN = re.compile(r"\b[A-Z][^\W\d_]+ [A-Z]|[\u4e00-\u9fff]")
_MAY_HOLD_VALUES = re.compile(
    r"[0-9０-９〇零一二两兩三四五六七八九十百千萬万億亿壹贰貳叁參肆伍陆陸柒捌玖拾佰仟]"
    r"|(?i:\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty"
    r"|hundred|thousand|million|triệu|nghìn|ngàn|trăm|mươi|mười)\b)"
)

DATA_PARTS = ("cases", "fixtures", "labels")
DATA_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
SHA40 = re.compile(r"(?<![0-9a-fA-F])[0-9a-f]{40}(?![0-9a-fA-F])")
LINT_CLASSES = frozenset({"national_id", "business_id", "messaging_id", "phone", "ip", "email"})


@dataclass(frozen=True)
class Leak:
    """One finding: where, what kind, which class, and a tag that names no original."""

    origin: str
    line: int
    col: int
    kind: str
    cls: str
    tag: str = ""

    def format(self) -> str:
        tag = f" #{self.tag}" if self.tag else ""
        return f"{self.origin}:{self.line}:{self.col}: {self.kind} ({self.cls}{tag})"

    def to_json(self) -> dict[str, str | int]:
        return self.__dict__.copy()


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _squashed(text: str) -> str:
    return "".join(ch for ch in FULL(text) if not is_separator(ch))


@dataclass
class PrivateData:
    """What the audit searches for, built from the private store."""

    terms: list[tuple[str, str]]  # (class, original)
    source_texts: list[str] = field(default_factory=list)  # sensitive cases' content
    secret: bytes = b""
    # each source text's clock (its case's ``clock``): what its 下週五 and "next Tue" mean
    clocks: list[dt.date | None] = field(default_factory=list)

    def tag(self, cls: str, original: str) -> str:
        message = f"{cls}\0{_squashed(original)}".encode()
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()[:8]


class Matcher:
    """Finds the private data in a text, in every fold."""

    def __init__(self, data: PrivateData, settings: Settings | None = None) -> None:
        from caseforge.privacy.identifiers import (
            CLASSES,
            Glossary,
            TermFinder,
        )

        self.data = data
        self.settings = settings or Settings()
        by_class: dict[str, list[str]] = {}
        self.short_terms = 0
        # the names verify finds without a glossary are searched for the same way
        found = [
            ("project" if cls == "distinctive" else cls, term)
            for text in data.source_texts
            for cls, term in distinct.name_terms(text)
        ]
        found += [("phone", t[a:b]) for t in data.source_texts for a, b in phone_spans(t)]
        found += [("project", user) for t in data.source_texts for user in email_users(t)]
        found += [
            (cls, other)
            for cls, term in data.terms
            if cls == "person" and (other := other_vietnamese_spelling(term)) != term
        ]
        # an address's road, street, building, postcode and town alone, as verify reads them
        found += [
            ("address", part)
            for cls, term in data.terms
            if cls == "address"
            for part in address_parts(term)
            if term_in("address", term, part)
        ]
        for cls, original in [*data.terms, *found]:
            if len(_squashed(original)) < 2:  # one character would be found everywhere
                self.short_terms += 1
                continue
            if cls not in ("money", "date"):
                # a class this caseforge does not know (an older mapping): searched all the same
                by_class.setdefault(cls if cls in CLASSES else "project", []).append(original)
        self._finder = TermFinder(Glossary.from_mapping(by_class))
        self._originals = {_squashed(o): (c, o) for c, o in data.terms}
        # a Han name of three characters or more by its sound, in other characters (溫佳豪 for
        # 温家豪): the Pinyin of each line that may hold one, as verify reads a variant
        self._sounds: dict[str, tuple[str, str]] = {}
        # a name respelled (Markus Belle for Marcus Bell, 钟垒 for 钟磊), as verify reads it
        self._alikes = SoundAlikes.of(
            [*data.terms, *[("distinctive" if c == "project" else c, t) for c, t in found]]
        )
        for cls, term in [*data.terms, *found]:
            for name in homophone_names([(cls, term)]):
                self._sounds.setdefault(
                    " " + " ".join(name) + " ", self._originals.get(_squashed(term), (cls, term))
                )
        self._amounts: dict[float, tuple[str, str]] = {}
        self._days: dict[dt.date, tuple[str, str]] = {}
        self._month_days: dict[tuple[int, int], tuple[str, str]] = {}
        self._partial: dict[tuple[int, int], tuple[str, str]] = {}  # written without a year
        for cls, original in data.terms:
            if cls == "money":
                for value in numbers(prepare(original)):
                    if value.value >= 10:
                        self._amounts[round(value.value, 6)] = (cls, original)
            elif cls == "date":
                self._add_days(dates(prepare(original)), original)
        # what the sensitive cases hold beyond what the scanner named: every amount and date
        # by value, every id by its skeleton (verify's comparison, run over the repository)
        self._skeletons: dict[str, str] = {}
        self._parts: set[str] = set()
        self._seen: dict[str, list[tuple[tuple[str, str], int]]] = {}
        self._confirmed: dict[tuple[str, str, str], bool] = {}
        clocks = [*data.clocks, *[None] * (len(data.source_texts) - len(data.clocks))]
        for text, clock in zip(data.source_texts, clocks, strict=True):
            prepared = prepare(text)
            found_dates = dates(prepared, clock)
            for value in numbers_outside(prepared, found_dates):
                if is_distinctive(value):
                    key = round(value.value, 6)
                    self._amounts.setdefault(key, ("money", prepared[value.start : value.end]))
            self._add_days(found_dates, text)
            for bones in skeletons(text):
                self._skeletons.setdefault(bones, bones)
            self._parts |= id_parts(text)
        # runs as verify counts them: those holding an uncommon word, and long passages
        self._cjk: set[str] = set()
        self._words: set[tuple[str, ...]] = set()
        self._long_cjk: set[str] = set()
        self._long_words: set[tuple[str, ...]] = set()
        self._any_cjk: set[str] = set()  # every run of the usual length: a line sharing none
        self._any_words: set[tuple[str, ...]] = set()  # shares no long one either
        for text in data.source_texts:
            cjk, words = run_units(text, self.settings)
            self._any_cjk |= cjk
            self._any_words |= words
            self._cjk |= {run for run in cjk if distinct.rare_han_run(run)}
            self._words |= {run for run in words if distinct.rare_word_run(run)}
            cjk, words = run_units(text, LONG_RUNS)
            self._long_cjk |= cjk
            self._long_words |= words

    def find(self, item: Text) -> list[Leak]:
        text = item.text
        out: list[Leak] = []
        terms = self._finder.find(text)
        terms += self._leet_terms(text)
        lines = text.split("\n")
        for span, term in terms:
            if not marks_agree(span.text, term):
                continue  # tuần (week) is not Tuấn, lần (time) is not Lan
            cls, original = self._originals.get(_squashed(term), (span.cls, term))
            line_text = lines[text.count("\n", 0, span.start)]
            if not self._verified(cls, original, line_text):
                continue  # as verify reads it, the line does not hold the name (anh Tuấn)
            line, col = _position(text, span.start)
            out.append(
                Leak(item.origin, line, col, "private string", cls, self.data.tag(cls, original))
            )
        if self._sounds:
            out.extend(self._homophones(item))
        if self._alikes.han or self._alikes.latin:
            out.extend(self._respelled(item))
        for index, row in enumerate(text.split("\n")):
            if not _MAY_HOLD_VALUES.search(row):
                continue
            hits = self._seen.get(row)
            if hits is None:  # the history repeats a line in every version of its file
                hits = list(self._values_in(row))
                if len(self._seen) < 500_000:
                    self._seen[row] = hits
            for hit, col in hits:
                out.append(
                    Leak(item.origin, index + 1, col, "private value", hit[0], self.data.tag(*hit))
                )
        if self._cjk or self._words or self._long_cjk or self._long_words:
            out.extend(self._runs(item))
        return out

    def _homophones(self, item: Text) -> Iterator[Leak]:
        for index, row in enumerate(item.text.split("\n")):
            if not _HAN3.search(row):
                continue
            sounds = " " + " ".join(pinyin(FULL(row))) + " "
            for name, (cls, original) in self._sounds.items():
                if name in sounds:  # tagged as the name itself: one person, one tag
                    tag = self.data.tag(cls, original)
                    yield Leak(item.origin, index + 1, 1, "private string", cls, tag)
                    break

    def _respelled(self, item: Text) -> Iterator[Leak]:
        for index, row in enumerate(item.text.split("\n")):
            term = self._alikes.found(row) if _NAME_PAIR_OR_HAN.search(row) else None
            if term is not None:
                cls, original = self._originals.get(_squashed(term), ("person", term))
                yield Leak(
                    item.origin, index + 1, 1, "private string", cls, self.data.tag(cls, original)
                )

    def _add_days(self, found: Dates, original: str) -> None:
        for day in found.full:
            self._days.setdefault(day, ("date", original))
            self._month_days.setdefault((day.month, day.day), ("date", original))
        for month_day in found.partial:
            self._month_days.setdefault(month_day, ("date", original))
            self._partial.setdefault(month_day, ("date", original))

    def _values_in(self, line: str) -> Iterator[tuple[tuple[str, str], int]]:
        """``((class, original), column)`` for each amount, day or id of a sensitive case that
        ``line`` holds, in any notation: 23,000 for 二萬三千, 3/20 for 3月20号, PO774410."""
        prepared = prepare(line)
        col = 1
        found = dates(prepared)
        for value in numbers_outside(prepared, found):
            hit = self._amounts.get(round(value.value, 6))
            if hit is not None and (value.amount or is_distinctive(value)):
                yield hit, min(value.start, len(line) - 1) + 1
        for day in found.full:
            if day in self._days:
                yield self._days[day], col
            elif (day.month, day.day) in self._partial:  # 20 July, then 20/07/2026
                yield self._partial[(day.month, day.day)], col
        for month_day in found.partial:
            if month_day in self._month_days:
                yield self._month_days[month_day], col
        bones = skeleton_found(self._skeletons, line, self._parts)
        if bones is not None:
            yield ("identifier", bones), col

    def _verified(self, cls: str, original: str, line: str) -> bool:
        """The finder's candidate confirmed by verify's own reading of the line, for the
        names (so both agree: a title is not a name, Hoa the name is capitalised)."""
        if cls not in ("person", "handle", "organization", "channel", "messaging_id", "address"):
            return True
        key = (cls, original, line)
        found = self._confirmed.get(key)
        if found is None:
            found = term_in(cls, original, line) or term_in(cls, original, _leet_line(line))
            if len(self._confirmed) < 200_000:
                self._confirmed[key] = found
        return found

    def _leet_terms(self, text: str) -> list[tuple[Span, str]]:
        """Terms spelled with digits for letters (V4ntorra): only the words that mix them are
        read again, one per line, and each hit is put back where its word is."""
        words = [m for m in _MIXED_WORD.finditer(text) if not m.group().isalpha()]
        if not words:
            return []
        out: list[tuple[Span, str]] = []
        for reading in leet_readings("\n".join(m.group() for m in words)):
            starts = [0]
            for m in words[:-1]:
                starts.append(starts[-1] + len(m.group()) + 1)
            for span, term in self._finder.find(reading):
                index = bisect.bisect_right(starts, span.start) - 1
                shift = words[index].start() - starts[index]
                out.append((replace(span, start=span.start + shift, end=span.end + shift), term))
        return out

    def _shares_run(self, text: str) -> bool:
        cjk, words = run_units(text, self.settings)
        if cjk & self._cjk or words & self._words:
            return True
        if not (cjk & self._any_cjk or words & self._any_words):
            return False  # no run of the usual length in common: no long one either
        cjk, words = run_units(text, LONG_RUNS)
        return bool(cjk & self._long_cjk or words & self._long_words)

    def _runs(self, item: Text) -> Iterator[Leak]:
        """Lines sharing a run with a sensitive case (a run across a line break is reported on
        the line it starts on)."""
        lines = item.text.split("\n")
        hits = [self._shares_run(line) for line in lines]
        for index, line in enumerate(lines):
            crossing = (
                not hits[index]
                and index + 1 < len(lines)
                and not hits[index + 1]
                and self._shares_run(line + "\n" + lines[index + 1])
            )
            if hits[index] or crossing:
                yield Leak(item.origin, index + 1, 1, "original content", "run")


def search(
    texts: Iterable[Text | Unreadable], matcher: Matcher
) -> tuple[list[Leak], list[Unreadable]]:
    """Every leak in ``texts`` (once per place), and what could not be read."""
    leaks: list[Leak] = []
    seen: set[tuple[str, int, str, str]] = set()
    unreadable: list[Unreadable] = []
    for item in texts:
        if isinstance(item, Unreadable):
            unreadable.append(item)
            continue
        for leak in matcher.find(item):
            key = (leak.origin, leak.line, leak.cls, leak.tag)
            if key not in seen:
                seen.add(key)
                leaks.append(leak)
    return leaks, unreadable


# --- lint -------------------------------------------------------------------------------------


def is_data_file(relative: Path) -> bool:
    """A suite data file: under cases/, fixtures/ or labels/, or retired.yaml."""
    return relative.suffix in DATA_SUFFIXES and (
        any(part in DATA_PARTS for part in relative.parts) or relative.name == "retired.yaml"
    )


def lint_text(origin: str, text: str) -> list[Leak]:
    """The lint over one data file's text."""
    from caseforge.privacy.identifiers import IdentifierDetector

    leaks = []
    for match in SHA40.finditer(text):
        line, col = _position(text, match.start())
        leaks.append(Leak(origin, line, col, "looks like a real 40-hex commit", "commit_sha"))
    for mark in redaction_marks(text):
        line, col = _position(text, mark.start)
        leaks.append(
            Leak(
                origin, line, col, "redaction mark: re-synthesise instead of redacting", mark.family
            )
        )
    for span in IdentifierDetector().scan(text, classes=tuple(LINT_CLASSES)):
        reason = _lint_reason(span.cls, span.text)
        if reason:
            line, col = _position(text, span.start)
            leaks.append(Leak(origin, line, col, reason, span.cls))
    return leaks


def _lint_reason(cls: str, value: str) -> str | None:
    if cls == "email":
        domain = value.rpartition("@")[2]
        return None if is_reserved_domain(domain) else "an e-mail on a domain that is not reserved"
    if cls == "ip":
        return (
            None if is_documentation_ip(value) else "an IP address outside the documentation ranges"
        )
    if cls == "phone":
        return None if is_fictional_phone(value) else "a phone number in a hand-written case"
    return f"a {cls.replace('_', ' ')} in a hand-written case"
