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
"""

from __future__ import annotations

import datetime as dt
import functools
import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import regex

from caseforge.privacy import values
from caseforge.privacy.policy import is_reserved_domain

_L = r"(?<![0-9A-Za-z])"  # no ASCII letter or digit just before
_R = r"(?![0-9A-Za-z])"  # no ASCII letter or digit just after
_VI_LETTER = r"[A-Za-zÀ-ỹ]"
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"

NUMBER = values.NUMBER
_CUR_BEFORE = (
    r"(?:NT\$|NTD|US\$|USD|HK\$|HKD|S\$|SGD|A\$|C\$|RMB|CNY|TWD|VND|EUR|JPY|GBP|\$|¥|€|£|₫)"
)
_MULT_CJK = r"(?:百萬|百万|千萬|千万|萬|万|億|亿|千)"
_MULT = rf"(?:{_MULT_CJK}|(?i:triệu|trieu|tỷ|tỉ|nghìn|nghin|ngàn)|tr(?![A-Za-z])|[kKMB](?![A-Za-z])|mn|bn)"
_CUR_CJK = (
    r"(?:元|圓|塊錢|块钱|塊|块|美元|美金|台幣|臺幣|新台幣|新臺幣|人民幣|人民币|港幣|港币|日圓|日元|"
    r"歐元|欧元|越南盾|越盾)"
)
_CUR_AFTER = (
    r"(?:USD|TWD|NTD|VND|VNĐ|VNđ|CNY|RMB|EUR|JPY|HKD|SGD|GBP|(?i:đồng|dong)|đ|dollars?|Đồng)"
)
_DASH = r"[~–—-]"  # an amount range: NT$3,000~5,000, 3-5萬元
_COUNT_AFTER = (
    r"(?i:người|nguoi|lượt|luot|lần|lan|khách|khach|bản|dòng|đơn|don|user|users|account|accounts|"
    r"request|requests|record|records|giờ|phút|tài khoản|tai khoan|thiết bị|thiet bi|lượt tải|"
    r"download|downloads|view|views|install|installs|session|sessions|order|orders|row|rows)"
)
_CN_DIGIT = "〇零一二两兩三四五六七八九"
# Classifiers after a number that make it a count, not an amount (3萬人, 12万次请求).
_COUNT_CJK = (
    r"人|位|名|個|个|次|筆|笔|件|台|張|张|條|条|份|則|则|篇|頁|页|行|列|筆資料|用戶|用户|會員|会员|"
    r"訂單|订单|單|单|家|間|间|天|小時|小时|分鐘|分钟|秒|年|月|週|周|倍|%|％|字|則|次请求|requests?|users?"
)
_CN_NUMERAL = rf"[{_CN_DIGIT}十百千萬万億亿壹贰貳叁參肆伍陆陸柒捌玖拾佰仟]"

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

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_URL_CHARS = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]"
_URL_END = r"[A-Za-z0-9\-_~/#=&%+]"
_TLD = r"(?:com|net|org|io|tw|cn|vn|dev|app|cloud|ai|internal|local|corp|lan|intra|co|biz|info|me|xyz|site|online|tech)"

# Words that introduce an id of a messaging app: the value after them is the id.
_MESSAGING = (
    r"(?:LINE\s?ID|LINE|Line\s?ID|line\s?id|Line|WeChat\s?ID|WeChat|wechat|微信號|微信号|微信|"
    r"(?i:weixin)|Zalo(?:\s?ID)?|zalo|ZALO|Telegram|telegram|TG|Skype|skype|Kakao(?:Talk)?|WhatsApp|"
    r"whatsapp|Viber|viber)"
)
_PROJECT_WORDS = (
    r"(?:代號|代号|專案代碼|专案代码|項目代號|项目代号|項目代碼|项目代码|專案代號|計畫代號|计划代号|"
    r"(?i:code\s?name|codename|project\s?code|proj\.?\s?code|mã dự án|ma du an|dự án mã))"
)
_HOST_WORDS = (
    r"(?<![A-Za-z])(?:(?i:host|hostname|server|máy chủ|may chu|node|machine|vm|instance|box|ssh|db|database|"
    r"redis|jenkins|runner|worker)|伺服器|服务器|主機|主机|機器|机器|節點|节点|服務|服务)"
)


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
    """The ``ahocorasick.Automaton`` of the ``_After`` words: ``iter`` yields
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
class _At:
    """In the table, instead of a gate: try the pattern only where this cheap regex matches
    (the start of a run of digits of the right length), not at every position."""

    keywords: str


@dataclass(frozen=True)
class _After:
    """In the table, instead of a gate: the pattern starts with one of these words (lower
    case); it is tried only where one is, found for all such patterns at once by one
    Aho–Corasick pass over the lower-cased chunk."""

    words: tuple[str, ...]


def _has(*needles: str) -> Callable[[str], bool]:
    return lambda text: any(n in text for n in needles)


def _found(rx: str) -> Callable[[str], bool]:
    """A gate: run the pattern only on chunks where this cheap ``re`` finds something."""
    compiled = re.compile(rx)
    return lambda text: compiled.search(text) is not None


_DIGIT = re.compile(r"[0-9]")
_UPPER_RUN = re.compile(r"[A-Z][A-Z0-9]")
_HAN_DIGIT = re.compile(f"[{_CN_DIGIT}十]")


def _digits(text: str) -> bool:
    return _DIGIT.search(text) is not None


def _upper(text: str) -> bool:
    return _UPPER_RUN.search(text) is not None


def _always(text: str) -> bool:
    return True


_BRANCH_WORDS = r"(?i:branch|分支|nhánh|nhanh)"
_ERROR_WORDS = (
    r"(?i:error code|error|code|錯誤碼|错误码|錯誤代碼|错误代码|錯誤|错误|mã lỗi|lỗi|ma loi)"
)
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
_PROJECT_ANCHORS = (
    "代號",
    "代号",
    "專案代",
    "专案代",
    "項目代",
    "项目代",
    "計畫代號",
    "计划代号",
    "code",
    "project",
    "proj",
    "mã dự án",
    "ma du an",
    "dự án mã",
)
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


@functools.cache
def keyword_automaton() -> KeywordAutomaton:
    """One Aho–Corasick automaton of every ``_After`` word: ``word → [pattern index]``."""
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
    """``{pattern index: sorted start positions}`` of the ``_After`` words in ``text``."""
    starts: dict[int, set[int]] = {}
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer (İ): ASCII only
        lowered = text.translate(_ASCII_LOWER)
    for end, (size, indices) in keyword_automaton().iter(lowered):
        for index in indices:
            starts.setdefault(index, set()).add(end - size + 1)
    return {index: sorted(positions) for index, positions in starts.items()}


# (class, name, regex, base score, gate or anchor). Scores below 0.5 need a context word.
_TABLE: tuple[tuple[str, str, str, float, Callable[[str], bool] | _At | _After], ...] = (
    # commit SHAs
    (
        "commit_sha",
        "sha_full",
        rf"{_L}(?:[0-9a-f]{{64}}|[0-9a-f]{{40}}|[0-9A-F]{{40}}){_R}",
        0.95,
        _At(r"[0-9a-fA-F]{40}"),
    ),
    ("commit_sha", "sha_short", rf"{_L}[0-9a-f]{{7,12}}{_R}", 0.3, _digits),
    # branches: a conventional prefix, or a dashed name next to the word branch / 分支 / nhánh
    (
        "branch",
        "branch_prefixed",
        r"(?<![0-9A-Za-z/._-])"
        r"(?:feature|features|feat|fix|bugfix|hotfix|release|releases|chore|refactor|perf|topic|wip)"
        r"/[A-Za-z0-9._/-]*[A-Za-z0-9]",
        0.85,
        _has("/"),
    ),
    (
        "branch",
        "branch_after_word",
        rf"{_BRANCH_WORDS}\s{{0,2}}[:：]?\s{{0,2}}[`'\"「『]?"
        r"(?P<v>(?=[A-Za-z0-9._/-]*[-_/])[A-Za-z0-9][A-Za-z0-9._/-]*[A-Za-z0-9])(?![A-Za-z0-9])",
        0.6,
        _After(("branch", "分支", "nhánh", "nhanh")),
    ),
    (
        "branch",
        "branch_before_word",
        r"(?<=(?<![A-Za-z0-9._/-])(?P<v>[A-Za-z0-9][A-Za-z0-9._/-]*[-_/][A-Za-z0-9._/-]*[A-Za-z0-9])"
        r"[`'\"」』]?\s{0,2})(?:分支|(?i:branch))",
        0.6,
        _After(("分支", "branch")),
    ),
    # internal error codes (case-sensitive)
    (
        "error_code",
        "err_word",
        rf"(?<={_L}(?P<s>(?:[A-Z][A-Z0-9]*[_-])*))ERR(?:OR)?(?:[_-][A-Z0-9]+)+(?![0-9A-Za-z_])",
        0.85,
        _has("ERR"),
    ),
    (
        "error_code",
        "err_digits",
        rf"(?<={_L}(?P<s>(?:[A-Z][A-Z0-9]{{1,9}}[_-])?))ERR[0-9]{{2,6}}{_R}",
        0.85,
        _has("ERR"),
    ),
    (
        "error_code",
        "e_digits",
        rf"(?<={_L}(?P<s>(?:[A-Z][A-Z0-9]{{1,9}}[_-])*))E(?=[_-]?[0-9])[_-]?[0-9]{{3,6}}(?:[_-][A-Z0-9]+)?{_R}",
        0.7,
        _digits,
    ),
    (
        "error_code",
        "prefix_e_digits",
        rf"(?<={_L}(?P<s>(?:[A-Z][A-Z0-9]{{1,9}}[_-])+))E(?=[_-]?[0-9])[_-]?[0-9]{{2,6}}{_R}",
        0.8,
        _digits,
    ),
    (
        "error_code",
        "dashed_segments",
        rf"(?<![0-9A-Za-z-])[A-Z][A-Z0-9]{{1,9}}(?:-[A-Z][A-Z0-9]{{1,9}})+-[0-9]{{2,6}}{_R}",
        0.8,
        _has("-"),
    ),
    (
        "error_code",
        "snake_digits",
        rf"{_L}[A-Z][A-Z0-9]{{1,9}}(?:_[A-Z][A-Z0-9]*)*_[0-9]{{2,6}}(?![0-9A-Za-z_])",
        0.75,
        _has("_"),
    ),
    (
        "error_code",
        "snake_words",
        rf"{_L}[A-Z]{{2,}}(?:_[A-Z]{{2,}}){{1,5}}(?![0-9A-Za-z_])",
        0.3,
        _has("_"),
    ),
    (
        "error_code",
        "lower_after_word",
        rf"{_ERROR_WORDS}"
        r"\s{0,2}[:：=]?\s{0,2}[`'\"「]?(?P<v>[a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![0-9A-Za-z_])",
        0.6,
        _After(("error", "code", "錯誤", "错误", "mã lỗi", "lỗi", "ma loi")),
    ),
    ("error_code", "hex_code", rf"{_L}0x[0-9A-Fa-f]{{4,8}}{_R}", 0.6, _has("0x")),
    # ticket / project keys (case-sensitive); PR and issue numbers after their word
    (
        "ticket_key",
        "key",
        r"(?<![0-9A-Za-z-])[A-Z][A-Z0-9]{1,9}(?:-[0-9]{1,6}){1,3}(?![0-9A-Za-z]|[-.][0-9])",
        0.85,
        _upper,
    ),
    ("ticket_key", "hash_number", r"(?<![0-9A-Za-z&#])#[0-9]{2,6}(?![0-9A-Za-z])", 0.45, _has("#")),
    # money
    # money written in digits: one pass over every number, told apart in ``_money`` (a
    # currency before or after, a multiplier, grouping) — eight patterns' work in one
    (
        "money",
        "money_number",
        rf"(?=[0-9NUHSACRTVEJG$¥€£₫])(?<![0-9A-Za-z.,$])"
        rf"(?:(?P<before>{_CUR_BEFORE})\s?|(?=(?:{NUMBER})(?:\s?{_MULT_CJK})?(?:\s?{_DASH}\s?[0-9][0-9.,]*)?\s?(?:{_MULT}|{_CUR_CJK}|{_CUR_AFTER})"
        rf"|[0-9]{{1,3}}(?P<sep>[,. ])[0-9]{{3}}(?P=sep)[0-9]{{3}}))"
        rf"(?P<num>(?:(?:{NUMBER})\s?{_MULT_CJK}\s?)*(?:{NUMBER})(?:\s?{_MULT})?)"
        rf"(?:\s?{_DASH}\s?{_CUR_BEFORE}?(?:(?:{NUMBER})\s?{_MULT_CJK}\s?)*(?:{NUMBER})(?:\s?{_MULT})?)?"
        rf"(?:\s?(?P<after>{_CUR_CJK}|{_CUR_AFTER}(?!{_VI_LETTER})))?(?![0-9])",
        0.85,
        _digits,
    ),
    (
        "money",
        "money_decimal",
        r"(?<![0-9A-Za-z.:/-])(?:(?<![0-9],)[0-9]{3}|[0-9]{4,9})[.,][0-9]{2}(?![0-9]|[.,][0-9])"
        r"(?!\s?(?:%|％|ms|s\b|sec|kb|mb|gb|tb|km|kg|mm|cm|m\b|px|fps|°|度|秒|分|倍))",
        0.55,
        _digits,
    ),
    (
        "money",
        "money_cn_numerals",
        rf"(?<=(?P<s>(?:(?:人民幣|人民币|新台幣|新臺幣|台幣|臺幣|港幣|港币|美金)\s?)?"
        rf"(?:{_CN_NUMERAL}{{2,}}|[一二三四五六七八九兩两]{_CN_NUMERAL}*))\s?)"
        r"(?:元|圓|塊錢|块钱|塊|块|萬元|万元|億元|亿元|美元|美金|台幣|臺幣|人民幣|人民币)整?",
        0.8,
        lambda t: _HAN_DIGIT.search(t) is not None,
    ),
    # dates
    ("date", "date_iso", rf"{_L}{_Y}-{_MON}-{_DAY}(?![0-9]|[-/.][0-9])", 0.9, _digits),
    ("date", "date_ymd", rf"{_L}{_Y}([/.]){_MON}\1{_DAY}(?![0-9]|[-/.][0-9])", 0.9, _digits),
    (
        "date",
        "date_compact",
        rf"{_L}{_Y}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01]){_R}",
        0.4,
        _At(r"(?<![0-9A-Za-z])(?:19|20)[0-9]{6}(?![0-9A-Za-z])"),
    ),
    ("date", "date_md_slash", rf"{_L}{_MON}/{_DAY}(?![0-9]|/[0-9])", 0.4, _has("/")),
    ("date", "date_dmy", rf"{_L}[0-9]{{1,2}}([/.-])[0-9]{{1,2}}\1{_Y}{_R}", 0.85, _digits),
    (
        "date",
        "date_cjk",
        rf"(?<![0-9])(?:(?:(?:民國|民国)\s?)?(?:{_Y}|{_ROC_Y})\s?年\s?)?{_MON}\s?月\s?{_DAY}\s?[日號号]",
        0.9,
        _digits,
    ),
    ("date", "date_cjk_month", rf"(?<![0-9]){_Y}\s?年\s?{_MON}\s?月(?!\s?[0-9])", 0.7, _digits),
    (
        "date",
        "date_roc_slash",
        rf"(?:(?:民國|民国)\s?{_ROC_Y}|(?<![0-9/.-])1[01][0-9])([/.-]){_MON}\1{_DAY}(?![0-9]|[/.-][0-9])",
        0.85,
        _digits,
    ),
    (
        "date",
        "date_cn_numerals",
        rf"(?:[{_CN_DIGIT}]{{2,4}}\s?年\s?)?{_CN_MON}\s?月\s?(?:{_CN_DAY}\s?[日號号]|初[一二三四五六七八九十])",
        0.85,
        lambda t: "月" in t,
    ),
    (
        "date",
        "date_vi",
        rf"(?<!{_VI_LETTER})(?i:ngày|ngay|mùng|mung)\s+{_DAY}\s+(?i:tháng|thang)\s+{_MON}"
        rf"(?:(?:\s*,\s*|\s+)(?i:năm|nam)\s+{_Y}|\s*[,/]\s*{_Y})?(?![0-9])",
        0.9,
        _After(("ngày", "ngay", "mùng", "mung")),
    ),
    (
        "date",
        "date_vi_slash",
        rf"(?<!{_VI_LETTER})(?i:ngày|ngay|mùng|mung|hôm|hom)\s+{_DAY}/{_MON}(?:/{_Y})?(?![0-9/])",
        0.85,
        _After(("ngày", "ngay", "mùng", "mung", "hôm", "hom")),
    ),
    (
        "date",
        "date_vi_no_ngay",
        rf"(?<={_L}(?P<s>{_DAY})\s+)(?i:tháng|thang)\s+{_MON}(?:\s*,\s*|\s+)(?:(?i:năm|nam)\s+)?{_Y}(?![0-9])",
        0.85,
        _digits,
    ),
    (
        "date",
        "date_vi_month",
        rf"(?<!{_VI_LETTER})(?i:tháng|thang)\s+{_MON}(?:\s*/\s*|\s+(?i:năm|nam)\s+){_Y}(?![0-9])",
        0.7,
        _After(("tháng", "thang")),
    ),
    (
        "date",
        "date_en_mdy",
        rf"{_L}{_MON_EN}\.?\s+{_DAY}{_ORD}?(?:,?\s+{_Y})?{_R}",
        0.85,
        _After(_MONTH_WORDS),
    ),
    (
        "date",
        "date_en_dmy",
        rf"(?<={_L}(?P<s>{_DAY}){_ORD}?\s+(?:of\s+)?){_MON_EN}\.?(?:,?\s+{_Y})?{_R}",
        0.85,
        _After(_MONTH_WORDS),
    ),
    (
        "date",
        "date_en_month",
        r"(?<![0-9A-Za-z])(?:January|February|March|April|May|June|July|August|September|"
        rf"October|November|December)\s+{_Y}{_R}",
        0.7,
        _After(_MONTH_WORDS),
    ),
    # e-mails, URLs, hosts
    (
        "email",
        "email",
        r"(?<=(?<![A-Za-z0-9._%+\-])(?P<s>[A-Za-z0-9._%+\-]+))@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])",
        0.95,
        _has("@"),
    ),
    (
        "url",
        "url_scheme",
        rf"{_L}(?:https?|ftp|ssh|git|s3|wss?)://{_URL_CHARS}*{_URL_END}",
        0.9,
        _has("://"),
    ),
    (
        "url",
        "url_www",
        rf"(?<![A-Za-z0-9.@/])www\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/{_URL_CHARS}*{_URL_END})?",
        0.85,
        _has("www."),
    ),
    (
        "url",
        "host",
        r"(?<=(?<![A-Za-z0-9.@/_-])(?P<s>(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?))"
        rf"\.{_TLD}(?:\.(?:tw|cn|vn|hk|sg))?(?:/{_URL_CHARS}*{_URL_END})?(?![A-Za-z0-9-]|\.[A-Za-z0-9])",
        0.55,
        _has("."),
    ),
    # internal host names without a TLD (pay-db-01, k8s-prod-node3)
    (
        "hostname",
        "host_dashed",
        r"(?<![A-Za-z0-9._/@:-])[a-z][a-z0-9]{0,20}(?:-[a-z0-9]{1,20}){1,5}(?<=[0-9])"
        r"(?![A-Za-z0-9_-]|\.[A-Za-z0-9])",
        0.75,
        _has("-"),
    ),
    (
        "hostname",
        "host_after_word",
        rf"{_HOST_WORDS}\s{{0,2}}[:：=]?\s{{0,2}}[`'\"「]?"
        r"(?P<v>[a-z][a-z0-9-]{1,40}[0-9])(?![A-Za-z0-9_-]|\.[A-Za-z0-9])",
        0.7,
        _After(
            (
                "host",
                "server",
                "máy chủ",
                "may chu",
                "node",
                "machine",
                "vm",
                "instance",
                "box",
                "ssh",
                "db",
                "redis",
                "jenkins",
                "runner",
                "worker",
                "伺服器",
                "服务器",
                "主機",
                "主机",
                "機器",
                "机器",
                "節點",
                "节点",
                "服務",
                "服务",
            )
        ),
    ),
    # IP addresses
    (
        "ip",
        "ipv4",
        rf"(?<![0-9A-Za-z.]){_OCTET}(?:\.{_OCTET}){{3}}(?:/(?:3[0-2]|[12]?[0-9]))?(?::[0-9]{{2,5}})?"
        r"(?![0-9A-Za-z]|\.[0-9])",
        0.85,
        _has("."),
    ),
    (
        "ip",
        "ipv6",
        r"(?<=(?<![0-9A-Za-z:])(?P<s>[0-9A-Fa-f]{0,4})):(?=[0-9A-Fa-f]{0,4}:)[0-9A-Fa-f:]{1,38}"
        r"(?![0-9A-Za-z:])",
        0.3,
        _has(":"),
    ),
    # messaging ids and chat handles
    (
        "messaging_id",
        "messaging_after_word",
        rf"{_MESSAGING}\s{{0,2}}(?:ID|id|Id|號|号)?\s{{0,2}}[:：=]?\s{{0,2}}(?:是|為|为|là|la|is)?\s{{0,2}}"
        r"(?P<v>@?[A-Za-z][A-Za-z0-9._-]{2,30}[A-Za-z0-9]|\+?[0-9][0-9 .-]{6,14}[0-9])"
        r"(?![A-Za-z0-9_-]|\.[A-Za-z0-9])",
        0.85,
        _After(
            (
                "line",
                "wechat",
                "微信",
                "weixin",
                "zalo",
                "telegram",
                "tg",
                "skype",
                "kakao",
                "whatsapp",
                "viber",
            )
        ),
    ),
    (
        "messaging_id",
        "wxid",
        r"(?<![A-Za-z0-9_])wxid_[a-z0-9]{6,20}(?![A-Za-z0-9_])",
        0.9,
        _has("wxid_"),
    ),
    (
        "handle",
        "handle",
        rf"(?<![0-9A-Za-z._%+\-@/]){'@'}(?:[A-Za-z][A-Za-z0-9._-]{{0,30}}[A-Za-z0-9]|[{_HAN}]{{1,4}})"
        r"(?![A-Za-z0-9-]*\.[A-Za-z]{2,}|[A-Za-z0-9@])",
        0.7,
        _has("@"),
    ),
    # chat channels and named group chats
    (
        "channel",
        "channel_slack",
        r"(?<![0-9A-Za-z&#/])#[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![A-Za-z0-9_-])",
        0.8,
        _has("#"),
    ),
    (
        "channel",
        "channel_word",
        r"(?<![0-9A-Za-z&#/])#[a-z][a-z0-9]{2,30}(?![A-Za-z0-9_-])",
        0.3,
        _has("#"),
    ),
    (
        "channel",
        "channel_group",
        r"[「『“](?P<v>[^」』”\n]{2,24})(?=[」』”]\s?(?:群組|群组|群|(?i:group|nhóm|nhom)(?![A-Za-z])))",
        0.75,
        _has("群", "group", "Group", "nhóm", "nhom"),
    ),
    # national ids (checksums where the format has one)
    (
        "national_id",
        "tw_id",
        rf"{_L}[A-Z][1289][0-9]{{8}}{_R}",
        0.9,
        _At(r"(?<![0-9A-Za-z])[A-Z][1289][0-9]{8}"),
    ),
    (
        "national_id",
        "cn_ric",
        rf"{_L}[1-9][0-9]{{5}}(?:19|20)[0-9]{{2}}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{{3}}[0-9Xx]{_R}",
        0.9,
        _At(r"(?<![0-9A-Za-z])[1-9][0-9]{16}"),
    ),
    (
        "national_id",
        "vn_cccd",
        rf"(?<![0-9A-Za-z.,])0(?:0[1-9]|[1-8][0-9]|9[0-6])[0-3][0-9]{{8}}{_R}",
        0.8,
        _At(r"(?<![0-9A-Za-z.,])0[0-9]{11}"),
    ),
    (
        "national_id",
        "us_ssn",
        r"(?<![0-9A-Za-z-])(?!000|666|9)[0-9]{3}([- ])(?!00)[0-9]{2}\1(?!0000)[0-9]{4}(?![0-9A-Za-z-])",
        0.8,
        _At(r"(?<![0-9A-Za-z-])[0-9]{3}[- ][0-9]{2}[- ][0-9]{4}"),
    ),
    # business ids
    (
        "business_id",
        "tw_ubn",
        rf"{_L}[0-9]{{8}}{_R}",
        0.4,
        _At(r"(?<![0-9A-Za-z])[0-9]{8}(?![0-9A-Za-z])"),
    ),
    (
        "business_id",
        "cn_uscc",
        rf"{_L}[0-9A-HJ-NPQRTUWXY]{{2}}[0-9]{{6}}[0-9A-HJ-NPQRTUWXY]{{10}}{_R}",
        0.9,
        _At(r"[0-9A-Z]{18}"),
    ),
    (
        "business_id",
        "vn_mst",
        rf"{_L}[0-9]{{10}}(?:-[0-9]{{3}})?{_R}",
        0.4,
        _At(r"(?<![0-9A-Za-z])[0-9]{10}"),
    ),
    # short project codes, after their word
    (
        "project_code",
        "project_code",
        rf"{_PROJECT_WORDS}\s{{0,2}}[:：=]?\s{{0,2}}[`'\"「『]?(?P<v>[A-Z][A-Z0-9]{{0,7}}(?:-[A-Z0-9]{{1,5}})?)(?![A-Za-z0-9])",
        0.9,
        _After(_PROJECT_ANCHORS),
    ),
    (
        "project_code",
        "project_code_before_word",
        rf"(?<=(?<![A-Za-z0-9])(?P<v>[A-Z][A-Z0-9]{{0,7}}(?:-[A-Z0-9]{{1,5}})?)\s{{0,2}}[(（]?\s{{0,2}}){_PROJECT_WORDS}",
        0.9,
        _After(_PROJECT_ANCHORS),
    ),
    # phones: international, Taiwan, China, Vietnam, US
    (
        "phone",
        "phone_intl",
        r"(?<![0-9A-Za-z+])\+[0-9]{1,3}[ .-]?(?:\(0?[0-9]{1,4}\)[ .-]?)?[0-9]{1,4}"
        r"(?:[ .-]?[0-9]{2,4}){1,4}(?![0-9A-Za-z])",
        0.8,
        _has("+"),
    ),
    (
        "phone",
        "phone_tw_mobile",
        r"(?<![0-9A-Za-z.,])09[0-9]{2}[ -]?[0-9]{3}[ -]?[0-9]{3}(?![0-9A-Za-z])",
        0.85,
        _digits,
    ),
    (
        "phone",
        "phone_landline",
        r"(?<![0-9A-Za-z.,])(?:\(0[0-9]{1,2}\)\s?[0-9]{3,4}[ -]?[0-9]{4}"
        r"|0[2-8]-[0-9]{3,4}-?[0-9]{4})(?:\s?(?:#|ext\.?|分機|分机)\s?[0-9]{1,5})?(?![0-9A-Za-z])",
        0.8,
        _digits,
    ),
    (
        "phone",
        "phone_cn_mobile",
        r"(?<![0-9A-Za-z.,])1[3-9][0-9][ -]?[0-9]{4}[ -]?[0-9]{4}(?![0-9A-Za-z])",
        0.8,
        _digits,
    ),
    (
        "phone",
        "phone_vn",
        r"(?<![0-9A-Za-z.,])0[0-9]{2,3}[ .][0-9]{3,4}[ .][0-9]{3,4}(?![0-9A-Za-z]|[.,][0-9])",
        0.75,
        _digits,
    ),
    (
        "phone",
        "phone_plain",
        r"(?<![0-9A-Za-z.,])0[0-9]{9,10}(?![0-9A-Za-z])",
        0.7,
        _At(r"(?<![0-9A-Za-z.,])0[0-9]{9}"),
    ),
    (
        "phone",
        "phone_us",
        r"(?=[(2-9])(?<![0-9A-Za-z.,])(?:\([2-9][0-9]{2}\)\s?|[2-9][0-9]{2}[-.])[0-9]{3}[-.][0-9]{4}"
        r"(?![0-9A-Za-z]|[.,][0-9])",
        0.75,
        _digits,
    ),
)

_FLAGS = regex.DOTALL | regex.MULTILINE


@functools.cache
def patterns() -> tuple[Pattern, ...]:
    """The compiled pattern table."""
    out = []
    for cls, name, rx, score, gate in _TABLE:
        compiled = regex.compile(rx, _FLAGS)
        if isinstance(gate, _At):
            out.append(
                Pattern(cls, name, compiled, score, _always, regex.compile(gate.keywords, _FLAGS))
            )
        elif isinstance(gate, _After):
            out.append(Pattern(cls, name, compiled, score, _always, words=gate.words))
        else:
            out.append(Pattern(cls, name, compiled, score, gate))
    return tuple(out)


CLASSES_FOUND: tuple[str, ...] = tuple(dict.fromkeys(cls for cls, *_ in _TABLE))

# --- context ----------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Words near a short hex string that make it a commit SHA.
SHA_CONTEXT = (
    "commit",
    "sha",
    "hash",
    "revert",
    "cherry-pick",
    "cherry pick",
    "rebase",
    "git ",
    "head",
    "提交",
    "回滾",
    "回滚",
    "還原",
    "还原",
    "版本",
    "mã commit",
    "commit của",
    "bản commit",
    "change",
    "changeset",
    "patch",
    "diff",
    "merged",
    "pushed",
    "變更",
    "变更",
    "改動",
    "改动",
    "thay đổi",
)
# Words near an all-letter SNAKE_CASE word that make it an error code.
ERROR_CONTEXT = (
    "error",
    "code",
    "fail",
    "return",
    "throw",
    "raise",
    "exception",
    "status",
    "錯誤",
    "错误",
    "回傳",
    "回传",
    "返回",
    "報錯",
    "报错",
    "失敗",
    "失败",
    "異常",
    "异常",
    "代碼",
    "代码",
    "lỗi",
    "mã",
    "trả về",
    "thất bại",
)
_ERROR_REASONS = frozenset(
    _words(
        "DECLINED DENIED TIMEOUT INVALID EXPIRED FAILED FAILURE LIMIT EXCEEDED "
        "INSUFFICIENT REJECTED ERROR MISSING DUPLICATE LOCKED OVERFLOW MISMATCH UNSUPPORTED"
    )
)
# Standard status names (HTTP, gRPC, POSIX): what a library returns, not an organisation's code.
STANDARD_CODES = frozenset(
    _words(
        "NOT_FOUND BAD_REQUEST INTERNAL_ERROR INTERNAL_SERVER_ERROR SERVICE_UNAVAILABLE "
        "GATEWAY_TIMEOUT BAD_GATEWAY PERMISSION_DENIED UNAUTHENTICATED ALREADY_EXISTS "
        "INVALID_ARGUMENT DEADLINE_EXCEEDED RESOURCE_EXHAUSTED FAILED_PRECONDITION "
        "OUT_OF_RANGE DATA_LOSS TOO_MANY_REQUESTS REQUEST_TIMEOUT NOT_IMPLEMENTED "
        "METHOD_NOT_ALLOWED PAYLOAD_TOO_LARGE UNPROCESSABLE_ENTITY NO_CONTENT NOT_MODIFIED "
        "CONNECTION_REFUSED CONNECTION_RESET TIMED_OUT NETWORK_ERROR UNKNOWN_ERROR "
        "ERR_CONNECTION_REFUSED ERR_CONNECTION_RESET ERR_CONNECTION_TIMED_OUT ERR_NAME_NOT_RESOLVED "
        "ERR_INTERNET_DISCONNECTED ERR_CERT_AUTHORITY_INVALID ERR_SSL_PROTOCOL_ERROR ERR_TIMED_OUT "
        "ERR_NETWORK ERR_BAD_REQUEST ERR_BAD_RESPONSE ERR_CANCELED ERR_INVALID_URL "
        "ERR_TOO_MANY_REDIRECTS ERR_EMPTY_RESPONSE ERR_ABORTED ERR_FAILED ERR_BLOCKED_BY_CLIENT "
        "ERR_MODULE_NOT_FOUND ERR_REQUIRE_ESM ERR_OSSL_EVP_UNSUPPORTED "
        "UTF_8 ISO_8601 SNAKE_CASE UPPER_CASE CAMEL_CASE READ_ONLY WRITE_ONLY READ_WRITE "
        "TODO FIXME NOTE"
    )
)
_STANDARD_PREFIX = re.compile(r"^(?:HTTP|SQLSTATE|SIG)_?[0-9A-Z]+$")
_POSIX = frozenset(
    _words(
        "ENOENT EACCES EEXIST ENOTDIR EISDIR EINVAL EPIPE ECONNREFUSED ECONNRESET ETIMEDOUT "
        "EADDRINUSE ENOMEM ENOSPC EPERM EAGAIN EBUSY EHOSTUNREACH ENETUNREACH ECONNABORTED"
    )
)
# Prefixes of ``ABC-123`` that are standards, units or structure, not ticket keys.
TICKET_STOP = frozenset(
    _words(
        "AC TC UTF SHA ISO COVID GPT TLS SSL HTTP HTTPS IPV RFC AES RSA CVE MP PCI DSS OWASP "
        "WCAG ECMA IEC IEEE ANSI FIPS PEP JSR WIN SQL HDMI USB LTE ISBN GMT UTC CST PST EST JST "
        "ICT SEV PRI STEP CASE PHASE ROUND LEVEL TIER WEEK DAY TOP FY KPI OKR BT P Q H W S "
        "MD5 SHA1 SHA256 BASE64 TOP10 A4 A3 V1 V2 V3 LV LEVEL1 NO GB MB KB TB IP4 IP6 X86 ARM64"
    )
)
_QUARTER = re.compile(r"^(?:Q[1-4]|H[12]|FY[0-9]{0,4}|W[0-9]{1,2}|S[0-9]|P[0-9])$")
_RANK_CONTEXT = ("排名", "排行", "第", "rank", "ranked", "top", "hạng", "xếp hạng", "no.", "place")
_TICKET_CONTEXT = (
    "pr",
    "pull",
    "issue",
    "ticket",
    "bug",
    "工單",
    "工单",
    "單號",
    "单号",
    "票",
    "需求",
    "mr",
    "merge",
    "phiếu",
    "yêu cầu",
    "task",
    "jira",
    "fixes",
    "closes",
    "see",
    "refs",
)
_VERSION_CONTEXT = (
    "version",
    "ver",
    "v.",
    "版本",
    "版",
    "phiên bản",
    "release",
    "build",
    "firmware",
)
# Words that say "address" even next to a version number.
_IP_WORDS = (
    "ip",
    "address",
    "位址",
    "地址",
    "伺服器",
    "服务器",
    "máy chủ",
    "ping",
    "ssh",
    "subnet",
)
_IP_CONTEXT = (
    "ip",
    "server",
    "host",
    "伺服器",
    "服务器",
    "主機",
    "主机",
    "máy chủ",
    "address",
    "位址",
    "地址",
    "connect",
    "ping",
    "ssh",
    "port",
    "gateway",
    "dns",
    "node",
    "節點",
    "节点",
    "proxy",
    "vpn",
    "subnet",
    "cidr",
    "db",
    "database",
    "資料庫",
    "数据库",
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
_BUSINESS_CONTEXT = (
    "統編",
    "統一編號",
    "统一编号",
    "统编",
    "ubn",
    "tax id",
    "vat",
    "mst",
    "mã số thuế",
    "ma so thue",
    "tax code",
    "税号",
    "稅號",
    "營業登記",
    "营业执照",
    "信用代码",
    "信用代碼",
)
_NATIONAL_CONTEXT = ("ssn", "social security", "cccd", "cmnd", "căn cước", "身分證", "身份证", "id")
_CHANNEL_CONTEXT = ("channel", "頻道", "频道", "kênh", "kenh", "slack", "群", "discord", "teams")
# Host names that are public and say nothing about a customer (a bare mention of them).
PUBLIC_HOSTS = frozenset(
    _words(
        "socket.io github.com gitlab.com bitbucket.org google.com stackoverflow.com npmjs.com "
        "pypi.org python.org docs.python.org developer.mozilla.org medium.com youtube.com "
        "wikipedia.org readthedocs.io github.io vercel.app netlify.app heroku.com aws.amazon.com "
        "cloud.google.com azure.com microsoft.com apple.com play.google.com docker.com "
        "kubernetes.io grafana.com prometheus.io redis.io nodejs.org reactjs.org vuejs.org "
        "angular.io jquery.com lodash.com d3js.org chartjs.org tailwindcss.com getbootstrap.com "
        "openai.com anthropic.com huggingface.co sentry.io datadoghq.com slack.com zoom.us "
        "line.me zalo.me wechat.com"
    )
)
_HANDLE_STOP = frozenset(
    _words(
        "here channel everyone all param return returns throws override deprecated media import "
        "test before after property staticmethod classmethod dataclass pytest app font-face "
        "keyframes mixin include extend apply tailwind types babel angular vue nestjs "
        "supports page"
    )
)
# Parts of a host name that say "this is a machine" (pay-db-01, k8s-prod-node3).
_HOST_PARTS = frozenset(
    _words(
        "db pg mysql postgres mongo redis cache mq kafka rabbit es elastic node worker srv server "
        "host vm gw lb proxy nginx web app api prod stg staging dev uat qa ci cd k8s kube jenkins "
        "runner build bastion jump vpn nas backup replica primary master slave shard etl batch "
        "cron queue ftp sftp smtp mail dns ldap ad sso auth gateway ingress"
    )
)
_HOST_CONTEXT = (
    "host",
    "server",
    "伺服器",
    "服务器",
    "主機",
    "主机",
    "máy chủ",
    "machine",
    "ssh",
    "node",
    "節點",
    "节点",
    "instance",
    "deploy",
    "部署",
)
_HOST_STOP = frozenset(_words("utf-8 iso-8601 sha-256 sha-1 base-64 x-86 covid-19 e2e"))

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


def _has_word(text: str, start: int, end: int, words: Sequence[str]) -> bool:
    """A context word standing as a word (``pr`` is not in ``prices``)."""
    around = window(text, start, end)
    return any(
        re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", around) if w.isascii() else w in around
        for w in words
    )


_TW_LETTERS = {
    ch: n
    for ch, n in zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        (
            10,
            11,
            12,
            13,
            14,
            15,
            16,
            17,
            34,
            18,
            19,
            20,
            21,
            22,
            35,
            23,
            24,
            25,
            26,
            27,
            28,
            29,
            32,
            30,
            31,
            33,
        ),
        strict=True,
    )
}


def tw_national_id_valid(value: str) -> bool:
    """The Taiwanese national id checksum (letter table, weights 1 9 8 … 1 1)."""
    if not re.fullmatch(r"[A-Z][0-9]{9}", value):
        return False
    code = _TW_LETTERS[value[0]]
    digits = [code // 10, code % 10, *map(int, value[1:])]
    weights = (1, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1)
    return sum(d * w for d, w in zip(digits, weights, strict=True)) % 10 == 0


def _stdnum(module: str, value: str) -> bool:
    import importlib

    return bool(importlib.import_module(f"stdnum.{module}").is_valid(value))


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


def _valid_ipv6(value: str) -> bool:
    if value.count(":") < 2 or not ("::" in value or value.count(":") == 7):
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def _private_ip(value: str) -> bool:
    try:
        address = ipaddress.ip_address(value.split("/")[0].split(":")[0])
    except ValueError:
        return False
    return address.is_private or address in ipaddress.ip_network("100.64.0.0/10")


_SHA_LIST = re.compile(
    r"(?<![0-9A-Za-z])([0-9a-f]{7,40})(?:\s*(?:[,、/，;&]|and|和|與|与|và)\s*|\s+)$"
)


def _near_other_sha(text: str, start: int, depth: int = 0) -> bool:
    """A short hex string listed right after a SHA (``commits a1b2c3d, 9be04d2``)."""
    if depth > 20:
        return False
    before = text[max(0, start - 60) : start]
    match = _SHA_LIST.search(before)
    if not match:
        return False
    prev_start = start - len(before) + match.start(1)
    prev_end = prev_start + len(match.group(1))
    return has_context(text, prev_start, prev_end, SHA_CONTEXT) or _near_other_sha(
        text, prev_start, depth + 1
    )


_BUDGET_BEFORE = re.compile(
    r"(?:預算|预算|金額|金额|營收|营收|報價|报价|合約|合约|費用|费用|總價|总价|標案|标案|budget|revenue|"
    r"amount|giá trị|doanh thu|ngân sách)\s{0,3}[:：]?\s{0,3}(?:約|约|大約|大约|about|khoảng)?\s{0,2}$",
    re.IGNORECASE,
)
_CJK_MULTIPLIED = re.compile(rf"{_MULT_CJK}")
# What a count follows: 日活约 3 万, 下載 12 萬, 3 triệu lượt tải.
_COUNT_BEFORE = re.compile(
    r"(?:日活|月活|用戶|用户|人數|人数|下載|下载|次數|次数|訪問|访问|流量|粉絲|粉丝|會員|会员|訂閱|订阅|"
    r"瀏覽|浏览|點擊|点击|dau|mau|pv|uv|users?|downloads?|installs?|views?|người dùng|lượt|khách)"
    r"\s?(?:約|约|大約|大约|超過|超过|近|達|达|about|khoảng|hơn)?\s?[:：]?\s?$",
    re.IGNORECASE,
)
_VI_MULTIPLIED = re.compile(r"(?i:triệu|trieu|tỷ|tỉ)$")
_GROUPED = re.compile(r"[0-9]{1,3}([,. ])[0-9]{3}\1[0-9]{3}")
_COUNT_AFTER_RE = re.compile(rf"\s?(?:{_COUNT_CJK}|{_COUNT_AFTER})")


def _money(match: Match, text: str) -> float | None:
    """The score of a number as money: a currency before or after it, or — with no currency —
    a CJK multiplier (3萬, 1億2千萬), a Vietnamese one (2,5 triệu) or grouping of millions
    (1.750.000), unless a count word follows (3萬人, 3 triệu người dùng)."""
    if match.group("before") or match.group("after"):
        return 0.85
    number = match.group("num")
    if number is None:  # the group is not optional in the pattern
        return None
    if number.isdigit():  # a plain number (the common case): no amount without a currency
        return None
    counted = _COUNT_AFTER_RE.match(text, match.end()) is not None
    if counted or _COUNT_BEFORE.search(text[max(0, match.start() - 12) : match.start()]):
        return None
    if _BUDGET_BEFORE.search(text[max(0, match.start() - 30) : match.start()]):
        return 0.8 if (_CJK_MULTIPLIED.search(number) or _GROUPED.search(number)) else None
    if _VI_MULTIPLIED.search(number):
        return 0.7
    if _CJK_MULTIPLIED.search(number) or _GROUPED.search(number):
        return 0.55
    return None


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """Checks after matching; the score to keep the match with, or ``None`` to drop it."""
    cls, name, score = pattern.cls, pattern.name, pattern.score
    value = text[start:end]
    if name == "money_number":
        if match is None:
            raise ValueError("a money_number match is checked with its match object")
        money = _money(match, text)
        if money is None or all(int(n) == 0 for n in re.findall(r"[0-9]+", value)):
            return None
        return money
    if cls == "commit_sha" and len(value) <= 12:
        if not (re.search(r"[0-9]", value) and re.search(r"[a-f]", value)):
            return None
        if has_context(text, start, end, SHA_CONTEXT) or _near_other_sha(text, start):
            return 0.85
        return None
    if cls == "error_code":
        if value in STANDARD_CODES or value in _POSIX or _STANDARD_PREFIX.match(value):
            return None
        if score < 0.5:
            words = set(value.split("_"))
            if words & _ERROR_REASONS or has_context(text, start, end, ERROR_CONTEXT):
                return 0.65
            return None
        return score
    if cls == "ticket_key":
        if name == "hash_number":
            if _has_word(text, start, end, _RANK_CONTEXT):
                return None
            if _has_word(text, start, end, _TICKET_CONTEXT) or len(value) >= 5:
                return 0.7
            return None
        prefix = value.split("-", 1)[0]
        if prefix in TICKET_STOP or _QUARTER.match(prefix):
            return None
        return score
    if cls == "date":
        if not valid_date(value):
            return None
        if name == "date_compact" and not has_context(
            text, start, end, ("date", "日期", "ngày", "on ")
        ):
            return None
        if name == "date_md_slash":
            return 0.7 if has_context(text, start, end, _DAY_CONTEXT) else None
        return score
    if cls == "ip":
        if "." not in value:
            return 0.8 if _valid_ipv6(value) else None
        if (
            not _private_ip(value)
            and _has_word(text, start, end, _VERSION_CONTEXT)
            and not _has_word(text, start, end, _IP_WORDS)
        ):
            return None
        if _private_ip(value) or has_context(text, start, end, _IP_CONTEXT) or ":" in value:
            return score
        return None
    if cls == "phone":
        digits = sum(ch.isdigit() for ch in value)
        if not 8 <= digits <= 15:
            return None
        return score
    if cls == "url":
        host = value.split("/")[0].lower()
        if name == "host" and host in PUBLIC_HOSTS and "/" not in value:
            return None
        if name == "host" and re.fullmatch(r"[a-z0-9.-]+", host) and is_reserved_domain(host):
            return None
        return score
    if cls == "money":
        numbers = re.findall(r"[0-9]+", value)
        if numbers and all(int(n) == 0 for n in numbers):
            return None
        return score
    if cls == "hostname":
        if value in _HOST_STOP:
            return None
        if name == "host_dashed":
            pieces = value.split("-")
            parts = {re.sub(r"[0-9]+$", "", part) for part in pieces}
            numbered = len(pieces) >= 3 and pieces[-1].isdigit() and len(pieces[-1]) <= 3
            if not (
                parts & _HOST_PARTS or numbered or has_context(text, start, end, _HOST_CONTEXT)
            ):
                return None
        elif re.fullmatch(r"[0-9a-f]+", value) or len(value) < 4:
            return None  # a hex id or a short token after "db", not a host
        return score
    if cls == "handle":
        bare = value[1:].lower()
        if bare in _HANDLE_STOP or ("." in bare and bare.split(".")[0] in _HANDLE_STOP):
            return None
        return score
    if cls == "channel":
        if score < 0.5:
            return 0.65 if has_context(text, start, end, _CHANNEL_CONTEXT) else None
        return score
    if cls == "national_id":
        if name == "tw_id":
            return score if tw_national_id_valid(value) else None
        if name == "cn_ric":
            return score if _stdnum("cn.ric", value.upper()) else None
        if name == "us_ssn":
            return score if _stdnum("us.ssn", value.replace(" ", "-")) else None
        if name == "vn_cccd":
            return 0.9 if has_context(text, start, end, _NATIONAL_CONTEXT) else score
        return score
    if cls == "business_id":
        context = has_context(text, start, end, _BUSINESS_CONTEXT)
        if name == "tw_ubn":
            if not _stdnum("tw.ubn", value):
                return None
            if context:
                return 0.9
            return None if valid_date(value) and _looks_like_date(value) else 0.6
        if name == "cn_uscc":
            return score if _stdnum("cn.uscc", value) else None
        if name == "vn_mst":
            if not _stdnum("vn.mst", value):
                return None
            return 0.9 if context or "-" in value else None
        return score
    return score


def _looks_like_date(value: str) -> bool:
    return bool(
        re.fullmatch(r"(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])", value)
    )
