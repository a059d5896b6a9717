"""Finding identifiers in text: the spans ``scan``, ``resynth`` and ``audit`` look for.

The scanner runs the pattern table of ``patterns`` on ``fold.WIDTH``-folded text (so full-
and mixed-width forms match the same patterns) and the case author's glossary on
``fold.FULL``-folded, separator-free text (so ``林 佩萱``, ``Nguyen Van An`` for ``Nguyễn Văn
An``, ``陈昱廷`` for ``陳昱廷`` and ``ＭＵＭＩＡＮ`` for ``Mumian`` all match), with a Pinyin
and Wade–Giles spelling of every Han person name (``Lin Pei-Hsuan``). Offsets are mapped
back to the original text.

It is linear in the text: the text is cut into chunks of at most ``CHUNK`` characters (at
line breaks where it can), each scanned with ``OVERLAP`` characters of context on both sides
and spans kept only where they start, so memory stays bounded on a 1 MB line and no pattern
backtracks across more than a chunk. Each pattern is tried only on chunks that pass its
cheap gate (an ``@`` for e-mails, a digit for phones), and the glossary is one Aho–Corasick
automaton (pyahocorasick). Presidio, which this used to run on, costs about 8 s per MB here
(a deep copy per result, its context enhancer): see ``benchmarks/scan_throughput.py``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from caseforge.case.positions import bad_scalar_problem
from caseforge.errors import CaseforgeError, Problem, did_you_mean
from caseforge.privacy import patterns as pat
from caseforge.privacy.fold import (
    FULL,
    HAN,
    WIDTH,
    Folded,
    handle_forms,
    is_separator,
    marks_agree,
    name_parts,
    organization_parts,
    organization_stem,
    phone_forms,
    romanisations,
    strip_marks,
)
from caseforge.privacy.policy import language

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MONTHS_EN = pat.MONTHS_EN
NUMBER = pat.NUMBER
TICKET_STOP = pat.TICKET_STOP

# Classes that only the glossary can find (there is no NER model).
NAME_CLASSES: tuple[str, ...] = ("person", "organization", "project", "feature")
CLASSES: tuple[str, ...] = (*NAME_CLASSES, *(c for c in pat.CLASSES_FOUND if c not in NAME_CLASSES))


def _unknown_class(key: object) -> str:
    """``unknown class 'persn' (did you mean 'person'?); use one of …``"""
    hint = did_you_mean(key, [*CLASSES, *GLOSSARY_ALIASES])
    return f"unknown class {key!r}{hint} (use one of {', '.join(CLASSES)})"


# Other spellings accepted as glossary keys.
GLOSSARY_ALIASES: dict[str, str] = {
    "people": "person",
    "persons": "person",
    "name": "person",
    "names": "person",
    "participant": "person",
    "participants": "person",
    "org": "organization",
    "orgs": "organization",
    "organisation": "organization",
    "organizations": "organization",
    "organisations": "organization",
    "company": "organization",
    "companies": "organization",
    "customer": "organization",
    "customers": "organization",
    "shop": "organization",
    "shops": "organization",
    "projects": "project",
    "codename": "project",
    "codenames": "project",
    "features": "feature",
    "product": "feature",
    "products": "feature",
    "handles": "handle",
    "channels": "channel",
    "group": "channel",
    "groups": "channel",
    "hosts": "hostname",
    "host": "hostname",
    "server": "hostname",
    "servers": "hostname",
    "project_codes": "project_code",
    "ids": "national_id",
    "messaging": "messaging_id",
    "emails": "email",
    "phones": "phone",
    "urls": "url",
    "ips": "ip",
    "dates": "date",
    "amounts": "money",
    "error_codes": "error_code",
    "ticket_keys": "ticket_key",
    "branches": "branch",
    "commits": "commit_sha",
}

# Which class wins when two pattern spans cover exactly the same characters (lower wins).
_PRIORITY: dict[str, int] = {cls: i for i, cls in enumerate(CLASSES)}
_PRIORITY.update(
    {
        "national_id": -12,
        "business_id": -11,
        "messaging_id": -10,
        "commit_sha": -9,
        "email": -8,
        "url": -7,
        "ip": -6,
        "date": -5,
        "money": -4,
    }
)

CHUNK = 32768
OVERLAP = 256


@dataclass(frozen=True)
class Span:
    """One identifier found in a text: ``text[start:end]`` of class ``cls``."""

    start: int
    end: int
    cls: str
    text: str
    score: float

    def to_json(self) -> dict[str, int | str | float]:
        """A JSON-ready mapping (what ``caseforge scan --json`` prints)."""
        return {
            "start": self.start,
            "end": self.end,
            "class": self.cls,
            "text": self.text,
            "score": round(self.score, 3),
        }


# --- glossary --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Glossary:
    """The case author's deny-list: the strings of each class that must not survive.

    Names (people, companies, projects, unreleased features) can only be found this way; any other
    class may be listed too (an internal code the patterns would miss).
    """

    terms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Iterable[str] | str]) -> Glossary:
        """Build a glossary from ``{class: [strings]}``; raise ``ValueError`` on a bad entry."""
        terms: dict[str, list[str]] = {}
        for key, values in data.items():
            name = canonical_class(str(key))
            if name is None:
                raise ValueError(_unknown_class(key))
            items = [values] if isinstance(values, str) else list(values)
            bucket = terms.setdefault(name, [])
            for item in items:
                if not isinstance(item, str | int | float) or isinstance(item, bool):
                    raise ValueError(f"{key}: entries must be strings, got {item!r}")
                text = str(item).strip()
                if not text:
                    raise ValueError(f"{key}: empty string")
                if text not in bucket:
                    bucket.append(text)
        return cls({k: tuple(v) for k, v in terms.items() if v})

    def __bool__(self) -> bool:
        return any(self.terms.values())

    def __len__(self) -> int:
        return sum(len(v) for v in self.terms.values())

    def items(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        """``(class, strings)`` pairs in ``CLASSES`` order."""
        for name in CLASSES:
            if self.terms.get(name):
                yield name, self.terms[name]

    def merged(self, other: Glossary | None) -> Glossary:
        """This glossary plus ``other``'s strings."""
        if not other:
            return self
        data: dict[str, list[str]] = {k: list(v) for k, v in self.terms.items()}
        for name, values in other.terms.items():
            bucket = data.setdefault(name, [])
            bucket.extend(v for v in values if v not in bucket)
        return Glossary({k: tuple(v) for k, v in data.items()})


def canonical_class(name: str) -> str | None:
    """The class a glossary key names (``company`` → ``organization``), or ``None``."""
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key in CLASSES:
        return key
    return GLOSSARY_ALIASES.get(key)


def load_glossary(path: Path | str) -> Glossary:
    """Read a glossary YAML file (``{class: [strings]}``).

    Raises ``CaseforgeError`` with a one-line ``path:line:col: message`` on a missing file, bad
    YAML, an unknown class or a non-string entry.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseforgeError(Problem(path, 0, 0, "", "glossary file not found")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseforgeError(Problem(path, 0, 0, "", f"cannot read glossary: {exc}")) from None
    try:
        data = YAML(typ="rt").load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        what = exc.problem or exc.context or "invalid YAML"
        raise CaseforgeError(Problem(path, line, col, "", f"YAML syntax error: {what}")) from None
    except YAMLError as exc:
        raise CaseforgeError(Problem(path, 1, 1, "", f"YAML error: {exc}")) from None
    except ValueError as exc:
        raise CaseforgeError(bad_scalar_problem(path, text, exc)) from None
    if data is None:
        return Glossary()
    if not isinstance(data, CommentedMap):
        raise CaseforgeError(
            Problem(path, 1, 1, "", "a glossary maps a class to a list of strings")
        )
    terms: dict[str, tuple[str, ...]] = {}
    for key in data:
        line, col = data.lc.key(key)
        name = canonical_class(str(key))
        if name is None:
            raise CaseforgeError(Problem(path, line + 1, col + 1, str(key), _unknown_class(key)))
        values = data[key]
        if values is None:
            continue
        items = values if isinstance(values, CommentedSeq) else [values]
        strings: list[str] = list(terms.get(name, ()))
        for index, item in enumerate(items):
            where = values.lc.item(index) if isinstance(values, CommentedSeq) else (line, col)
            if isinstance(item, bool) or not isinstance(item, str | int | float):
                message = "entries must be strings"
                raise CaseforgeError(Problem(path, where[0] + 1, where[1] + 1, str(key), message))
            value = str(item).strip()
            if not value:
                message = "empty string"
                raise CaseforgeError(Problem(path, where[0] + 1, where[1] + 1, str(key), message))
            if value not in strings:
                strings.append(value)
        terms[name] = tuple(strings)
    return Glossary({k: v for k, v in terms.items() if v})


# --- the detector ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    start: int
    end: int
    cls: str
    score: float
    glossary: bool
    term: str = ""  # for a glossary span: the glossary entry it spells

    @property
    def length(self) -> int:
        return self.end - self.start


class _NeedleAutomaton(Protocol):
    """The ``ahocorasick.Automaton`` of the needles: ``iter`` yields
    ``(end index, (needle, class, term))``."""

    def iter(self, text: str, /) -> Iterator[tuple[int, tuple[str, str, str]]]: ...


@dataclass
class _Automaton:
    """Glossary needles (``FULL``-folded, separators out) in one Aho–Corasick automaton."""

    automaton: _NeedleAutomaton | None = None
    size: int = 0
    latin: dict[str, tuple[bool, bool]] = field(default_factory=dict)


def _needle(term: str) -> str:
    return "".join(ch for ch in FULL(term) if not is_separator(ch))


VALUE_SCORE = 0.55  # a date or an amount only ``values`` reads (below every pattern's)


def _glossary_needles(glossary: Glossary, handles: bool = False) -> dict[str, tuple[str, str]]:
    """``{needle: (class, term)}``: every term folded; for a person also the parts of the name
    that identify them alone and the Latin spellings of a Han name; for a phone number its
    digits without the trunk 0 (so +886 912… is the same number as 0912…)."""
    needles: dict[str, tuple[str, str]] = {}
    for cls, terms in glossary.items():
        for term in terms:
            forms = {_needle(term)}
            if cls in ("person", "handle"):
                forms |= romanisations(term.lstrip("@")) | name_parts(term.lstrip("@"))
            if handles and cls in ("person", "project") and len(term.split()) >= 2:
                # as an e-mail user (kendra.lowe, taibui): for the audit, which looks for the
                # name anywhere; the scanner names the whole e-mail address instead
                forms |= handle_forms(term.lstrip("@"))
            if cls == "organization":
                forms |= set(organization_parts(term))  # 云栖 of 云栖家居
            forms |= set(phone_forms(term)) if cls in ("phone", "messaging_id") else set()
            if cls == "organization" and (stem := organization_stem(term)):
                forms.add(_needle(stem))
            for form in forms:
                if len(form) >= (1 if HAN.search(form) else 2):
                    # of two spellings of one name, the one with diacritics is kept: a text
                    # with marks is checked against the name's own (marks_agree)
                    old = needles.get(form)
                    marked = strip_marks(term) != term
                    if old is None or (old[0] == cls and marked and strip_marks(old[1]) == old[1]):
                        needles[form] = (cls, term)
    return needles


def _build(glossary: Glossary, handles: bool = False) -> _Automaton:
    needles = _glossary_needles(glossary, handles)
    if not needles:
        return _Automaton()
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for needle, (cls, term) in needles.items():
        automaton.add_word(needle, (needle, cls, term))
    automaton.make_automaton()
    return _Automaton(automaton, len(needles))


class _SeparatorTable(dict[int, str | None]):
    """``str.translate`` tables built on first sight of a character: ``keep`` deletes
    separators, ``mask`` writes each character as ``"\\x00"`` (separator) or ``"\\x01"``."""

    def __init__(self, keep: bool) -> None:
        super().__init__()
        self.keep = keep

    def __missing__(self, code: int) -> str | None:
        separator = is_separator(chr(code))
        value = (
            (None if separator else chr(code)) if self.keep else ("\x00" if separator else "\x01")
        )
        self[code] = value
        return value


_DROP_SEPARATORS = _SeparatorTable(keep=True)
_SEPARATOR_MASK = _SeparatorTable(keep=False)


@dataclass(frozen=True)
class _Squashed:
    """A ``FULL``-folded chunk with separators removed, and the way back to the chunk."""

    text: str
    folded: Folded
    kept: NDArray[np.intp]  # for each squashed character, its index in the folded text

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.folded.span(int(self.kept[start]), int(self.kept[end - 1]) + 1)


def _squash(chunk: str) -> _Squashed:
    import numpy as np

    folded = FULL.with_origin(chunk)
    mask = folded.text.translate(_SEPARATOR_MASK).encode("latin-1")
    kept = np.flatnonzero(np.frombuffer(mask, dtype=np.uint8))
    return _Squashed(folded.text.translate(_DROP_SEPARATORS), folded, kept)


def _latin_edge(ch: str) -> bool:
    return (ch.isascii() and (ch.isalnum() or ch == "_")) or ("À" <= ch <= "ỹ" and ch.isalpha())


def _glossary_spans(automaton: _Automaton, chunk: str) -> list[_Candidate]:
    if automaton.automaton is None:
        return []
    squashed = _squash(chunk)
    out = []
    for end_index, (needle, cls, term) in automaton.automaton.iter(squashed.text):
        start_index = end_index - len(needle) + 1
        start, end = squashed.span(start_index, end_index + 1)
        # A needle that starts (ends) with a Latin letter or digit must not continue a word.
        if _latin_edge(needle[0]) and start > 0 and _latin_edge(chunk[start - 1]):
            continue
        if _latin_edge(needle[-1]) and end < len(chunk) and _latin_edge(chunk[end]):
            continue
        if not marks_agree(chunk[start:end], term):
            continue  # lần is not Lan
        out.append(_Candidate(start, end, cls, 1.0, True, term))
    return out


def _value_spans(chunk: str, classes: frozenset[str] | None = None) -> list[_Candidate]:
    """Dates as ``values`` reads them for ``verify`` (a bare 9/12, 6月底, `cuối tháng 8`),
    where the patterns have no row: named at a lower score, so a pattern's span wins where
    both see one. (Amounts the patterns miss are mostly informal ones without a currency,
    which in a clean text are counts as often as money: 3萬筆.)"""
    from caseforge.privacy.values import dates

    folded = WIDTH.with_origin(chunk)
    text = folded.text
    out = []
    if classes is None or "date" in classes:
        for start, end in dates(text).spans:
            o_start, o_end = folded.span(start, end)
            out.append(_Candidate(o_start, o_end, "date", VALUE_SCORE, False))
    return out


def _pattern_spans(chunk: str, classes: frozenset[str] | None = None) -> list[_Candidate]:
    folded = WIDTH.with_origin(chunk)
    text = folded.text
    out = []
    keywords = pat.keyword_starts(text)
    for index, pattern in enumerate(pat.patterns()):
        if classes is not None and pattern.cls not in classes:
            continue
        if not pattern.gate(text) or (pattern.words and index not in keywords):
            continue
        for match in _matches(pattern, text, keywords.get(index)):
            groups = pattern.regex.groupindex
            if "v" in groups:  # the value after (or before) its keyword
                start, end = match.span("v")
            elif "s" in groups:  # anchored on a literal, the start captured in a look-behind
                start, end = match.start("s"), match.end()
            else:
                start, end = match.span()
            if start == end:
                continue
            score = pat.check(pattern, text, start, end, match)
            if score is None or score < 0.5:
                continue
            if pattern.cls == "date":
                start, end = pat.weekday_before(text, start), pat.with_weekday(text, end)
            o_start, o_end = folded.span(start, end)
            out.append(_Candidate(o_start, o_end, pattern.cls, score, False))
    return out


def _matches(pattern: pat.Pattern, text: str, starts: list[int] | None) -> Iterator[pat.Match]:
    """The pattern's matches: everywhere, or only where its anchor or its words are."""
    if pattern.words:
        positions: Iterable[int] = starts or ()
    elif pattern.anchor is not None:
        positions = (m.start() for m in pattern.anchor.finditer(text))
    else:
        yield from pattern.regex.finditer(text)
        return
    done = 0
    for position in positions:
        if position < done:
            continue
        match = pattern.regex.match(text, position)
        if match is not None:
            done = match.end()
            yield match


def _chunks(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of consecutive chunks, cut at a line break (or a space) near ``CHUNK``."""
    start = 0
    size = len(text)
    while start < size:
        end = min(size, start + CHUNK)
        if end < size:
            cut = text.rfind("\n", start + CHUNK // 2, end)
            if cut < 0:
                cut = text.rfind(" ", start + CHUNK // 2, end)
            if cut > start:
                end = cut + 1
        yield start, end
        start = end


class IdentifierDetector:
    """Finds identifier spans; the glossary automaton is built once and reused.

    ``scan`` returns spans sorted by position and never overlapping: among overlapping pattern
    matches the longest wins (then the higher score, then a fixed class order). Glossary spans
    are always kept, except one lying strictly inside a longer pattern span (an e-mail address
    or URL that contains the name), since replacing the whole address removes the name too.
    """

    def __init__(
        self,
        glossary: Glossary | None = None,
        languages: Sequence[str] = ("zh-TW", "zh-CN", "vi", "en"),
    ) -> None:
        if not languages:
            raise ValueError("at least one language is needed")
        self.languages = tuple(_language(lang) for lang in languages)
        self.glossary = glossary or Glossary()
        self._automaton = _build(self.glossary)

    def scan(
        self,
        text: str,
        lang: str | None = None,
        *,
        glossary: Glossary | None = None,
        classes: Iterable[str] | None = None,
    ) -> list[Span]:
        """Every identifier in ``text``, sorted by ``start``, non-overlapping.

        ``lang`` is one of ``zh-TW``, ``zh-CN``, ``vi``, ``en``; the patterns are the same for
        all, since tickets mix scripts. ``glossary`` adds strings for this call only;
        ``classes`` limits the patterns run to those classes (the glossary still runs).
        """
        if lang is not None and _language(lang) not in self.languages:
            raise CaseforgeError(
                f"language {lang!r} is not enabled here (enabled: {', '.join(self.languages)})"
            )
        if not text:
            return []
        automaton = _build(self.glossary.merged(glossary)) if glossary else self._automaton
        wanted = frozenset(classes) if classes is not None else None
        return _scan(
            text,
            lambda chunk: (
                _pattern_spans(chunk, wanted)
                + _value_spans(chunk, wanted)
                + _glossary_spans(automaton, chunk)
            ),
        )

    def scan_stream(self, blocks: Iterable[str], lang: str | None = None) -> Iterator[Span]:
        """``scan`` over a text given block by block (a file as it is read and decoded): the
        same spans, in order, with offsets into the whole text, each yielded as soon as no
        later one can replace it. Memory holds a block and a chunk, not the text."""
        if lang is not None and _language(lang) not in self.languages:
            raise CaseforgeError(
                f"language {lang!r} is not enabled here (enabled: {', '.join(self.languages)})"
            )
        automaton = self._automaton

        def candidates(chunk: str) -> list[_Candidate]:
            return (
                _pattern_spans(chunk, None)
                + _value_spans(chunk, None)
                + _glossary_spans(automaton, chunk)
            )

        buf, base, own = "", 0, 0  # buf[0] is at ``base`` in the text; ``own`` is next to do
        last: Span | None = None
        for block in _blocks_then_end(blocks):
            final = block is None
            buf += block or ""
            while own < len(buf) and (final or len(buf) >= own + CHUNK + OVERLAP):
                end = min(len(buf), own + CHUNK)
                if end < len(buf):  # cut where _chunks cuts: a line break, else a space
                    cut = buf.rfind("\n", own + CHUNK // 2, end)
                    if cut < 0:
                        cut = buf.rfind(" ", own + CHUNK // 2, end)
                    if cut > own:
                        end = cut + 1
                lo, hi = max(0, own - OVERLAP), min(len(buf), end + OVERLAP)
                found = [
                    Span(base + c.start + lo, base + c.end + lo, c.cls,
                         buf[c.start + lo : c.end + lo], c.score)
                    for c in _resolve(candidates(buf[lo:hi]))
                    if own <= c.start + lo < end
                ]  # fmt: skip
                for span in sorted(found, key=lambda s: (s.start, -(s.end - s.start))):
                    if last is not None and span.start < last.end:  # as _disjoint decides
                        if span.end - span.start > last.end - last.start:
                            last = span
                        continue
                    if last is not None:
                        yield last
                    last = span
                own = end
                drop = own - OVERLAP
                if drop > 0:
                    buf, base, own = buf[drop:], base + drop, own - drop
        if last is not None:
            yield last

    def scan_fields(
        self, fields: Iterable[tuple[str, str]], lang: str | None = None
    ) -> list[tuple[str, Span]]:
        """``scan`` over every ``(path, text)`` field of a case."""
        return [(path, span) for path, text in fields for span in self.scan(text, lang)]


class TermFinder:
    """Only the glossary part of the scanner: every term of ``glossary`` in every fold."""

    def __init__(self, glossary: Glossary) -> None:
        self._automaton = _build(glossary, handles=True)

    def find(self, text: str) -> list[tuple[Span, str]]:
        """``(span, glossary entry it spells)`` for every term found in ``text``."""
        if self._automaton.automaton is None or not text:
            return []
        found = _candidates(text, lambda chunk: _glossary_spans(self._automaton, chunk))
        terms = {(c.start, c.end): c.term for c in found}
        return [(s, terms.get((s.start, s.end), s.text)) for s in _disjoint(_spans(text, found))]


def _candidates(text: str, candidates: Callable[[str], list[_Candidate]]) -> list[_Candidate]:
    """Chunk ``text``, find ``candidates(chunk)`` in each with context on both sides, keep
    each one in the chunk it starts in (offsets into ``text``)."""
    out: list[_Candidate] = []
    for own_start, own_end in _chunks(text):
        lo = max(0, own_start - OVERLAP)
        hi = min(len(text), own_end + OVERLAP)
        for c in _resolve(candidates(text[lo:hi])):
            if own_start <= c.start + lo < own_end:
                out.append(_Candidate(c.start + lo, c.end + lo, c.cls, c.score, c.glossary, c.term))
    return out


def _spans(text: str, candidates: list[_Candidate]) -> list[Span]:
    return [Span(c.start, c.end, c.cls, text[c.start : c.end], c.score) for c in candidates]


def _scan(text: str, candidates: Callable[[str], list[_Candidate]]) -> list[Span]:
    return _disjoint(_spans(text, _candidates(text, candidates)))


def _blocks_then_end(blocks: Iterable[str]) -> Iterator[str | None]:
    yield from blocks
    yield None


def _language(lang: str) -> str:
    try:
        return language(lang)
    except ValueError as exc:
        raise CaseforgeError(str(exc)) from None


def _resolve(candidates: list[_Candidate]) -> list[_Candidate]:
    """Non-overlapping spans: the longest pattern match wins; glossary spans are kept."""
    patterns = sorted(
        (c for c in candidates if not c.glossary),
        key=lambda c: (-c.length, -c.score, _PRIORITY.get(c.cls, 99), c.start),
    )
    glossary = sorted(
        (c for c in candidates if c.glossary), key=lambda c: (-c.length, c.start, c.cls)
    )
    kept_patterns = _greedy(patterns)
    kept_glossary = _greedy(glossary)
    starts = [p.start for p in kept_patterns]
    final: list[_Candidate] = []
    dropped: set[int] = set()
    for g in kept_glossary:
        index = bisect.bisect_right(starts, g.start) - 1
        container = kept_patterns[index] if index >= 0 else None
        if (
            container is not None
            and container.start <= g.start
            and g.end <= container.end
            and container.length > g.length
        ):
            continue
        final.append(g)
        # pattern spans overlapping the glossary span give way to it
        first = max(0, bisect.bisect_left(starts, g.start) - 1)
        for i in range(first, len(kept_patterns)):
            p = kept_patterns[i]
            if p.start >= g.end:
                break
            if p.start < g.end and g.start < p.end:
                dropped.add(i)
    kept = final + [p for i, p in enumerate(kept_patterns) if i not in dropped]
    return sorted(kept, key=lambda c: c.start)


def _greedy(ordered: Iterable[_Candidate]) -> list[_Candidate]:
    """Keep each candidate that overlaps none kept before; the result sorted by start."""
    starts: list[int] = []
    kept: list[_Candidate] = []
    for cand in ordered:
        index = bisect.bisect_left(starts, cand.start)
        if index > 0 and kept[index - 1].end > cand.start:
            continue
        if index < len(kept) and kept[index].start < cand.end:
            continue
        starts.insert(index, cand.start)
        kept.insert(index, cand)
    return kept


def _disjoint(spans: list[Span]) -> list[Span]:
    """Spans from neighbouring chunks that still overlap: the longer one stays."""
    out: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -(s.end - s.start))):
        if out and span.start < out[-1].end:
            if span.end - span.start > out[-1].end - out[-1].start:
                out[-1] = span
            continue
        out.append(span)
    return out
