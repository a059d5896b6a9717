"""Overlap between a variant and its original: what the variant still shares, in any disguise.

Safety here does not depend on a scanner having found anything. Every field of the variant
(inputs of any type, tags, note, expectation values, regexes, fixtures) is compared with
every field of the original, both sides folded first (``fold.FULL``: NFKC, zero-width and
bidi characters out, case folded, Traditional → Simplified, Vietnamese diacritics out;
separators collapsed), and the variant fails on any distinctive unit in common:

- a **run**: ``cjk_run`` Han characters in a row, or ``word_run`` words (Latin script,
  Vietnamese, numbers) in a row, punctuation and spacing ignored;
- a **number** or **amount** of the same value in any notation (``values``), outside the
  structural values of ``policy`` (small integers that are not amounts, zero);
- a **date**: the same calendar day in any format or calendar, or the same month-day where
  one side gives no year;
- a **term**: a glossary entry or an identifier the scanner found in the original, folded,
  with separators removed; a person's name also by its given name or distinctive words, and
  a Han name by its Pinyin or Wade–Giles spelling (and by Pinyin when rewritten in other
  characters of the same sound).

Runs that also occur in ``safe`` texts (the suite's other committed cases, already public)
are boilerplate, not the original's; numbers, dates and terms are never excused that way.

A finding names the variant's field and the class of what is shared, never the shared text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from caseforge.errors import CaseforgeError
from caseforge.privacy import distinct
from caseforge.privacy.fold import (
    FULL,
    HAN,
    VI_FAMILY,
    WIDTH,
    handle_forms,
    is_separator,
    leet_readings,
    name_parts,
    organization_parts,
    organization_stem,
    phone_forms,
    pinyin,
    romanisations,
    squashed,
    strip_marks,
    viet_spelling,
    vietnamese_name_parts,
    without_title,
)
from caseforge.privacy.patterns.addresses import address_parts
from caseforge.privacy.skeletons import leaks as skeleton_leaks
from caseforge.privacy.skeletons import parts as id_parts
from caseforge.privacy.skeletons import skeletons
from caseforge.privacy.values import (
    Dates,
    dates,
    is_distinctive,
    numbers_outside,
    phone_spans,
    prepare,
)

DEFAULT_CJK_RUN = 7
DEFAULT_WORD_RUN = 6
# A Han character, or a run of other letters and digits; separators are skipped.
_TOKEN = re.compile(
    r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[\n。！？:]"
)
# What ends a Han run: a line break, a sentence end, a colon after a label (问题描述：客户…).
# Commas, spaces, ellipses and dashes do not: a copied clause broken up by them is a copy.
_CJK_BREAKS = frozenset("\n。！？:")


@dataclass(frozen=True)
class Settings:
    """How long a shared run must be to count (see ``benchmarks/overlap_threshold.py``)."""

    cjk_run: int = DEFAULT_CJK_RUN
    word_run: int = DEFAULT_WORD_RUN


@dataclass(frozen=True)
class Finding:
    """One thing a variant field shares with the original: the field and the class only."""

    field: str
    cls: str

    def message(self) -> str:
        what = DESCRIPTIONS.get(self.cls, f"an identifier of class {self.cls}")
        return f"{self.field}: shares {what} with the original"


DESCRIPTIONS = {
    "run": "a run of text",
    "number": "a number (same value, any notation)",
    "date": "a calendar date (any format or calendar)",
    "name": "part of a person's name",
    "romanised name": "a person's name spelled in Latin letters",
    "homophone name": "a person's name written with characters of the same sound, or spelled"
    " another way",
    "email user": "the user part of an e-mail address",
    "identifier": "an identifier (however spaced or separated, or part of it)",
    "distinctive": "an uncommon word or name",
}


# Keys that name structure wherever they appear: the case's and the checks' own fields.
STRUCTURAL_KEYS = frozenset(
    [
        "id",
        "input",
        "expect",
        "tags",
        "source",
        "split",
        "added",
        "note",
        "provenance",
        "clock",
        "seed",
        "group",
        "conversation",
        "mode",
        "value",
        "values",
        "must_include",
        "must_not_include",
        "must_call",
        "must_not_call",
        "order",
        "reason",
        "field",
        "oracle",
        "args",
        "rubric",
        "tolerance",
        "case_sensitive",
        "normalize",
        "word",
        "any_of",
        "strict_types",
        "name",
        "count",
        "max_calls",
        "script",
        "user",
        "max_turns",
    ]
)
MAX_FIELDS = 200_000


def fields_of(data: object, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Every leaf of a case (or any JSON-like value) as ``(path, text)``.

    The keys that name structure — the case's fields, the input's field names, the checks'
    names and options — are part of the path. Any other key (``{"林佩萱": "VIP"}`` inside an
    input) is content: a leaf of its own, and the path names it by position (``{0}``), never
    by its text. Shared YAML anchors are walked once; a value with more than ``MAX_FIELDS``
    leaves is refused (nested aliases can expand without end)."""
    budget = [MAX_FIELDS]
    yield from _fields(data, prefix, 0, set(), budget)


def _fields(
    data: object, prefix: str, depth: int, seen: set[int], budget: list[int]
) -> Iterator[tuple[str, str]]:
    if isinstance(data, Mapping | list | tuple | set | frozenset):
        if id(data) in seen:
            return
        seen.add(id(data))
    if isinstance(data, Mapping):
        for index, (key, value) in enumerate(data.items()):
            structural = depth < 2 or str(key) in STRUCTURAL_KEYS
            if structural:
                path = f"{prefix}.{key}" if prefix else str(key)
            else:
                path = f"{prefix}{{{index}}}"
                yield from _leaf(f"{path}.key", str(key), budget)
            yield from _fields(value, path, depth + 1, seen, budget)
    elif isinstance(data, list | tuple | set | frozenset):
        for index, value in enumerate(data):
            yield from _fields(value, f"{prefix}[{index}]", depth + 1, seen, budget)
    elif data is None or isinstance(data, bool):
        return
    else:
        yield from _leaf(prefix, str(data), budget)


def _leaf(path: str, text: str, budget: list[int]) -> Iterator[tuple[str, str]]:
    budget[0] -= 1
    if budget[0] < 0:
        raise CaseforgeError(
            f"more than {MAX_FIELDS:,} fields in one value (YAML aliases nested in each other?)"
        )
    yield path, text


# --- units of one text ------------------------------------------------------------------------


@dataclass
class Units:
    """What is distinctive in one text."""

    cjk: set[str] = field(default_factory=set)
    words: set[tuple[str, ...]] = field(default_factory=set)
    numbers: set[float] = field(default_factory=set)
    dates: Dates = field(default_factory=Dates)


# Standard names of documents and ids, which any ticket of the kind may write out, and the
# lines an app writes into every export of a chat: cut from both sides before runs are
# counted (a shared 统一社会信用代码 says nothing about a ticket).
BOILERPLATE = (
    "统一社会信用代码",
    "統一社會信用代碼",
    "营业执照",
    "營業執照",
    "统一编号",
    "統一編號",
    "增值税专用发票",
    "增值稅專用發票",
    "增值税普通发票",
    "身份证号码",
    "身分證字號",
    "身分證統一編號",
    "验收条件",
    "驗收條件",
    "验收标准",
    "驗收標準",
    "重现步骤",
    "重現步驟",
    "复现步骤",
    "預期結果",
    "预期结果",
    "實際結果",
    "实际结果",
    # what a messaging app writes into every export of a chat
    "此消息记录为文本格式，不支持重新导入",
    "Messages and calls are end-to-end encrypted. No one outside of this chat, not even"
    " WhatsApp, can read or listen to them.",
)
_BOILERPLATE = re.compile("|".join(sorted({FULL(b) for b in BOILERPLATE}, key=len, reverse=True)))


def _runs(folded: str, settings: Settings) -> tuple[set[str], set[tuple[str, ...]]]:
    """Han n-grams and word n-grams of a folded text; separators do not break a run, other
    scripts do, and so does a standard term (``BOILERPLATE``)."""
    folded = _BOILERPLATE.sub("\n", folded)
    cjk: set[str] = set()
    words: set[tuple[str, ...]] = set()
    han_run: list[str] = []
    word_run: list[str] = []

    def close_han() -> None:
        text = "".join(han_run)
        n = settings.cjk_run
        cjk.update(text[i : i + n] for i in range(len(text) - n + 1))
        han_run.clear()

    def close_words() -> None:
        n = settings.word_run
        words.update(tuple(word_run[i : i + n]) for i in range(len(word_run) - n + 1))
        word_run.clear()

    for token in _TOKEN.finditer(folded):
        text = token.group()
        if text in _CJK_BREAKS:  # a new sentence, line or field: a Han run ends here
            close_han()
            continue
        if HAN.match(text):
            close_words()
            han_run.append(text)
        else:
            close_han()
            word_run.append(text)
    close_han()
    close_words()
    return cjk, words


def run_units(text: str, settings: Settings) -> tuple[set[str], set[tuple[str, ...]]]:
    """The Han and word runs of ``text`` (folded), as the overlap check counts them."""
    return _runs(FULL(text), settings)


def units(text: str, settings: Settings, today: dt.date | None = None) -> Units:
    prepared = prepare(text)
    found_dates = dates(prepared, today)
    values = {
        round(v.value, 6) for v in numbers_outside(prepared, found_dates) if is_distinctive(v)
    }
    cjk, words = _runs(FULL(text), settings)
    return Units(cjk, words, values, found_dates)


# --- terms ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Needle:
    text: str  # squashed (FULL fold, separators out)
    cls: str
    bounded: bool  # a short Latin needle: must stand as a word of its own
    marked: str = ""  # a Vietnamese name part: its words with their diacritics
    capital: bool = False  # a name that is also a common word (Hoa, "flower"): capitalised


def _needles(cls: str, term: str) -> list[_Needle]:
    out: list[_Needle] = []
    if cls == "person":
        term = without_title(term)  # anh Tuấn is Tuấn: "anh" is how he is addressed
    base = squashed(term)
    if len(base) >= 2 and not (base.isdigit() and len(base) < 4):
        word = WIDTH(term).casefold().strip()
        # a short Latin word of a name (Lan, Tuấn) counts with its own diacritics or none:
        # lần ("time") is not Lan, tuần ("week") is not Tuấn; and a Vietnamese name of
        # several words too (Lâm Anh is not làm anh)
        short = _short_latin(base) and word.isalpha()
        several = not HAN.search(word) and strip_marks(word) != word and " " in word
        marked = word if short or several else ""
        capital = bool(marked) and " " not in word and _common_word(strip_marks(word))
        bare_word = cls in _BARE_WORD_CLASSES and (
            _common_word(base, 3.0) or (base.isalpha() and distinct.compound(base))
        )  # #backend, a channel, is a word of the trade
        common = cls == "organization" and " " not in word and _common_word(base)  # trường
        if not (bare_word or common):
            # an address's Latin words as words: Boulder the town is not in "bouldering"
            whole = _short_latin(base) or (cls == "address" and not HAN.search(base))
            out.append(_Needle(base, cls, whole or bool(marked), marked, capital))
    if cls == "email user":  # alone, without its domain
        return [_Needle(base, cls, False)]
    if cls == "address":  # its road, street, building, postcode or town alone
        for part in address_parts(term):
            flat = squashed(part)
            if HAN.search(flat) or not _common_word(flat):  # a Latin one as whole words
                out.append(_Needle(flat, cls, not HAN.search(flat)))
            elif part[:1].isupper() and " " not in part:  # Boulder the town, capitalised
                out.append(_Needle(flat, cls, True, part.casefold(), True))
    if cls == "commit_sha" and len(base) > 7:  # a short SHA is a prefix of the full one
        out.append(_Needle(base[:7], cls, False))
    if cls in ("phone", "messaging_id"):
        out.extend(_Needle(form, cls, False) for form in phone_forms(term))
    stem = organization_stem(term) if cls == "organization" else ""
    if stem and not _common_word(squashed(stem)):
        out.append(_Needle(squashed(stem), cls, _short_latin(squashed(stem))))
    if cls == "organization":
        out.extend(
            _Needle(part, cls, False) for part in organization_parts(term) if not _common_word(part)
        )
    if cls in ("person", "handle"):
        bare = term.lstrip("@")
        vietnamese = vietnamese_name_parts(bare)
        for part_marked in vietnamese:
            out.append(_Needle(squashed(part_marked), "name", True, part_marked))
        for part in name_parts(bare) if not vietnamese else ():
            # a part that is a common word alone (Lindqvist *family*, @salt_n_byte) is not one
            if len(part) >= 2 and not _common_word(part, 3.0 if cls == "handle" else 3.5):
                out.append(_Needle(part, "name", _short_latin(part)))
        for spelling in romanisations(bare):
            out.append(_Needle(spelling, "romanised name", len(spelling) < 6))
    if cls in ("person", "distinctive") and len(term.split()) >= 2:
        # as an e-mail user or a handle: kendra.lowe, rdunmore, taibui
        out.extend(_Needle(form, "name", False) for form in handle_forms(term.lstrip("@")))
    return out


# Classes whose value is sometimes an ordinary word the scanner read after its label: a
# channel #backend, a Teams "chat": as a bare word it says nothing.
_BARE_WORD_CLASSES = frozenset({"handle", "channel", "messaging_id"})


_EMAIL_USER = re.compile(r"([\w.+-]+)@[\w-]+(?:\.[\w-]+)+")


def email_users(text: str) -> list[str]:
    """The user parts of ``text``'s e-mail addresses that name someone (kendra.lowe,
    peggy.li, vy.dangquoc): a variant writing one alone leaks it. A role's address is no
    one's (support, billing, no-reply, hr.team)."""
    out = []
    for match in _EMAIL_USER.finditer(WIDTH(text)):
        user = match.group(1).strip(".+-")
        words = [w for w in re.split(r"[._+-]+", user.casefold()) if w and not w.isdigit()]
        if len(squashed(user)) < 5 or not words:
            continue
        named = [w for w in words if len(w) > 2]  # hr.team is a team's: hr, then a word
        common = 4.0 if len(words) > 1 else 3.0  # kendra.lowe is hers, though Kendra is 3.1
        if all(_common_word(w, common) or distinct.compound(w) for w in named):
            continue
        out.append(user)
    return out


def _common_word(text: str, zipf: float = 4.0) -> bool:
    """A Latin-script word (folded) common in English or Vietnamese: not distinctive alone."""
    if not (text.isalpha() and text.isascii()):
        return False
    frequency = distinct.zipf_latin(text)
    return frequency >= zipf or (frequency == 0 and distinct.compound(text))


def _short_latin(text: str) -> bool:
    return not HAN.search(text) and len(text) < 6


@dataclass
class _Spaced:
    """A folded text with separators collapsed to one space, and its squashed form."""

    spaced: str
    squashed: str
    marked: str = ""  # folded like ``spaced`` but keeping diacritics
    leet: tuple[str, ...] = ()  # squashed, digits inside words read as letters (V4ntorra)
    cased: str = ""  # like ``marked``, case kept
    vietnamese: str = ""  # ``fold.viet_spelling``: Thùy for Thuỳ, Vĩ for Vỹ


def _spaced(text: str) -> _Spaced:
    folded = FULL(text)
    spaced = "".join(" " if is_separator(ch) else ch for ch in folded)
    spaced = re.sub(r" +", " ", spaced)
    flat = spaced.replace(" ", "")
    leet = tuple(leet_readings(flat))  # V4ntorra is vantorra (fold.LEET: 1 is i or l)
    width = WIDTH(text)
    vietnamese = f" {viet_spelling(width)} " if not width.isascii() else ""
    return _Spaced(f" {spaced} ", flat, f" {width.casefold()} ", leet, f" {width} ", vietnamese)


def _contains(hay: _Spaced, needle: _Needle) -> bool:
    if needle.marked:
        # the words with the name's own diacritics, or written without any (Thu Ha for Thu Hà)
        spelled = [r"\s?".join(map(re.escape, w)) for w in needle.marked.split()]
        bare = [r"\s?".join(map(re.escape, strip_marks(w))) for w in needle.marked.split()]
        gap = r"[^\w]{0,3}"
        pattern = rf"(?<![^\W_])(?:{gap.join(spelled)}|{gap.join(bare)})(?![^\W_])"
        if needle.capital:  # Hoa the name, not hoa ("flower"): written with a capital
            found = re.finditer(pattern, hay.cased, re.IGNORECASE)
            return any(m.group()[0].isupper() and _given_name_at(hay.cased, m) for m in found)
        if re.search(pattern, hay.marked) is not None:
            return True
        # the name in the other spelling of its tone or its i/y (Đặng Quốc Vĩ for Vỹ)
        spelling = viet_spelling(needle.marked)
        return bool(hay.vietnamese) and f" {spelling} " in hay.vietnamese
    if not needle.bounded:
        if needle.text not in hay.squashed:
            # a name with digits for letters (K3str3l, Qu1llm4rk) is still the name
            return not any(ch.isdigit() for ch in needle.text) and any(
                needle.text in form for form in hay.leet
            )
        if not (needle.text[0].isdigit() or needle.text[-1].isdigit()):
            return True
        # a needle that starts or ends with a digit is not in a longer number (150 in 1500)
        body = r"\s?".join(map(re.escape, needle.text))
        left = r"(?<![0-9])" if needle.text[0].isdigit() else ""
        right = r"(?!\s?[0-9])" if needle.text[-1].isdigit() else ""
        return re.search(left + body + right, hay.spaced) is not None
    # A short Latin needle must be whole words of the spaced text (An is not in Anh).
    pattern = r"(?<![^\W_])" + r"\s?".join(map(re.escape, needle.text)) + r"(?![^\W_])"
    return re.search(pattern, hay.spaced) is not None


def _given_name_at(text: str, match: re.Match[str]) -> bool:
    """Whether a capitalised word stands as a given name: last in a name, or before a family
    name (Hoa Nguyễn), not opening a longer one (Hoa Cưới Hạ Vy, a shop: flowers)."""
    after = re.match(r"[ \t]+([^\W\d_]+)", text[match.end() :])
    if after is None or not after.group(1)[0].isupper():
        return True
    return strip_marks(after.group(1).casefold()) in VI_FAMILY


def homophone_names(terms: Iterable[tuple[str, str]]) -> list[tuple[str, ...]]:
    """Pinyin syllables of the original's Han person names of three or more characters."""
    out = []
    for cls, term in terms:
        if cls not in ("person", "handle"):
            continue
        han = "".join(HAN.findall(FULL(term)))
        if len(han) >= 3:
            out.append(tuple(pinyin(han)))
    return out


@dataclass(frozen=True)
class SoundAlikes:
    """Names of the original a rewrite may spell another way that sounds or looks the same:
    a two-character Han name with its given name in another character of the same reading
    (钟垒 for 钟磊), and a Latin given name and surname respelled (Markus Belle for Marcus
    Bell, Anja Petrowa for Anya Petrova) or the surname kept with the same initial (Seersha
    Quinn for Saoirse Quinn)."""

    han: tuple[tuple[str, str, str], ...] = ()  # (family name, given name, its reading)
    latin: tuple[tuple[str, str, str], ...] = ()  # (given name, surname, the term)

    @classmethod
    def of(cls, terms: Iterable[tuple[str, str]]) -> SoundAlikes:
        han: set[tuple[str, str, str]] = set()
        latin: set[tuple[str, str, str]] = set()
        for kind, term in terms:
            if kind not in ("person", "handle", "distinctive"):
                continue
            chars = "".join(HAN.findall(FULL(term)))
            if kind != "distinctive" and len(chars) == 2 and chars[0] in distinct.SURNAMES:
                han.add((chars[0], chars[1], "".join(pinyin(chars[1]))))
            words = _CAPITALISED.findall(WIDTH(without_title(term)))
            # a name found by its shape (not a person's glossary entry) whose last word is a
            # word of the language (Chromebook Rollout) is no surname
            last = squashed(words[-1]) if words else ""
            ordinary = kind == "distinctive" and (_common_word(last) or distinct.compound(last))
            if len(words) >= 2 and len(words[-1]) >= 3 and not ordinary:
                latin.add((words[-2].casefold(), words[-1].casefold(), term))
        return cls(tuple(sorted(han)), tuple(sorted(latin)))

    def found(self, text: str) -> str | None:
        """The original's name ``text`` writes in another spelling, or None."""
        if self.han:
            folded = FULL(text)
            for family, given, reading in self.han:
                for match in re.finditer(re.escape(family) + r"([\u4e00-\u9fff])", folded):
                    other = match.group(1)
                    if (
                        other != given
                        and "".join(pinyin(other)) == reading
                        and distinct.zipf_han(family + other) < distinct.ZIPF_COMMON
                    ):
                        return family + given
        if self.latin:
            width = WIDTH(text)
            pairs = re.findall(r"(?=\b([A-Z][^\W\d_]+) ([A-Z][^\W\d_]+)\b)", width)
            for first, last in pairs:
                a, b = first.casefold(), last.casefold()
                for given, surname, term in self.latin:
                    if a[0] != given[0] or b[0] != surname[0] or (a, b) == (given, surname):
                        continue
                    alike = SequenceMatcher(None, f"{a} {b}", f"{given} {surname}").ratio()
                    if alike >= 0.8 or (b == surname and len(b) >= 4):
                        return term
        return None


_CAPITALISED = re.compile(r"\b[A-Z][^\W\d_]+\b")


def term_in(cls: str, term: str, text: str) -> bool:
    """Whether ``text`` holds ``term`` (of class ``cls``) as ``verify`` reads it: the same
    folds and the same rules (a title is not the name, a name that is a common word only
    capitalised, a common-word part is no part). The audit checks its candidates with it."""
    needles = _needles(cls, term)
    if not needles:
        return False
    hay = _spaced(text)
    return any(_contains(hay, needle) for needle in needles)


# --- the comparison ---------------------------------------------------------------------------


LONG_RUNS = Settings(distinct.LONG_RUN, distinct.LONG_RUN)  # a copied passage


class Original:
    """What is distinctive about one original case, computed once, to test variants against.

    ``fields`` are the original's ``(path, text)`` leaves; ``terms`` its ``(class, string)``
    glossary entries and scanned identifiers; ``safe`` texts already public in the repo.
    """

    def __init__(
        self,
        fields: Iterable[tuple[str, str]],
        terms: Iterable[tuple[str, str]] = (),
        safe: Iterable[str] = (),
        settings: Settings | None = None,
        today: dt.date | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.today = today  # the case's clock: what 下禮拜三 and "next Tue" mean
        self._cjk: set[str] = set()
        self._words: set[tuple[str, ...]] = set()
        self._numbers: set[float] = set()
        self._dates = Dates()
        self._skeletons: set[str] = set()
        self._parts: set[str] = set()
        self._long_cjk: set[str] = set()
        self._long_words: set[tuple[str, ...]] = set()
        found_terms: list[tuple[str, str]] = []
        absolute: set[dt.date] = set()
        for _, text in fields:
            self._skeletons |= skeletons(text)
            self._parts |= id_parts(text)
            found_terms += distinct.name_terms(text)
            found_terms += [("phone", text[a:b]) for a, b in phone_spans(text)]
            found_terms += [("email user", user) for user in email_users(text)]
            long_cjk, long_words = _runs(FULL(text), LONG_RUNS)
            self._long_cjk |= long_cjk
            self._long_words |= long_words
            found = units(text, self.settings, today)
            self._cjk |= found.cjk
            self._words |= found.words
            self._numbers |= found.numbers
            self._dates.full |= found.dates.full
            self._dates.partial |= found.dates.partial
            self._dates.relative |= found.dates.relative
            absolute |= found.dates.full - found.dates.relative
        self._dates.relative -= absolute
        public = ""
        for text in safe:
            cjk, words = _runs(FULL(text), self.settings)
            self._cjk -= cjk
            self._words -= words
            self._skeletons -= skeletons(text)  # already public in the repository
            public += squashed(text) + "\n"
        # a name-like term the suite's committed cases already hold is not the original's
        found_terms = [(c, t) for c, t in found_terms if squashed(t) not in public]
        term_list = [(c, t) for c, t in [*terms, *found_terms] if t.strip()]
        self._needles = sorted(
            {n for c, t in term_list for n in _needles(c, t)}, key=lambda n: -len(n.text)
        )
        self._homophones = homophone_names(term_list)
        self._sound_alikes = SoundAlikes.of(term_list)

    def findings(
        self,
        fields: Iterable[tuple[str, str]],
        *,
        runs: bool = True,
        values: bool = True,
        ordinary_runs: bool = False,
    ) -> list[Finding]:
        """Everything the variant's ``fields`` share with the original, one finding per field
        and class. ``runs=False`` skips shared runs (for a payload that is the original text
        with its identifiers swapped); ``values=False`` skips numbers and dates;
        ``ordinary_runs=True`` counts a shared run of ordinary words too (what a person
        writes into a request: nothing of the original's wording leaves the machine)."""
        out: list[Finding] = []
        for path, text in fields:
            classes: list[str] = []
            hay = _spaced(text)
            for needle in self._needles:
                if needle.cls not in classes and _contains(hay, needle):
                    classes.append(needle.cls)
            if "identifier" not in classes and skeleton_leaks(self._skeletons, text, self._parts):
                classes.append("identifier")
            if self._homophones and "homophone name" not in classes:
                sounds = " " + " ".join(pinyin(FULL(text))) + " "
                if any(" " + " ".join(name) + " " in sounds for name in self._homophones):
                    classes.append("homophone name")
            if "homophone name" not in classes and self._sound_alikes.found(text):
                classes.append("homophone name")
            if runs or values:
                found = units(text, self.settings, self.today)
                if runs and self._shares_a_run(text, found, ordinary_runs):
                    classes.append("run")
                if values and found.numbers & self._numbers:
                    classes.append("number")
                if values and found.dates.shares_with(self._dates):
                    classes.append("date")
            out.extend(Finding(path, cls) for cls in classes)
        return out

    def _shares_a_run(self, text: str, found: Units, ordinary: bool = False) -> bool:
        """A shared run that says something uncommon, or a long one (``distinct``); with
        ``ordinary``, any shared run."""
        if ordinary:
            return bool(found.cjk & self._cjk or found.words & self._words)
        if any(distinct.rare_han_run(run) for run in found.cjk & self._cjk):
            return True
        if any(distinct.rare_word_run(run) for run in found.words & self._words):
            return True
        if not (found.cjk & self._cjk or found.words & self._words):
            return False  # no run of the usual length: none of a longer one either
        long_cjk, long_words = _runs(FULL(text), LONG_RUNS)
        return bool(long_cjk & self._long_cjk or long_words & self._long_words)
