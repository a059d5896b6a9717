"""Folding text so that disguised copies compare equal, with a map back to the original.

Two folds, each a per-character table (built lazily, so a 10 MB text folds at C speed):

- ``WIDTH``: Unicode NFKC (full-width ``０９１２`` → ``0912``, ``ＮＴ＄`` → ``NT$``) with
  zero-width, bidi and other format characters removed. The scanner's patterns run on this.
- ``FULL``: ``WIDTH`` plus case folded, Vietnamese diacritics removed (``Nguyễn`` →
  ``nguyen``, ``đ`` → ``d``) and Traditional Chinese folded to Simplified (``陳`` → ``陈``,
  by OpenCC's character table). Glossaries, leaks and overlap compare on this.

A fold that removes or expands characters keeps ``origin``: for every folded character, the
index of the original character it came from, so a span found in folded text maps back.

``romanisations`` gives the spellings a Han name is written in Latin letters: Hanyu Pinyin
and Wade–Giles (the usual Taiwanese passport spelling), family name first or last.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

_HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN = re.compile(f"[{_HAN_RANGES}]")
HAN_RUN = re.compile(f"[{_HAN_RANGES}]+")


def _drop(ch: str) -> bool:
    """Characters that carry no visible text: zero-width, bidi controls, variation selectors."""
    return unicodedata.category(ch) == "Cf" or "\ufe00" <= ch <= "\ufe0f" or ch == "\u034f"


@functools.cache
def _t2s() -> Callable[[str], str]:
    import opencc

    return opencc.OpenCC("t2s").convert


def strip_marks(text: str) -> str:
    text = text.replace("đ", "d").replace("Đ", "D")
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


_TONES = {"\u0300": "2", "\u0301": "1", "\u0303": "4", "\u0309": "3", "\u0323": "5"}
_VI_CONSONANTS = re.compile(r"[bcdfghklmnpqrstvxđ]+y")


def viet_spelling(text: str) -> str:
    """Vietnamese words in one spelling of each: the tone mark taken off its vowel and
    written after the word (Thuỳ and Thùy are one), and a lone ``y`` after a consonant as
    ``i`` (Vỹ is Vĩ, Lý is Lí). Other marks stay: tuần is still not Tuấn."""
    out = []
    for word in re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", text).casefold()):
        tone = ""
        kept = []
        for ch in unicodedata.normalize("NFD", word):
            if ch in _TONES:
                tone = _TONES[ch]
            else:
                kept.append(ch)
        base = unicodedata.normalize("NFC", "".join(kept))
        if _VI_CONSONANTS.fullmatch(base):
            base = base[:-1] + "i"
        out.append(base + tone)
    return " ".join(out)


_Y_TO_I = str.maketrans("yýỳỷỹỵYÝỲỶỸỴ", "iíìỉĩịIÍÌỈĨỊ")
_I_TO_Y = str.maketrans("iíìỉĩịIÍÌỈĨỊ", "yýỳỷỹỵYÝỲỶỸỴ")


def other_vietnamese_spelling(name: str) -> str:
    """A Vietnamese name with its given name's lone ``y`` after a consonant written ``i``, or
    the other way round (Đặng Quốc Vỹ ↔ Đặng Quốc Vĩ): both spellings are in use."""

    def swap(match: re.Match[str]) -> str:
        word = match.group()
        last = word[-1]
        return word[:-1] + (
            last.translate(_Y_TO_I) if last.lower() in "yýỳỷỹỵ" else last.translate(_I_TO_Y)
        )

    return re.sub(r"\b[bcdđghklmnpqrstvxBCDĐGHKLMNPQRSTVX]+[yýỳỷỹỵiíìỉĩịYÝỲỶỸỴIÍÌỈĨỊ]$", swap, name)


def marks_agree(found: str, term: str) -> bool:
    """A name found with its diacritics stripped counts only when the text writes it without
    any, or with the name's own: a Vietnamese word with other marks is another word (tuần,
    "week", is not Tuấn; lần, "time", is not Lan)."""
    written = unicodedata.normalize("NFKC", found).casefold()
    if strip_marks(written) == written:
        return True
    own = "".join(ch for ch in unicodedata.normalize("NFKC", term).casefold() if ch.isalnum())
    return "".join(ch for ch in written if ch.isalnum()) in own


def _width(ch: str) -> str:
    return "" if _drop(ch) else unicodedata.normalize("NFKC", ch)


def _full(ch: str) -> str:
    out = []
    for c in _width(ch):
        c = strip_marks(c.casefold())
        if HAN.fullmatch(c):
            c = _t2s()(c)
        out.append(c)
    return unicodedata.normalize("NFKC", "".join(out)).casefold()


class _Table(dict[int, str]):
    """A ``str.translate`` table filled on first sight of each character."""

    def __init__(self, fold: Callable[[str], str]) -> None:
        super().__init__()
        self._fold = fold
        self.irregular: set[str] = set()  # characters that fold to zero or several characters

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        folded = self._fold(ch)
        if len(folded) != 1:
            self.irregular.add(ch)
        self[code] = folded
        return folded


@dataclass(frozen=True)
class Folded:
    """A folded text and where each of its characters came from (``None``: one to one)."""

    text: str
    origin: Sequence[int] | NDArray[np.int64] | None  # a tuple, or a numpy array of indices
    source_length: int
    ends: Sequence[int] | None = None  # where each folded character's source ends, if not +1

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``[start, end)`` that folded ``[start, end)`` came from."""
        if self.origin is None:
            return start, end
        if start >= end:
            at = int(self.origin[start]) if start < len(self.origin) else self.source_length
            return at, at
        last = int(self.ends[end - 1]) if self.ends is not None else int(self.origin[end - 1]) + 1
        return int(self.origin[start]), last


class Folder:
    """One fold (a per-character function) applied to whole texts, fast."""

    def __init__(self, fold: Callable[[str], str]) -> None:
        self._fold = fold
        self._table = _Table(fold)

    def __call__(self, text: str) -> str:
        """The folded text (no offset map)."""
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
        return text.translate(self._table)

    def char(self, ch: str) -> str:
        return self._fold(ch)

    def with_origin(self, text: str) -> Folded:
        """The folded text and its map back to ``text``."""
        if not unicodedata.is_normalized("NFC", text):
            return self._by_cluster(text)
        folded = text.translate(self._table)
        irregular = self._table.irregular & set(text)
        if len(folded) == len(text) and not irregular:
            return Folded(folded, None, len(text))
        import numpy as np

        # only the characters that fold to zero or several characters need a Python step
        lengths = np.ones(len(text), dtype=np.int64)
        pattern = re.compile("[" + re.escape("".join(sorted(irregular))) + "]")
        for match in pattern.finditer(text):
            lengths[match.start()] = len(self._table[ord(match.group())])
        origin = np.repeat(np.arange(len(text), dtype=np.int64), lengths)
        return Folded(folded, origin, len(text))

    def _by_cluster(self, text: str) -> Folded:
        """Decomposed text (``a`` + U+0301): each base character with its marks composed and
        folded together, mapped back to where the cluster starts."""
        import regex

        parts: list[str] = []
        origin: list[int] = []
        ends: list[int] = []
        for cluster in regex.finditer(r"\X", text):
            piece = unicodedata.normalize("NFC", cluster.group()).translate(self._table)
            parts.append(piece)
            origin.extend([cluster.start()] * len(piece))
            ends.extend([cluster.end()] * len(piece))
        return Folded("".join(parts), tuple(origin), len(text), tuple(ends))


WIDTH = Folder(_width)
FULL = Folder(_full)

# Separators a disguise may add or drop: white space, punctuation, symbols, and the
# characters a name is broken up with (林·佩萱, Pei-Hsuan, Nguyen_Van).
_SEPARATOR_CATEGORIES = frozenset(
    {"Zs", "Zl", "Zp", "Cc", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sk", "So"}
)


@functools.cache
def is_separator(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) in _SEPARATOR_CATEGORIES


def squashed(text: str) -> str:
    """``FULL`` fold with every separator removed (no offset map)."""
    return "".join(ch for ch in FULL(text) if not is_separator(ch))


# --- romanisation -----------------------------------------------------------------------------


@functools.cache
def _pypinyin() -> tuple[Callable[..., list[str]], object, object]:
    from pypinyin import Style, lazy_pinyin

    return lazy_pinyin, Style.NORMAL, Style.WADEGILES


def pinyin(text: str) -> list[str]:
    """Toneless Hanyu Pinyin syllables of the Han characters in ``text`` (others dropped)."""
    lazy, normal, _ = _pypinyin()
    han = "".join(HAN.findall(text))
    return [s.replace("ü", "v") for s in lazy(han, style=normal)] if han else []


def _wade_giles(han: str) -> list[str]:
    lazy, _, wade = _pypinyin()
    # pypinyin writes ü as v and keeps the aspiration apostrophe; passports drop both.
    return [s.replace("'", "").replace("v", "u").replace("ü", "u") for s in lazy(han, style=wade)]


def _taiwan_passport(han: str) -> list[str]:
    """Wade–Giles as Taiwanese passports write it: a bare ``i`` or ``u`` syllable takes a
    ``y`` / ``w`` (宜 → ``yi``, not ``i``)."""
    out = []
    for syllable in _wade_giles(han):
        if syllable.startswith("i"):
            syllable = "y" + syllable
        elif syllable.startswith("u") and len(syllable) > 1:
            syllable = "w" + syllable
        out.append(syllable)
    return out


def _split_name(han: str) -> tuple[str, str]:
    """(family, given) of a Han personal name: a two-character family name when the name has
    four characters, else one."""
    size = 2 if len(han) >= 4 else 1
    return han[:size], han[size:]


def romanisations(name: str) -> set[str]:
    """Squashed Latin spellings of a Han name: ``林佩萱`` → ``linpeixuan``, ``peixuanlin``,
    ``linpeihsuan``, ``peihsuanlin`` (and the given name alone when it is long enough)."""
    han = "".join(HAN.findall(FULL(name)))
    if len(han) < 2:
        return set()
    family, given = _split_name(han)
    out: set[str] = set()
    for spell in (pinyin, _wade_giles, _taiwan_passport):
        fam, giv = "".join(spell(family)), "".join(spell(given))
        if not fam or not giv:
            continue
        out.update({fam + giv, giv + fam})
        if len(giv) >= 5:
            out.add(giv)
    # a character with several readings is spelled each way (柏 is bai and bo: Chen Bohan)
    for fam in _heteronyms(family):
        for giv in _heteronyms(given):
            out.update({fam + giv, giv + fam})
    return {squashed(s) for s in out}


def _heteronyms(han: str, limit: int = 8) -> list[str]:
    """Every Pinyin reading of ``han`` (toneless), at most ``limit`` of them."""
    from pypinyin import Style
    from pypinyin import pinyin as readings

    spellings = [""]
    for options in readings(han, style=Style.NORMAL, heteronym=True):
        spellings = [s + o.replace("ü", "v") for s in spellings for o in options[:3]][:limit]
    return spellings


# How a Han name is addressed: 林先生 is the family name and a title, with no given name in it.
_TITLES = "先生 小姐 女士 太太 老师 老師 经理 經理 主任 总监 總監 店长 店長"
_TITLES += " 师傅 師傅 老板 老闆 阿姨 同学 同學 医生 醫生 律师 律師"
_TITLES += " 会计 會計 主管 组长 組長 专员 專員"
TITLES_CJK = tuple(FULL(t) for t in _TITLES.split())


# How a Vietnamese or English name is addressed before it: anh Tuấn, c Lan, Mr. Park.
_VI_TITLES = ("anh", "a", "chị", "chi", "c", "em", "e", "cô", "chú", "bác", "ông", "bà")
_LATIN_TITLES = frozenset(
    (*_VI_TITLES, "mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "dr", "dr.")
)


def without_title(name: str) -> str:
    """A name without the title before it (``anh Tuấn`` → ``Tuấn``, ``Mr. Park`` → ``Park``),
    when a name is left."""
    words = name.split()
    if len(words) >= 2 and words[0].casefold() in _LATIN_TITLES:
        return " ".join(words[1:])
    return name


def strip_title(han: str) -> str:
    """A Han name without the title after it (林先生 → 林, 陈柏翰经理 → 陈柏翰)."""
    for title in TITLES_CJK:
        if han.endswith(title) and len(han) > len(title):
            return han[: -len(title)]
    return han


def name_parts(name: str) -> set[str]:
    """The pieces of a person's name that still identify them alone, ``FULL``-folded and
    squashed: the given name of a Han name (``佩萱``); of a Vietnamese name the middle and
    given names together (``Thu Hà``); of another Latin name each word that is not a common
    first or family name (``Whitfield``)."""
    folded = FULL(name).strip()
    han = "".join(HAN.findall(folded))
    parts: set[str] = set()
    if han and len(han) == len(re.sub(r"\W", "", folded)):
        han = strip_title(han)
        _, given = _split_name(han)
        if len(han) >= 3 and len(given) >= 2:
            parts.add(given)
        return parts
    words = [w for w in re.split(r"[\s\-_.·]+", folded) if w]
    if len(words) < 2:
        return parts
    if words[0] in VI_FAMILY:
        return {squashed(p) for p in vietnamese_name_parts(name)}
    for word in words:
        if len(word) >= 4 and word not in _COMMON_NAME_WORDS:
            parts.add(word)
    return parts


# Digits standing in for letters inside a word: 1 is i or l, so both readings are kept.
LEET = (str.maketrans("4310575@", "aeiostsa"), str.maketrans("4310575@", "aelostsa"))
_MIXED = re.compile(r"[A-Za-z0-9@]*[A-Za-z][A-Za-z0-9@]*")


def leet_readings(text: str) -> list[str]:
    """``text`` with the digits inside words read as letters (``V4ntorra`` → ``Vantorra``), one
    text per reading of 1, each as long as ``text``; none when no word mixes them."""
    if not re.search(r"[A-Za-z][0-9@]|[0-9@][A-Za-z]", text):
        return []

    def read(table: dict[int, int]) -> str:
        def word(match: re.Match[str]) -> str:
            found = match.group()
            return found if found.isalpha() else found.translate(table)

        return _MIXED.sub(word, text)

    return [read(table) for table in LEET]


def handle_forms(name: str) -> set[str]:
    """How a Latin-script name is written as an email user or a handle, squashed, when six
    letters or more: given and family name either way round, and the given name's initial with
    the family name (``Bùi Đức Tài`` → ``taibui``, ``buitai``; ``Ryan Dunmore`` →
    ``rdunmore``, ``ryandunmore``, ``dunmoreryan``)."""
    words = [w for w in re.split(r"[\s\-_.·]+", FULL(name).strip()) if w.isalpha()]
    if len(words) < 2 or HAN.search(name):
        return set()
    family, given = (words[0], words[-1]) if words[0] in VI_FAMILY else (words[-1], words[0])
    forms = {given + family, family + given, given[0] + family}
    return {f for f in forms if len(f) >= 6}


def vietnamese_name_parts(name: str) -> list[str]:
    """For a Vietnamese name, its identifying parts *with* their diacritics, case folded
    (``Nguyễn Thị Thu Hà`` → ``thu hà``, and the given name alone when it is long): folded
    without diacritics they would meet ordinary words (``Khoa`` and ``khóa``)."""
    words = [w for w in re.split(r"[\s\-_.·]+", WIDTH(name).casefold().strip()) if w]
    if len(words) < 2 or strip_marks(words[0]) not in VI_FAMILY:
        return []
    parts = []
    if len(words) >= 3:
        parts.append(f"{words[-2]} {words[-1]}")
    given = words[-1]
    # alone, a given name counts when its spelling is distinctive: with diacritics (Tuyết), or
    # long; a bare short one (Khoa) is also a common word (khóa học, written khoa-hoc in URLs)
    distinctive = given != strip_marks(given) or len(given) >= 6
    if (
        len(strip_marks(given)) >= 4
        and strip_marks(given) not in _COMMON_NAME_WORDS
        and distinctive
    ):
        parts.append(given)
    return parts


VI_FAMILY = frozenset(
    [
        "nguyen",
        "tran",
        "le",
        "pham",
        "hoang",
        "huynh",
        "phan",
        "vu",
        "vo",
        "dang",
        "bui",
        "do",
        "ho",
        "ngo",
        "duong",
        "ly",
        "dinh",
        "trinh",
        "mai",
        "truong",
        "lam",
        "luong",
        "cao",
        "quach",
        "thai",
        "ta",
        "ha",
        "kieu",
        "chau",
        "tang",
        "la",
        "lu",
        "doan",
        "trieu",
        "mac",
        "lai",
        "khuc",
        "tieu",
        "to",
        "ton",
        "che",
        "giang",
        "dao",
        "kim",
        "thach",
        "quan",
    ]
)
_COMMON_NAME_WORDS = VI_FAMILY | frozenset(
    [
        "van",
        "thi",
        "huu",
        "duc",
        "minh",
        "ngoc",
        "thanh",
        "quoc",
        "xuan",
        "chen",
        "lin",
        "wang",
        "zhang",
        "li",
        "liu",
        "huang",
        "yang",
        "zhao",
        "zhou",
        "wu",
        "chang",
        "chan",
        "wong",
        "john",
        "mary",
        "james",
        "david",
        "michael",
        "robert",
        "william",
        "smith",
        "johnson",
        "brown",
        "jones",
        "miller",
        "davis",
        "anna",
        "maria",
        "mark",
        "paul",
        "peter",
    ]
)


_EXTENSION = re.compile(
    r"\s*(?:分機|分机|轉|转|ext\.?|extension|x|#|máy lẻ|số lẻ)\s*[0-9]{1,6}\s*$", re.I
)


def phone_forms(number: str) -> list[str]:
    """Other spellings of a phone number that a squashed search should find: the number
    without its extension (``04-2358-7719 分機 31`` is also ``04-2358-7719``: an extension is
    a number of its own), and its digits without the trunk ``0`` (``0912-345-678`` is
    ``+886 912 345 678``), and a number written with its country code without it (by
    phonenumbers)."""
    width = WIDTH(number)
    forms: list[str] = []
    bare = _EXTENSION.sub("", width)
    if bare != width:
        digits = re.sub(r"[^0-9]", "", bare)
        if len(digits) >= 7:
            forms.append(digits)
        width = bare
    digits = re.sub(r"[^0-9]", "", width)
    if len(digits) >= 9 and digits.startswith("0") and not digits.startswith("00"):
        forms.append(digits[1:])
    if width.lstrip().startswith("+"):  # +44 1473 555 014 is 01473 555014 at home
        import phonenumbers

        try:
            national = str(phonenumbers.parse(width, None).national_number)
        except phonenumbers.NumberParseException:
            national = ""
        if len(national) >= 7 and national != digits:
            forms += [national, "0" + national]  # with the trunk 0 the number starts with
    return forms


# What a shop's or a firm's name says it trades in: its distinctive part is what is left
# (云栖 of 云栖家居, 旭驰 of 旭馳租車).
TRADE_WORDS_CJK = (
    "家居", "生活", "租车", "租車", "咖啡", "宠物", "寵物", "装饰", "裝飾", "支付", "超市", "药房",
    "藥局", "诊所", "診所", "牙医", "牙醫", "物业", "物業", "货运", "貨運", "健身", "烘焙",
    "餐厅", "餐廳", "书店", "書店", "服饰", "服飾", "电器", "電器", "家具", "建材", "酒店",
)  # fmt: skip


def organization_parts(name: str) -> list[str]:
    """The distinctive part of an organisation's name, as a rewrite may keep it alone: a Han
    name of four or more characters without the trade it names (云栖家居 → 云栖), and a Latin
    name's first word of six letters or more (Northgate Supply Co. → Northgate)."""
    parts: list[str] = []
    han = "".join(HAN.findall(FULL(name)))
    if len(han) >= 4:
        for trade in sorted(
            {FULL(w) for w in (*TRADE_WORDS_CJK, *_trade_suffixes())}, key=len, reverse=True
        ):
            if han.endswith(trade) and len(han) - len(trade) >= 2:
                parts.append(han[: -len(trade)])
                break
    words = re.findall(r"[^\W\d_]+", WIDTH(name))
    if len(words) >= 2 and not HAN.search(words[0]) and len(words[0]) >= 6:
        parts.append(squashed(words[0]))
    return parts


def _trade_suffixes() -> tuple[str, ...]:
    from caseforge.privacy import pools

    return pools.ORG_SUFFIXES_CJK


def organization_stem(name: str) -> str:
    """An organisation's name without its legal or trade suffix or prefix (金蘭食品行 → 金蘭食品,
    Công ty TNHH Minh Phát → Minh Phát, Brightline Foods Ltd. → Brightline Foods), when what
    is left still names it (three Han characters or four letters); else ``""``."""
    from caseforge.privacy import pools

    text = WIDTH(name).strip()
    for prefix in sorted(pools.ORG_PREFIXES_VI, key=len, reverse=True):
        if text.casefold().startswith(prefix.casefold() + " "):
            text = text[len(prefix) :].strip()
            break
    for suffix in sorted((*pools.ORG_SUFFIXES_CJK, "行", "店", "社"), key=len, reverse=True):
        if text.endswith(suffix) and len(text) > len(suffix):
            text = text[: -len(suffix)]
            break
    for suffix in sorted(pools.ORG_SUFFIXES_EN, key=len, reverse=True):
        if text.casefold().endswith(" " + suffix.casefold()):
            text = text[: -len(suffix)].rstrip(" ,")
            break
    stem = squashed(text)
    long_enough = len(HAN.findall(stem)) >= 3 or (not HAN.search(stem) and len(stem) >= 4)
    return text if long_enough and stem != squashed(name) else ""
