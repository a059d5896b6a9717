"""Numbers and dates as values, however they are written.

``1,280,000``, ``1280000``, ``128萬``, ``一百二十八萬``, ``1.28M``, ``1.280.000đ`` and
``1,28 triệu`` are one value; ``2026-03-05``, ``5/3/2026``, ``2026年3月5日``,
``二〇二六年三月五日``, ``115年3月5日`` (the ROC calendar), ``ngày 5 tháng 3 năm 2026`` and
``March 5th, 2026`` are one calendar day. An overlap check compares these values, so a
copy in another notation is still a copy.

``distinctive`` is what a ticket's numbers say about it: every amount (but zero), and every
other number of at least ``policy.SMALL_INTEGER`` with more than one significant digit. Not
distinctive: the small numbers of structure (item numbers, counts, "4 or 5 seconds",
"0.1 s"), round numbers (40, 100, 3000), digits glued to letters (``AC3``, ``mp4``), and
numbers that are part of a phone number, a clock time or an HTTP status. Measured on two
corpora of honest rewrites, each of these was shared by chance; none carries an amount.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
import warnings
from dataclasses import dataclass, field

from caseforge.privacy.fold import WIDTH
from caseforge.privacy.policy import SMALL_INTEGER

# --- numbers ----------------------------------------------------------------------------------

# 1,280,000 · 1.280.000 · 1 280 000 (spaces, as in Vietnamese and French) · 1280000.50
NUMBER = (
    r"[0-9]{1,3}(?:[,.][0-9]{3})+(?:[.,][0-9]{1,2})?|[0-9]{1,3}(?: [0-9]{3})+(?:[.,][0-9]{1,2})?"
    r"|[0-9]+(?:[.,][0-9]+)?"
)


@dataclass(frozen=True)
class Number:
    """A number as written: its value and how it was written (separators, decimals)."""

    value: float
    text: str
    decimals: int
    thousands: str | None
    decimal: str | None

    def render(self, value: float, decimals: int) -> str:
        """``value`` written the same way (grouping, decimal mark) with ``decimals`` places."""
        text = f"{value:.{decimals}f}"
        whole, _, frac = text.partition(".")
        if self.thousands:
            groups: list[str] = []
            while len(whole) > 3:
                groups.insert(0, whole[-3:])
                whole = whole[:-3]
            whole = self.thousands.join([whole, *groups])
        mark = self.decimal or ("," if self.thousands == "." else ".")
        return whole + (mark + frac if frac else "")

    def scaled(self, factor: float) -> str:
        """This number times ``factor``, rounded like the original but at most 1 % off."""
        target = self.value * factor
        whole = self.text.split(self.decimal)[0] if self.decimal else self.text
        digits = re.sub(r"[^0-9]", "", whole)
        zeros = len(digits) - len(digits.rstrip("0")) if self.decimals == 0 else 0
        exponent = min(zeros, len(digits) - 1) if self.decimals == 0 else -self.decimals
        best = self.render(target, max(0, -exponent))
        while exponent >= -(self.decimals + 3):
            step = 10.0**exponent
            rounded = round(target / step) * step
            if rounded > 0 and abs(rounded - target) <= 0.01 * target and rounded != self.value:
                return self.render(rounded, max(0, -exponent))
            exponent -= 1
        return best


def parse_number(text: str) -> Number | None:
    """Read ``12,500`` / ``12.500.000`` / ``1,5`` / ``1,250.50``; ``None`` if it is no number.

    One separator followed by exactly three digits is a thousands separator; otherwise it is
    the decimal mark. Both present: the last one is the decimal mark.
    """
    if not re.fullmatch(r"[0-9][0-9., ]*", text) or text[-1] in "., ":
        return None
    thousands: str | None = None
    decimal: str | None = None
    if " " in text:
        if not re.fullmatch(r"[0-9]{1,3}(?: [0-9]{3})+(?:[.,][0-9]+)?", text):
            return None
        thousands = " "
        decimal = "," if "," in text else "." if "." in text else None
    elif "," in text and "." in text:
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
        thousands = "." if decimal == "," else ","
    elif "," in text or "." in text:
        sep = "," if "," in text else "."
        parts = text.split(sep)
        if len(parts) > 2 or len(parts[1]) == 3:
            thousands = sep
            if any(len(p) != 3 for p in parts[1:]):
                return None
        else:
            decimal = sep
    whole, _, frac = text.partition(decimal) if decimal else (text, "", "")
    if thousands:
        whole = whole.replace(thousands, "")
    if not whole.isdigit() or (frac and not frac.isdigit()):
        return None
    value = float(f"{whole}.{frac}" if frac else whole)
    return Number(value, text, len(frac), thousands, decimal)


# Words that multiply the number before them; longest first so 百萬 wins over 萬.
MULTIPLIERS: tuple[tuple[str, float], ...] = (
    ("百萬", 1e6),
    ("百万", 1e6),
    ("千萬", 1e7),
    ("千万", 1e7),
    ("萬", 1e4),
    ("万", 1e4),
    ("億", 1e8),
    ("亿", 1e8),
    ("千", 1e3),
    ("百", 1e2),
    ("triệu", 1e6),
    ("trieu", 1e6),
    ("tỷ", 1e9),
    ("tỉ", 1e9),
    ("nghìn", 1e3),
    ("nghin", 1e3),
    ("ngàn", 1e3),
    ("ngan", 1e3),
    ("million", 1e6),
    ("billion", 1e9),
    ("thousand", 1e3),
    ("củ", 1e6),  # slang for triệu: 1.5 củ
    ("w", 1e4),  # chat slang for 万: 30w
    ("tr", 1e6),
    ("mn", 1e6),
    ("bn", 1e9),
    ("k", 1e3),
    ("K", 1e3),
    ("M", 1e6),
    ("B", 1e9),
)
_MULT = "|".join(re.escape(w) for w, _ in MULTIPLIERS)
_MULT_VALUE = dict(MULTIPLIERS)
_LATIN_WORD = "A-Za-zÀ-ỹ"

CURRENCY_BEFORE = (
    r"(?:NT\$|NTD|US\$|USD|HK\$|HKD|S\$|SGD|A\$|C\$|RMB|CNY|TWD|VND|EUR|JPY|GBP|\$|¥|￥|€|£|₫)"
)
CURRENCY_AFTER = (
    r"(?:元|圓|塊錢|块钱|塊|块|美元|美金|台幣|臺幣|新台幣|新臺幣|人民幣|人民币|港幣|港币|日圓|日元|"
    r"歐元|欧元|越南盾|越盾|USD|TWD|NTD|VND|VNĐ|VNĐ|CNY|RMB|EUR|JPY|HKD|SGD|đồng|dong|đ|"
    r"dollars?|Đồng)"
)
# A number, optionally compound (1億2千萬) or with a multiplier (128萬, 1.28M, 2,5 triệu).
_MULTIPLIED = rf"(?:{NUMBER})\s?(?:{_MULT})(?![{_LATIN_WORD}])"
_AMOUNT = re.compile(
    # a number glued to a word (AC3, mp4, v2, H264) is part of the word, unless a currency
    rf"(?:(?P<before>{CURRENCY_BEFORE})\s?|(?<![{_LATIN_WORD}_0-9.,]))"
    # parts with multipliers (1億 2千萬), and a bare number only glued to the last (1萬2): in
    # "2.3k 1趟" the 1 is a count of its own
    rf"(?P<num>(?:{_MULTIPLIED}\s?)*{_MULTIPLIED}(?:{NUMBER})?|(?:{NUMBER}))"
    rf"\s?(?P<after>{CURRENCY_AFTER}(?![{_LATIN_WORD}]))?"
)
_DOTTED = re.compile(r"(?<![0-9.,])[0-9]+(?:[.,][0-9]+){2,}(?![0-9])")
# Numbers that are part of something else: a phone number, a clock time, an HTTP status.
_NOT_VALUES = re.compile(
    # a phone number starts with +, a trunk 0, an area code in parentheses or 1[3-9] (China);
    # 12 800 000 đồng, with none of these, is an amount
    r"(?:\+[0-9]{1,3}[ .-]?(?:\(0?[0-9]{1,4}\)[ .-]?)?[0-9]{1,4}|\(0?[0-9]{1,4}\)\s?[0-9]{2,4}"
    r"|(?<![0-9])0[0-9]{1,3}|(?<![0-9])1[3-9][0-9])[ -][0-9]{3,4}[ -][0-9]{3,4}(?![0-9])"
    r"|\(0?[0-9]{2,4}\)\s?[0-9]{3,4}[ -][0-9]{4}(?![0-9])"
    r"|(?<![0-9.,])0[0-9]{2,3}\.[0-9]{3}\.[0-9]{3}(?![0-9]|[.,][0-9])"
    r"|(?<![0-9])[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?![0-9])"
    r"|(?i:http|status|code|狀態碼|状态码|錯誤碼|错误码|回傳|返回|mã lỗi|mã)"
    r"\s?[:：]?\s?[1-5][0-9]{2}(?![0-9])"
)
_PART = re.compile(rf"(?P<n>{NUMBER})\s?(?P<m>{_MULT})?")


@dataclass(frozen=True)
class Value:
    """A number found in a text: its value, where it is, and whether it is an amount."""

    value: float
    start: int
    end: int
    amount: bool


def _compound(text: str) -> float | None:
    """``1億2千萬`` → 120000000; ``128萬`` → 1280000; ``2,5 triệu`` → 2500000."""
    total = 0.0
    parts = list(_PART.finditer(text))
    if not parts:
        return None
    for part in parts:
        number = parse_number(part.group("n"))
        if number is None:
            return None
        factor = _MULT_VALUE.get(part.group("m") or "", 1.0)
        total += number.value * factor
    return total


def _chinese_numerals(text: str) -> str:
    """Chinese numerals written as digits (``一百二十八萬`` → ``1280000``), by cn2an."""
    if not re.search(
        r"[〇零一二两兩三四五六七八九十百千萬万億亿壹贰貳叁參肆伍陆陸柒捌玖拾佰仟]", text
    ):
        return text
    import cn2an

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return str(cn2an.transform(text, "cn2an"))
        except (ValueError, KeyError, IndexError):  # pragma: no cover - cn2an is lenient
            return text


def prepare(text: str) -> str:
    """The text the value finders read: NFKC and format characters out, Chinese numerals as
    digits."""
    # A full-width comma ends a clause — folded to "," it would glue 1,280,000，2026 together —
    # unless it groups thousands (１，２８０，０００元).
    text = _CLAUSE_COMMA.sub(" , ", text).replace("、", " 、 ")
    text = _chinese_numerals(WIDTH(text))
    if "角" in text or "分" in text:  # 60650元9角5分 is 60650.95元
        text = _JIAO.sub(lambda m: f"{m.group(1)}.{m.group(2)}{m.group(3) or ''}元", text)
    # a digit after the unit is the next unit down: 18万6 is 186,000, 2tr3 is 2,300,000
    text = _UNIT_TAIL.sub(lambda m: f"{m.group(1)}.{m.group(3)}{m.group(2)}", text)
    if _NUMBER_WORDS.search(text):
        text = _english_numbers(text)
    if _VI_SCALE.search(text):
        text = _VI_NUMBER.sub(lambda m: _vietnamese_number(m.group()) or m.group(), text)
    return text


_VI_DIGITS = {
    "không": 0, "một": 1, "mốt": 1, "hai": 2, "ba": 3, "bốn": 4, "tư": 4, "năm": 5, "lăm": 5,
    "sáu": 6, "bảy": 7, "bẩy": 7, "tám": 8, "chín": 9,
}  # fmt: skip
_VI_SCALES = {"nghìn": 1e3, "ngàn": 1e3, "triệu": 1e6, "tỷ": 1e9, "tỉ": 1e9}
_VI_WORDS = [*_VI_DIGITS, "mười", "mươi", "trăm", "linh", "lẻ", "rưỡi", *_VI_SCALES]
_VI_NUMBER = re.compile(
    r"(?<![\w])(?:" + "|".join(sorted(_VI_WORDS, key=len, reverse=True)) + r")"
    r"(?:\s+(?:" + "|".join(sorted(_VI_WORDS, key=len, reverse=True)) + r"))+(?![\w])",
    re.I,
)
_VI_SCALE = re.compile(r"(?<![\w])(?:trăm|nghìn|ngàn|triệu|tỷ|tỉ|mươi|mười)(?![\w])", re.I)


def _vietnamese_number(words: str) -> str | None:
    """Vietnamese number words as digits: ``mười bốn triệu hai trăm nghìn`` → ``14200000``,
    ``tám triệu rưỡi`` → ``8500000``; None for words that are not a number with a scale."""
    total, group, pending, last = 0.0, 0.0, 0.0, 0.0
    scaled = False
    for word in words.lower().split():
        if word in _VI_DIGITS:
            pending = _VI_DIGITS[word]
        elif word == "mười":
            group += 10
        elif word == "mươi":
            group += pending * 10
            pending = 0
        elif word == "trăm":
            group += pending * 100
            pending, last, scaled = 0, 100, True
        elif word in ("linh", "lẻ"):
            continue
        elif word == "rưỡi":
            total += last / 2 if last >= 1000 else 0
            group += last / 2 if last == 100 else 0
        elif word in _VI_SCALES:
            total += (group + pending) * _VI_SCALES[word]
            group = pending = 0
            last, scaled = _VI_SCALES[word], True
    value = total + group + pending
    if not scaled or value <= 0:
        return None
    return str(int(value)) if value == int(value) else str(value)


_UNIT_TAIL = re.compile(
    r"(?<![0-9.,])([0-9]+)\s?(万|萬|千|tr|triệu|trieu)([1-9])(?![0-9]|[万萬千百十])"
)
_NUMBER_WORDS = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    r"|eighty|ninety|hundred|thousand|million)\b",
    re.I,
)


def _english_numbers(text: str) -> str:
    """English number words as digits (``twenty-three thousand four hundred`` → ``23400``),
    by text2num; a lone small word (``one of them``) stays a word."""
    try:
        from text_to_num import alpha2digit
    except ImportError:  # pragma: no cover - text2num is in the privacy extra
        return text
    try:
        return str(alpha2digit(text, "en"))
    except (ValueError, IndexError):  # pragma: no cover - text2num is lenient
        return text


_CLAUSE_COMMA = re.compile(r"(?<![0-9０-９])，|，(?![0-9０-９]{3}(?![0-9０-９]))")
_JIAO = re.compile(r"([0-9]+)\s?[元圆圓]\s?([0-9])\s?角(?:\s?([0-9])\s?分)?")


def numbers(text: str) -> list[Value]:
    """Every number in ``text`` (already ``prepare``-d), amounts marked."""
    found: list[Value] = []
    text = _NOT_VALUES.sub(lambda m: " " * len(m.group()), text)
    # 1.4.12.8 is a version (its parts are read one by one), 1.280.000 a number
    text = _DOTTED.sub(
        lambda m: m.group() if parse_number(m.group()) else re.sub(r"[.,]", " ", m.group()), text
    )
    for match in _AMOUNT.finditer(text):
        raw = match.group("num")
        start = match.start("num")
        if re.match(r"[0-9]", text[match.end("num") : match.end("num") + 1] or " "):
            continue
        value = _compound(raw)
        if value is None:  # a version number or an id: its parts, one by one
            for part in re.finditer(r"[0-9]+", raw):
                found.append(
                    Value(float(part.group()), start + part.start(), start + part.end(), False)
                )
            continue
        multiplied = bool(re.search(rf"(?:{_MULT})\s*$", raw)) and not re.search(r"[kKMB]$", raw)
        amount = bool(match.group("before") or match.group("after") or multiplied)
        found.append(Value(value, match.start(), match.end(), amount))
    return found


# A phone number's shape: digit groups joined by spaces, dashes or dots (never a line break),
# seven digits or more,
# that starts with + or 0 or ( or has a group other than a group of thousands (416 555 0107);
# 2 300 000 and 2.300.000 are amounts.
_PHONE_SHAPE = re.compile(
    r"(?<![\w.,])(?:\+ ?\d{1,3}[ .-]?)?(?:\(\d{1,4}\) ?)?"
    r"\d{1,5}(?:[ .-]\d{1,6}){1,5}(?![\w]|[.,]\d)"
)


_ISO_DAY = re.compile(
    r"(?:19|20)\d\d[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./](?:19|20)\d\d"
)


def phone_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` writes something shaped like a phone number: compared by its digits as a
    whole (``overlap``), never group by group as numbers (555 of two fictional numbers)."""
    out = []
    for match in _PHONE_SHAPE.finditer(text):
        written = match.group()
        if re.search(r"\d[.,]\d{1,2}$", written) and " " in written:
            continue  # 60 650.90: a grouped amount with its cents
        digits = re.sub(r"\D", "", written)
        groups = re.findall(r"\d+", written)
        if len(digits) < 7 or len(digits) > 15 or _ISO_DAY.fullmatch(written):
            continue
        thousands = len(groups) > 1 and all(len(g) == 3 for g in groups[1:]) and len(groups[0]) <= 3
        if written[0] in "+(0" or not thousands:
            out.append(match.span())
    return out


# an id of letters and digits in separated groups (ZP-VIP-2207, EDU-TKN-88ZQ-4410): compared
# by its skeleton, never as numbers (2207 of a card is not 2207 of a flat)
_MIXED_ID = re.compile(
    r"(?<![\w.-])(?=[\w/#-]*[A-Za-z])(?=[\w/#-]*[0-9])[A-Za-z0-9]+(?:[-_/#][A-Za-z0-9]+)+(?![\w-])"
)


# a share of one or two significant digits (88%, 5 %, 40%): every report writes one
_ROUND_SHARE = re.compile(r"(?<![0-9.,])[0-9]{1,2}0*\s?[%％](?![0-9])")


def numbers_outside(prepared: str, found: Dates) -> list[Value]:
    """The numbers of a ``prepare``-d text outside its dates (``found``), its ids of letters
    and digits (compared by skeleton), its phone numbers, which are compared as a whole (a
    date's 2026, a phone's 555 are not numbers of their own), and its round shares (88%)."""
    masked = list(prepared)
    ids = [m.span() for m in _MIXED_ID.finditer(prepared)]
    shares = [m.span() for m in _ROUND_SHARE.finditer(prepared)]
    for start, end in [*found.spans, *phone_spans(prepared), *ids, *shares]:
        masked[start:end] = " " * (end - start)
    return numbers("".join(masked))


def is_distinctive(value: Value) -> bool:
    """Whether a number says something about the ticket it is in (see the module docstring)."""
    if value.value == 0:
        return False
    if value.amount:
        return True
    if value.value < SMALL_INTEGER:
        return False
    if value.value == int(value.value) and 1900 <= value.value <= 2100:
        return False  # a year alone: every text of the year writes it
    digits = f"{value.value:.6f}".rstrip("0").rstrip(".").replace(".", "").strip("0")
    return len(digits) > 1  # 40, 100, 3000: one significant digit says little


# --- dates ------------------------------------------------------------------------------------

_MONTHS_EN = {
    name: i + 1
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        )
    )
    for name in names
}
# month names as written: capitalised, or lower case but for "may" (2 to 3 may fail)
_MON = "|".join(
    form
    for name in sorted(_MONTHS_EN, key=len, reverse=True)
    for form in ((name.title(),) if name == "may" else (name.title(), name, name.upper()))
)
_D = r"(?<![0-9])"
_E = r"(?![0-9])"
_DATE_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # 2026-03-05, 2026/3/5, 2026.03.05, 2026年3月5日; ROC 115年3月5日, 民國115/3/5
    (
        "ymd",
        re.compile(
            rf"{_D}(?:(?:民國|民国)\s*)?(?P<y>[0-9]{{4}}|[0-9]{{2,3}}(?=\s*年)|1[0-9]{{2}})\s*"
            rf"(?P<s>[-/.年])\s*(?P<m>[0-9]{{1,2}})\s*[-/.月]\s*(?P<d>[0-9]{{1,2}}){_E}"
        ),
    ),
    # 5/3/2026, 05-03-2026: both readings
    (
        "dmy",
        re.compile(
            rf"{_D}(?P<a>[0-9]{{1,2}})\s*([/.-])\s*(?P<b>[0-9]{{1,2}})\s*\2\s*(?P<y>[0-9]{{4}}){_E}"
        ),
    ),
    # 3月5日, 3月初5 (no year)
    ("md", re.compile(rf"{_D}(?P<m>[0-9]{{1,2}})\s*月\s*初?\s*(?P<d>[0-9]{{1,2}})\s*[日號号]?")),
    # ngày 5 tháng 3 năm 2026, 5 tháng 3, 2026, mùng 5 tháng 3
    (
        "vi",
        re.compile(
            rf"(?i:{_D}(?P<d>[0-9]{{1,2}})\s+(?:tháng|thang)\s+(?P<m>[0-9]{{1,2}})"
            rf"(?:\s*(?:,|năm|nam|/)\s*(?:năm\s+|nam\s+)?(?P<y>[0-9]{{4}}))?){_E}"
        ),
    ),
    (
        "vi_slash",
        re.compile(
            r"(?i:(?:ngày|ngay|mùng|mung)\s+)(?P<d>[0-9]{1,2})\s*/\s*(?P<m>[0-9]{1,2})(?![/0-9])"
        ),
    ),
    # March 5, 2026 / Mar 5th / 5 March 2026 / 5th of March
    (
        "en_md",
        re.compile(
            rf"(?i:(?<![a-z])(?P<mon>{_MON})\.?\s+(?P<d>[0-9]{{1,2}})(?:st|nd|rd|th)?"
            rf"(?:,?\s+(?P<y>[0-9]{{4}}))?){_E}"
        ),
    ),
    (
        "en_dm",
        re.compile(
            rf"(?i:{_D}(?P<d>[0-9]{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MON})\.?"
            rf"(?:,?\s+(?P<y>[0-9]{{4}}))?)(?![a-z0-9])"
        ),
    ),
)


@dataclass
class Dates:
    """The calendar days a text names: full dates, and month-days written without a year."""

    full: set[dt.date] = field(default_factory=set)
    partial: set[tuple[int, int]] = field(default_factory=set)
    spans: list[tuple[int, int]] = field(default_factory=list)
    # days of ``full`` the text names only relative to its clock (月底, next Friday)
    relative: set[dt.date] = field(default_factory=set)

    def month_days(self) -> set[tuple[int, int]]:
        return self.partial | {(d.month, d.day) for d in self.full}

    def shares_with(self, other: Dates) -> bool:
        """A day in common: the same full date, or the same month-day where either side has no
        year."""
        # a day both name only relative to the same clock (月底 and 月底) is a common phrase,
        # not the original's date
        return bool(
            (self.full & other.full) - (self.relative & other.relative)
            or self.partial & other.month_days()
            or other.partial & self.month_days()
        )


def _date(year: int, month: int, day: int) -> dt.date | None:
    if year < 1000:
        year += 1911  # the ROC calendar: 115年 is 2026
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


_WEEKDAY_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
               "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}  # fmt: skip
_WEEKDAY_VI = {"2": 0, "hai": 0, "3": 1, "ba": 1, "4": 2, "tư": 2, "5": 3, "năm": 3,
               "6": 4, "sáu": 4, "7": 5, "bảy": 5}  # fmt: skip
_WEEKDAY_EN = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
_RELATIVE: tuple[tuple[str, re.Pattern[str]], ...] = (
    # 下禮拜三, 下週五, 这周五, 本星期一
    (
        "zh_week",
        re.compile(
            r"(?P<w>下下|下|這|这|本)\s*(?:個|个)?\s*(?:禮拜|礼拜|週|周|星期)\s*(?P<d>[一二三四五六日天1-7])(?![0-9])"
        ),
    ),
    # 6月底, 下個月底, 月底
    (
        "zh_month_end",
        re.compile(
            r"(?:(?P<m>[0-9]{1,2})\s*月|(?P<next>下\s*(?:個|个)?\s*月)|(?<![0-9下個个])(?<![0-9下個个]\s)月)\s*底"
        ),
    ),
    # thứ 4 tuần sau, thứ sáu tuần này, chủ nhật tuần tới
    (
        "vi_week",
        re.compile(
            r"(?i:(?:thứ|thu)\s+(?P<d>[2-7]|hai|ba|tư|năm|sáu|bảy)|(?P<sun>chủ nhật|chu nhat))"
            r"\s+(?:tuần|tuan)\s+(?P<w>sau|tới|toi|này|nay)"
        ),
    ),
    # mùng 5 tháng sau, ngày 20 tháng tới
    (
        "vi_next_month",
        re.compile(
            r"(?i:(?:mùng|mung|ngày|ngay)\s+(?P<d>[0-9]{1,2})\s+(?:tháng|thang)\s+(?:sau|tới|toi))"
        ),
    ),
    # cuối tháng 8, cuối tháng này, cuối tháng sau
    (
        "vi_month_end",
        re.compile(
            r"(?i:(?:cuối|cuoi)\s+(?:tháng|thang)\s*(?P<m>[0-9]{1,2}|này|nay|sau|tới|toi)?)"
        ),
    ),
    # next Tue the 14th, next Friday, this Wed
    (
        "en_week",
        re.compile(
            r"(?i:(?P<w>next|this|coming)\s+(?P<d>mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)[a-z]*\.?"
            r"(?:,?\s+the\s+(?P<n>[0-9]{1,2})(?:st|nd|rd|th)?)?)"
        ),
    ),
    # Tuesday the 14th: a weekday alone is no date, with its day of the month it is
    (
        "en_week",
        re.compile(
            r"(?i:(?<![a-z])(?P<d>mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)[a-z]*\.?,?\s+the\s+"
            r"(?P<n>[0-9]{1,2})(?:st|nd|rd|th)?)"
        ),
    ),
    # end of June, end of the month, end of month
    ("en_month_end", re.compile(rf"(?i:end\s+of\s+(?:(?P<mon>{_MON})|(?:the\s+)?month))")),
)


def _month_end(year: int, month: int) -> dt.date:
    return dt.date(year + (month == 12), month % 12 + 1, 1) - dt.timedelta(days=1)


def _named_month(form: str, groups: dict[str, str | None]) -> int | None:
    """The month a month's end names (6月底, cuối tháng 8, end of June), or None."""
    if form == "en_month_end" and groups.get("mon"):
        return _MONTHS_EN[str(groups["mon"]).lower()]
    if form in ("zh_month_end", "vi_month_end") and str(groups.get("m") or "").isdigit():
        month = int(str(groups["m"]))
        return month if 1 <= month <= 12 else None
    return None


def _relative(form: str, groups: dict[str, str | None], today: dt.date | None) -> list[dt.date]:
    """The days a relative date can mean from ``today`` (both, when it can mean two)."""
    if today is None:
        return []
    monday = today - dt.timedelta(days=today.weekday())
    if form == "zh_week":
        weeks = {"下下": 2, "下": 1}.get(str(groups["w"]), 0)
        return [monday + dt.timedelta(weeks=weeks, days=_WEEKDAY_ZH[str(groups["d"])])]
    if form == "vi_week":
        day = 6 if groups.get("sun") else _WEEKDAY_VI[str(groups["d"]).lower()]
        weeks = 0 if str(groups["w"]).lower() in ("này", "nay") else 1
        return [monday + dt.timedelta(weeks=weeks, days=day)]
    if form == "vi_next_month":
        year, month = today.year + (today.month == 12), today.month % 12 + 1
        date = _date(year, month, int(str(groups["d"])))
        return [date] if date else []
    if form in ("zh_month_end", "vi_month_end", "en_month_end"):
        word = str(groups.get("m") or "").lower()
        if groups.get("next") or word in ("sau", "tới", "toi"):
            year, month = today.year + (today.month == 12), today.month % 12 + 1
            return [_month_end(year, month)]
        return [_month_end(today.year, today.month)]
    if form == "en_week":
        day = _WEEKDAY_EN[str(groups["d"]).lower()[:3]]
        ahead = (day - today.weekday()) % 7 or 7
        soon = today + dt.timedelta(days=ahead)
        found = [
            soon,
            soon + dt.timedelta(weeks=1),
        ]  # "next Tue": this coming one, or the one after
        if groups.get("n"):
            nth = int(str(groups["n"]))
            ahead_days = [today + dt.timedelta(days=i) for i in range(1, 62)]
            found = (
                [d for d in found if d.day == nth]
                or [d for d in ahead_days if d.day == nth and d.weekday() == day][:1]
                or [d for d in ahead_days if d.day == nth][:1]  # the 14th, whatever its weekday
            )
        return found
    return []


_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_VI_MARKS = re.compile("[ăâđêôơưĂÂĐÊÔƠƯạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]")
_BARE_MD = re.compile(r"(?<![0-9/.:\-A-Za-z])(?P<a>[0-9]{1,2})/(?P<b>[0-9]{1,2})(?![0-9/.:\-%])")


def dates(text: str, today: dt.date | None = None) -> Dates:
    """Every calendar day in ``text`` (already ``prepare``-d): written out, as a bare m/d or
    d/m (both readings), as a month's end, and relative to ``today`` (the case's clock:
    下禮拜三, thứ 4 tuần sau, mùng 5 tháng sau, next Tue the 14th)."""
    out = Dates()
    absolute: set[dt.date] = set()
    taken: list[tuple[int, int]] = []  # sorted, never overlapping
    for form, pattern in _RELATIVE:
        for match in pattern.finditer(text):
            month = _named_month(form, match.groupdict())
            if month is not None and today is None:  # a month's end, no year: a month-day
                last = _month_end(2024, month).day  # February's 29th in a leap year, and the 28th
                out.partial.update({(month, last), (month, 28)} if month == 2 else {(month, last)})
                bisect.insort(taken, (match.start(), match.end()))
                continue
            days = (
                [_month_end(today.year, month)]
                if month is not None and today is not None
                else _relative(form, match.groupdict(), today)
            )
            if days:
                out.full.update(days)
                out.relative.update(days)
                bisect.insort(taken, (match.start(), match.end()))
    for form, pattern in _DATE_FORMS:
        for match in pattern.finditer(text):
            at = bisect.bisect_left(taken, (match.start(), match.start()))
            if (at > 0 and taken[at - 1][1] > match.start()) or (
                at < len(taken) and taken[at][0] < match.end()
            ):
                continue
            groups = match.groupdict()
            if form == "dmy":
                a, b, y = int(groups["a"]), int(groups["b"]), int(groups["y"])
                readings = [_date(y, b, a), _date(y, a, b)]
            else:
                month = _MONTHS_EN[groups["mon"].lower()] if groups.get("mon") else int(groups["m"])
                day = int(groups["d"])
                if groups.get("y"):
                    readings = [_date(int(groups["y"]), month, day)]
                else:
                    if not (1 <= month <= 12 and 1 <= day <= 31):
                        continue
                    out.partial.add((month, day))
                    bisect.insort(taken, (match.start(), match.end()))
                    continue
            valid = [d for d in readings if d is not None]
            if valid:
                out.full.update(valid)
                absolute.update(valid)
                bisect.insort(taken, (match.start(), match.end()))
    # 9/12, 18/3: a month-day either way round, but as the text's language writes it where
    # it has one: month first in Chinese (12/1 is December 1st), day first in Vietnamese
    han, vietnamese = _HAN.search(text) is not None, _VI_MARKS.search(text) is not None
    orders = (0,) if han and not vietnamese else (1,) if vietnamese and not han else (0, 1)
    for match in _BARE_MD.finditer(text):
        at = bisect.bisect_left(taken, (match.start(), match.start()))
        if (at > 0 and taken[at - 1][1] > match.start()) or (
            at < len(taken) and taken[at][0] < match.end()
        ):
            continue
        a, b = int(match.group("a")), int(match.group("b"))
        pairs = [((a, b), (b, a))[order] for order in orders]
        month_days = [(m, d) for m, d in pairs if 1 <= m <= 12 and 1 <= d <= 31]
        if month_days and a and b:
            out.partial.update(month_days)
            bisect.insort(taken, (match.start(), match.end()))
    for match in _RANGE.finditer(text):  # June 18–19, 18th and 19th of June, 6月18-19日
        groups = {re.sub(r"[bcd]$", "", k): v for k, v in match.groupdict().items() if v}
        month = _MONTHS_EN[groups["mon"].lower()] if "mon" in groups else int(groups["m"])
        for day in (int(groups["d1"]), int(groups["d2"])):
            if 1 <= month <= 12 and 1 <= day <= 31:
                out.partial.add((month, day))
    out.spans = taken
    out.relative -= absolute
    return out


_ORD = r"(?:st|nd|rd|th)?"
_TO = r"\s*(?:-|–|—|~|～|to|and|&|至|到)\s*"
# a range of days in one month: each day is a month-day of its own
_RANGE = re.compile(
    rf"\b(?P<mon>{_MON})\.? (?P<d1>\d{{1,2}}){_ORD}{_TO}(?P<d2>\d{{1,2}}){_ORD}\b"
    rf"|(?<![0-9/.])\b(?P<d1b>\d{{1,2}}){_ORD}{_TO}(?:the\s+)?(?P<d2b>\d{{1,2}}){_ORD}\s+(?:of\s+)?"
    rf"(?P<monb>{_MON})\b"
    rf"|(?<![0-9/.])(?P<m>\d{{1,2}})月(?P<d1c>\d{{1,2}})[日号號]?{_TO}(?P<d2c>\d{{1,2}})[日号號]"
    rf"|(?i:(?<![0-9/.])\b(?P<d1d>\d{{1,2}})\s*[-–]\s*(?P<d2d>\d{{1,2}})\s*(?:/|tháng\s*)(?P<md>\d{{1,2}})\b)"
)
