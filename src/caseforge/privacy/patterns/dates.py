"""Dates: ISO, slashes and dots (d/m/y and m/d/y), compact ``20260305``, CJK with Arabic or
Chinese numerals, ROC years (``115年3月5日``, ``民國115/3/5``), Vietnamese with or without
diacritics, and English (``March 5th, 2026``, ``5 Mar``); a weekday written right before or
after a date belongs to it.

Checks after matching: a date in digits must exist in the calendar; a compact date needs a date word
near it and a bare ``3/5`` a word that makes it a day, not a ratio.
"""

from __future__ import annotations

import datetime as dt
import re

from caseforge.privacy.patterns.common import (
    CN_DIGIT,
    VI_LETTER,
    After,
    At,
    L,
    Match,
    Pattern,
    R,
    Row,
    any_digit,
    contains,
    has_context,
)

_Y = r"(?:19|20)[0-9]{2}"
_ROC_Y = r"(?:1[0-4][0-9]|[5-9][0-9])"
_MON = r"(?:0?[1-9]|1[0-2])"
_DAY = r"(?:0?[1-9]|[12][0-9]|3[01])"
_CN_MON = r"(?:十[一二]?|[一二三四五六七八九])"
_CN_DAY = r"(?:三十[一]?|二十[一二三四五六七八九]?|十[一二三四五六七八九]?|[一二三四五六七八九]|初[一二三四五六七八九十])"
MONTHS_EN = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MON_EN = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)"
)
_ORD = r"(?:st|nd|rd|th)"
_MONTH_WORDS = (
    *(m.lower() for m in MONTHS_EN),
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
)

TABLE: tuple[Row, ...] = (
    # dates
    ("date", "date_iso", rf"{L}{_Y}-{_MON}-{_DAY}(?![0-9]|[-/.][0-9])", 0.9, any_digit),
    ("date", "date_ymd", rf"{L}{_Y}([/.]){_MON}\1{_DAY}(?![0-9]|[-/.][0-9])", 0.9, any_digit),
    (
        "date",
        "date_compact",
        rf"{L}{_Y}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01]){R}",
        0.4,
        At(r"(?<![0-9A-Za-z])(?:19|20)[0-9]{6}(?![0-9A-Za-z])"),
    ),
    ("date", "date_md_slash", rf"{L}{_MON}/{_DAY}(?![0-9]|/[0-9])", 0.4, contains("/")),
    ("date", "date_dmy", rf"{L}[0-9]{{1,2}}([/.-])[0-9]{{1,2}}\1{_Y}{R}", 0.85, any_digit),
    (
        "date",
        "date_cjk",
        rf"(?<![0-9])(?:(?:(?:民國|民国)\s?)?(?:{_Y}|{_ROC_Y})\s?年\s?)?{_MON}\s?月\s?{_DAY}\s?[日號号]",
        0.9,
        any_digit,
    ),
    ("date", "date_cjk_month", rf"(?<![0-9]){_Y}\s?年\s?{_MON}\s?月(?!\s?[0-9])", 0.7, any_digit),
    (
        "date",
        "date_roc_slash",
        rf"(?:(?:民國|民国)\s?{_ROC_Y}|(?<![0-9/.-])1[01][0-9])([/.-]){_MON}\1{_DAY}(?![0-9]|[/.-][0-9])",
        0.85,
        any_digit,
    ),
    (
        "date",
        "date_cn_numerals",
        rf"(?:[{CN_DIGIT}]{{2,4}}\s?年\s?)?{_CN_MON}\s?月\s?(?:{_CN_DAY}\s?[日號号]|初[一二三四五六七八九十])",
        0.85,
        lambda t: "月" in t,
    ),
    (
        "date",
        "date_vi",
        rf"(?<!{VI_LETTER})(?i:ngày|ngay|mùng|mung)\s+{_DAY}\s+(?i:tháng|thang)\s+{_MON}"
        rf"(?:(?:\s*,\s*|\s+)(?i:năm|nam)\s+{_Y}|\s*[,/]\s*{_Y})?(?![0-9])",
        0.9,
        After(("ngày", "ngay", "mùng", "mung")),
    ),
    (
        "date",
        "date_vi_slash",
        rf"(?<!{VI_LETTER})(?i:ngày|ngay|mùng|mung|hôm|hom)\s+{_DAY}/{_MON}(?:/{_Y})?(?![0-9/])",
        0.85,
        After(("ngày", "ngay", "mùng", "mung", "hôm", "hom")),
    ),
    (
        "date",
        "date_vi_no_ngay",
        rf"(?<={L}(?P<s>{_DAY})\s+)(?i:tháng|thang)\s+{_MON}(?:\s*,\s*|\s+)(?:(?i:năm|nam)\s+)?{_Y}(?![0-9])",
        0.85,
        any_digit,
    ),
    (
        "date",
        "date_vi_month",
        rf"(?<!{VI_LETTER})(?i:tháng|thang)\s+{_MON}(?:\s*/\s*|\s+(?i:năm|nam)\s+){_Y}(?![0-9])",
        0.7,
        After(("tháng", "thang")),
    ),
    (
        "date",
        "date_en_mdy",
        rf"{L}{_MON_EN}\.?\s+{_DAY}{_ORD}?(?:,?\s+{_Y})?{R}",
        0.85,
        After(_MONTH_WORDS),
    ),
    (
        "date",
        "date_en_dmy",
        rf"(?<={L}(?P<s>{_DAY}){_ORD}?\s+(?:of\s+)?){_MON_EN}\.?(?:,?\s+{_Y})?{R}",
        0.85,
        After(_MONTH_WORDS),
    ),
    (
        "date",
        "date_en_month",
        r"(?<![0-9A-Za-z])(?:January|February|March|April|May|June|July|August|September|"
        rf"October|November|December)\s+{_Y}{R}",
        0.7,
        After(_MONTH_WORDS),
    ),
)

# Words around a bare ``3/5`` that make it a day, not a ratio.
_DAY_CONTEXT = (
    "晚間",
    "晚上",
    "早上",
    "上午",
    "下午",
    "凌晨",
    "中午",
    "當天",
    "当天",
    "當日",
    "当日",
    "日期",
    "週",
    "周",
    "星期",
    "禮拜",
    "礼拜",
    "date",
    "deadline",
    "截止",
    "到期",
    "上線",
    "上线",
    "ngày",
    "hôm",
    "sáng",
    "chiều",
    "tối",
    "since",
    "until",
    "on ",
    "due",
    "起",
    "那天",
)

# A weekday written after a date belongs to it: 2026年2月17日 週二, 115年2月16日（一）, 5/23（六）.
WEEKDAY_AFTER = re.compile(
    r"\s?(?:[（(]\s?(?:(?:週|周|星期|禮拜|礼拜)?[一二三四五六日天]|(?i:thứ\s?(?:hai|ba|tư|tu|năm|nam|sáu|sau|bảy|bay)|"
    r"chủ nhật|cn|mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?)\s?[)）]"
    r"|(?:週|周|星期|禮拜|礼拜)[一二三四五六日天]"
    r"|,?\s?(?i:thứ\s(?:hai|ba|tư|năm|sáu|bảy)|chủ nhật)"
    r"|,?\s?(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Mon|Tue|Wed|Thu|Fri|Sat|Sun)\.?(?![A-Za-z]))"
)


# ... or before it: Thứ Hai, 09/03/2026 · Fri, 17 Apr 2026 · Wednesday, October 21, 2026.
WEEKDAY_BEFORE = re.compile(
    r"(?:(?i:thứ\s(?:hai|ba|tư|tu|năm|nam|sáu|sau|bảy|bay)|chủ nhật)|(?:Monday|Tuesday|Wednesday|"
    r"Thursday|Friday|Saturday|Sunday|Mon|Tue|Wed|Thu|Fri|Sat|Sun)\.?|(?:週|周|星期|禮拜|礼拜)[一二三四五六日天])"
    r",?\s?$"
)


WEEKDAY_LEAD = re.compile(WEEKDAY_BEFORE.pattern.removesuffix("$"))


def with_weekday(text: str, end: int) -> int:
    """The end of a date match, a weekday written right after it included."""
    match = WEEKDAY_AFTER.match(text, end)
    return match.end() if match else end


def weekday_before(text: str, start: int) -> int:
    """The start of a date match, a weekday written right before it included."""
    match = WEEKDAY_BEFORE.search(text[max(0, start - 16) : start])
    return start - (len(match.group()) if match else 0)


def _is_date(year: int, month: int, day: int) -> bool:
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    return True


def valid_date(value: str) -> bool:
    numbers = [int(n) for n in re.findall(r"[0-9]+", value)]
    if re.fullmatch(r"[0-9]{1,2}[/.-][0-9]{1,2}[/.-][0-9]{4}", value):
        a, b, year = numbers
        return _is_date(year, b, a) or _is_date(year, a, b)
    if re.fullmatch(r"[0-9]{4}[/.-]?[0-9]{1,2}[/.-]?[0-9]{1,2}", value) and len(numbers) == 3:
        year, month, day = numbers
        return _is_date(year, month, day)
    if re.fullmatch(r"[0-9]{8}", value):
        return _is_date(int(value[:4]), int(value[4:6]), int(value[6:]))
    return True  # word forms: the pattern already bounds day and month


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """Checks after matching a date; the score to keep it with, or ``None`` to drop it."""
    name, score = pattern.name, pattern.score
    value = text[start:end]
    if not valid_date(value):
        return None
    if name == "date_compact" and not has_context(
        text, start, end, ("date", "日期", "ngày", "on ")
    ):
        return None
    if name == "date_md_slash":
        return 0.7 if has_context(text, start, end, _DAY_CONTEXT) else None
    return score
