"""Finding identifiers in ticket text: the spans resynth replaces and audit looks for.

Presidio is used as the span finder only: one ``AnalyzerEngine`` per detector, on its no-op NLP
engine (no model is downloaded or loaded), with pattern recognizers written for this product and a
deny-list recognizer built from the case author's glossary. Every pattern is wrapped in ASCII
look-arounds (``(?<![0-9A-Za-z])…(?![0-9A-Za-z])``) instead of ``\\b``, because CJK characters
count as word characters and ``\\b`` fails between ``到`` and ``alice@…``. Patterns are
case-sensitive unless a part of them says ``(?i:…)``.

Context words (a short commit SHA needs ``commit``, ``sha``, ``revert``, ``提交``, ``commit của``
… nearby) are checked here, in a window around the match, since the no-op engine gives Presidio no
tokens to look at. The checks after matching (valid calendar date, valid IPv6, digit count of a
phone, stop-listed key prefixes) live here too, so Presidio stays a plain pattern runner.

Presidio takes about a second to import, so it is imported when the first detector is built, not
when this module is imported.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caseforge.errors import CaseforgeError, Problem

if TYPE_CHECKING:
    from presidio_analyzer import (
        AnalyzerEngine,
        EntityRecognizer,
        PatternRecognizer,
        RecognizerResult,
    )

CLASSES: tuple[str, ...] = (
    "person",
    "organization",
    "project",
    "feature",
    "commit_sha",
    "branch",
    "error_code",
    "ticket_key",
    "money",
    "date",
    "email",
    "phone",
    "url",
    "ip",
)

# Classes that only the glossary can find (there is no NER model).
NAME_CLASSES: tuple[str, ...] = ("person", "organization", "project", "feature")

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
    "projects": "project",
    "codename": "project",
    "codenames": "project",
    "features": "feature",
    "product": "feature",
    "products": "feature",
}

# The languages a detector can be asked for, and the Presidio language code each one runs under.
LANGUAGES: dict[str, str] = {"zh-TW": "zh", "zh-CN": "zh", "vi": "vi", "en": "en"}

# Which class wins when two spans cover exactly the same characters (lower wins).
_PRIORITY: dict[str, int] = {cls: i for i, cls in enumerate(CLASSES)}
_PRIORITY.update({"commit_sha": -9, "email": -8, "url": -7, "ip": -6, "date": -5, "money": -4})


@dataclass(frozen=True)
class Span:
    """One identifier found in a text: ``text[start:end]`` of class ``cls``."""

    start: int
    end: int
    cls: str
    text: str
    score: float

    def to_json(self) -> dict[str, Any]:
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
                raise ValueError(f"unknown class {key!r} (use one of {', '.join(CLASSES)})")
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
            message = f"unknown class {key!r} (use one of {', '.join(CLASSES)})"
            raise CaseforgeError(Problem(path, line + 1, col + 1, str(key), message))
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


# --- patterns ----------------------------------------------------------------------------------

_L = r"(?<![0-9A-Za-z])"  # no ASCII letter or digit just before
_R = r"(?![0-9A-Za-z])"  # no ASCII letter or digit just after
_VI_LETTER = r"[A-Za-zÀ-ỹ]"
_LATIN = "0-9A-Za-zÀ-ÖØ-öø-ɏḀ-ỿ"  # Latin letters with diacritics (Vietnamese included)

NUMBER = r"[0-9]{1,3}(?:[,.][0-9]{3})+(?:[.,][0-9]{1,2})?|[0-9]+(?:[.,][0-9]+)?"
_CUR_BEFORE = (
    r"(?:NT\$|NTD|US\$|USD|HK\$|HKD|S\$|SGD|A\$|C\$|RMB|CNY|TWD|VND|EUR|JPY|GBP|\$|¥|￥|€|£|₫)"
)
_MULT_CJK = r"(?:百萬|百万|千萬|千万|萬|万|億|亿|千)"
_MULT = rf"(?:{_MULT_CJK}|triệu|tỷ|nghìn|ngàn|[kKM](?![A-Za-z]))"
_CUR_CJK = (
    r"(?:元|塊錢|块钱|塊|块|美元|美金|台幣|臺幣|新台幣|新臺幣|人民幣|人民币|港幣|港币|日圓|日元|"
    r"歐元|欧元|越南盾|越盾)"
)
_CUR_AFTER = r"(?:USD|TWD|NTD|VND|VNĐ|VNđ|CNY|RMB|EUR|JPY|HKD|SGD|đồng|đ|dollars?|Đồng)"
_DASH = r"[~～–—-]"  # an amount range: NT$3,000~5,000, 3-5萬元
_NOT_MONEY_AFTER_VI = r"(?:người|lượt|lần|khách|bản|dòng|đơn|user|request|record|giờ|phút)"

_Y = r"(?:19|20)[0-9]{2}"
_MON = r"(?:0?[1-9]|1[0-2])"
_DAY = r"(?:0?[1-9]|[12][0-9]|3[01])"
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

# (class, pattern name, regex, base score). Scores below 0.5 need a context word to be kept.
PATTERNS: tuple[tuple[str, str, str, float], ...] = (
    # commit SHAs
    ("commit_sha", "sha_full", rf"{_L}(?:[0-9a-f]{{64}}|[0-9a-f]{{40}}|[0-9A-F]{{40}}){_R}", 0.95),
    ("commit_sha", "sha_short", rf"{_L}[0-9a-f]{{7,12}}{_R}", 0.3),
    # branches: a conventional prefix, or a dashed name next to the word branch / 分支 / nhánh
    (
        "branch",
        "branch_prefixed",
        r"(?<![0-9A-Za-z/._-])"
        r"(?:feature|features|feat|fix|bugfix|hotfix|release|releases|chore|refactor|perf|topic|wip)"
        r"/[A-Za-z0-9._/-]*[A-Za-z0-9]",
        0.85,
    ),
    (
        "branch",
        "branch_after_word",
        r"(?<=(?i:branch|分支|nhánh)\s{0,2}[:：]?\s{0,2}[`'\"「『]?)"
        r"(?=[A-Za-z0-9._/-]*[-_/])[A-Za-z0-9][A-Za-z0-9._/-]*[A-Za-z0-9](?![A-Za-z0-9])",
        0.6,
    ),
    (
        "branch",
        "branch_before_word",
        r"(?<![A-Za-z0-9._/-])(?=[A-Za-z0-9._/-]*[-_/])[A-Za-z0-9][A-Za-z0-9._/-]*[A-Za-z0-9]"
        r"(?=[`'\"」』]?\s{0,2}(?:分支|(?i:branch)))",
        0.6,
    ),
    # internal error codes (case-sensitive)
    (
        "error_code",
        "err_word",
        rf"{_L}(?:[A-Z][A-Z0-9]*[_-])*ERR(?:OR)?(?:[_-][A-Z0-9]+)+(?![0-9A-Za-z_])",
        0.85,
    ),
    ("error_code", "err_digits", rf"{_L}(?:[A-Z][A-Z0-9]{{1,9}}[_-])?ERR[0-9]{{2,6}}{_R}", 0.85),
    ("error_code", "e_digits", rf"{_L}(?:[A-Z][A-Z0-9]{{1,9}}[_-])?E[_-]?[0-9]{{3,6}}{_R}", 0.7),
    (
        "error_code",
        "snake_digits",
        rf"{_L}[A-Z][A-Z0-9]{{1,9}}(?:_[A-Z][A-Z0-9]*)*_[0-9]{{2,6}}(?![0-9A-Za-z_])",
        0.75,
    ),
    ("error_code", "snake_words", rf"{_L}[A-Z]{{2,}}(?:_[A-Z]{{2,}}){{1,5}}(?![0-9A-Za-z_])", 0.3),
    (
        "error_code",
        "lower_after_word",
        r"(?<=(?i:error code|error|code|錯誤碼|错误码|錯誤代碼|错误代码|錯誤|错误|mã lỗi|lỗi)"
        r"\s{0,2}[:：=]?\s{0,2}[`'\"「]?)[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![0-9A-Za-z_])",
        0.6,
    ),
    ("error_code", "hex_code", rf"{_L}0x[0-9A-Fa-f]{{4,8}}{_R}", 0.6),
    # ticket / project keys (case-sensitive)
    (
        "ticket_key",
        "key",
        rf"{_L}[A-Z][A-Z0-9]{{1,9}}(?:-[0-9]{{1,6}}){{1,3}}(?![0-9A-Za-z]|[-.][0-9])",
        0.85,
    ),
    ("ticket_key", "hash_number", r"(?<![0-9A-Za-z&#])#[0-9]{2,6}(?![0-9A-Za-z])", 0.5),
    # money
    (
        "money",
        "money_symbol_first",
        rf"{_L}{_CUR_BEFORE}\s?(?:{NUMBER})(?:\s?{_MULT})?"
        rf"(?:\s?{_DASH}\s?{_CUR_BEFORE}?(?:{NUMBER})(?:\s?{_MULT})?)?(?:\s?(?:元|đồng))?(?![0-9])",
        0.85,
    ),
    (
        "money",
        "money_cjk_unit",
        rf"(?<![0-9A-Za-z.,]){_CUR_BEFORE}?(?:(?:{NUMBER})\s?{_MULT_CJK}?\s?{_DASH}\s?)?"
        rf"(?:{NUMBER})\s?{_MULT_CJK}?\s?{_CUR_CJK}",
        0.85,
    ),
    (
        "money",
        "money_code_after",
        rf"(?<![0-9A-Za-z.,$]){_CUR_BEFORE}?(?:(?:{NUMBER})\s?{_MULT}?\s?{_DASH}\s?)?"
        rf"(?:{NUMBER})\s?{_MULT}?\s?{_CUR_AFTER}"
        rf"(?!{_VI_LETTER})",
        0.85,
    ),
    (
        "money",
        "money_vi_bare",
        rf"(?<![0-9A-Za-z.,])(?:{NUMBER})\s?(?:triệu|tỷ)(?!{_VI_LETTER})"
        rf"(?!\s?{_NOT_MONEY_AFTER_VI})",
        0.7,
    ),
    # dates
    ("date", "date_iso", rf"{_L}{_Y}-{_MON}-{_DAY}(?![0-9]|[-/.][0-9])", 0.9),
    ("date", "date_ymd", rf"{_L}{_Y}([/.]){_MON}\1{_DAY}(?![0-9]|[-/.][0-9])", 0.9),
    ("date", "date_dmy", rf"{_L}[0-9]{{1,2}}([/.-])[0-9]{{1,2}}\1{_Y}{_R}", 0.85),
    (
        "date",
        "date_cjk",
        rf"(?<![0-9])(?:{_Y}\s?年\s?)?{_MON}\s?月\s?{_DAY}\s?[日號号]",
        0.9,
    ),
    ("date", "date_cjk_month", rf"(?<![0-9]){_Y}\s?年\s?{_MON}\s?月(?!\s?[0-9])", 0.7),
    (
        "date",
        "date_vi",
        rf"(?<!{_VI_LETTER})(?i:ngày)\s+{_DAY}\s+(?i:tháng)\s+{_MON}"
        rf"(?:(?:\s*,\s*|\s+)(?i:năm)\s+{_Y}|\s*[,/]\s*{_Y})?(?![0-9])",
        0.9,
    ),
    (
        "date",
        "date_vi_no_ngay",
        rf"{_L}{_DAY}\s+(?i:tháng)\s+{_MON}(?:\s*,\s*|\s+)(?i:năm)\s+{_Y}(?![0-9])",
        0.85,
    ),
    (
        "date",
        "date_vi_month",
        rf"(?<!{_VI_LETTER})(?i:tháng)\s+{_MON}(?:\s*/\s*|\s+(?i:năm)\s+){_Y}(?![0-9])",
        0.7,
    ),
    ("date", "date_en_mdy", rf"{_L}{_MON_EN}\.?\s+{_DAY}{_ORD}?(?:,?\s+{_Y})?{_R}", 0.85),
    ("date", "date_en_dmy", rf"{_L}{_DAY}{_ORD}?\s+(?:of\s+)?{_MON_EN}\.?(?:,?\s+{_Y})?{_R}", 0.85),
    (
        "date",
        "date_en_month",
        r"(?<![0-9A-Za-z])(?:January|February|March|April|May|June|July|August|September|"
        rf"October|November|December)\s+{_Y}{_R}",
        0.7,
    ),
    # e-mails, URLs, hosts
    (
        "email",
        "email",
        r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])",
        0.95,
    ),
    ("url", "url_scheme", rf"{_L}(?:https?|ftp|ssh|git)://{_URL_CHARS}*{_URL_END}", 0.9),
    (
        "url",
        "url_www",
        rf"(?<![A-Za-z0-9.@/])www\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/{_URL_CHARS}*{_URL_END})?",
        0.85,
    ),
    (
        "url",
        "host",
        r"(?<![A-Za-z0-9.@/_-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+"
        r"(?:com|net|org|io|tw|cn|vn|dev|app|cloud|ai|internal|local|corp|lan|intra)"
        r"(?:\.(?:tw|cn|vn|hk|sg))?(?![A-Za-z0-9-]|\.[A-Za-z0-9])",
        0.55,
    ),
    # IP addresses
    (
        "ip",
        "ipv4",
        rf"(?<![0-9A-Za-z.]){_OCTET}(?:\.{_OCTET}){{3}}(?:/(?:3[0-2]|[12]?[0-9]))?"
        r"(?![0-9A-Za-z]|\.[0-9])",
        0.85,
    ),
    (
        "ip",
        "ipv6",
        r"(?<![0-9A-Za-z:])(?=(?:[0-9A-Fa-f]*:){2})[0-9A-Fa-f:]{3,39}(?![0-9A-Za-z:])",
        0.3,
    ),
    # phones: international, Taiwan, China, Vietnam, US
    (
        "phone",
        "phone_intl",
        r"(?<![0-9A-Za-z+])\+[0-9]{1,3}[ .-]?(?:\(0?[0-9]{1,4}\)[ .-]?)?[0-9]{1,4}"
        r"(?:[ .-]?[0-9]{2,4}){1,4}(?![0-9A-Za-z])",
        0.8,
    ),
    (
        "phone",
        "phone_tw_mobile",
        r"(?<![0-9A-Za-z.,])09[0-9]{2}[ -]?[0-9]{3}[ -]?[0-9]{3}(?![0-9A-Za-z])",
        0.85,
    ),
    (
        "phone",
        "phone_landline",
        r"(?<![0-9A-Za-z.,])(?:\(0[0-9]{1,2}\)\s?[0-9]{3,4}[ -]?[0-9]{4}"
        r"|0[2-8]-[0-9]{3,4}-?[0-9]{4})(?![0-9A-Za-z])",
        0.8,
    ),
    (
        "phone",
        "phone_cn_mobile",
        r"(?<![0-9A-Za-z.,])1[3-9][0-9][ -]?[0-9]{4}[ -]?[0-9]{4}(?![0-9A-Za-z])",
        0.8,
    ),
    (
        "phone",
        "phone_vn",
        r"(?<![0-9A-Za-z.,])0[0-9]{2,3}[ .][0-9]{3,4}[ .][0-9]{3,4}(?![0-9A-Za-z]|[.,][0-9])",
        0.75,
    ),
    ("phone", "phone_plain", r"(?<![0-9A-Za-z.,])0[0-9]{9,10}(?![0-9A-Za-z])", 0.7),
    (
        "phone",
        "phone_us",
        r"(?<![0-9A-Za-z.,])(?:\([2-9][0-9]{2}\)\s?|[2-9][0-9]{2}[-.])[0-9]{3}[-.][0-9]{4}"
        r"(?![0-9A-Za-z]|[.,][0-9])",
        0.75,
    ),
)


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
        "DECLINED DENIED TIMEOUT INVALID EXPIRED FAILED FAILURE NOT FOUND LIMIT EXCEEDED "
        "INSUFFICIENT UNAUTHORIZED FORBIDDEN UNAVAILABLE CONFLICT REJECTED ERROR MISSING "
        "DUPLICATE LOCKED OVERFLOW MISMATCH UNSUPPORTED ABORTED"
    )
)
# Prefixes of ``ABC-123`` that are standards, units or structure, not ticket keys.
TICKET_STOP = frozenset(
    _words(
        "AC TC UTF SHA ISO COVID GPT TLS SSL HTTP HTTPS IPV RFC AES RSA CVE MP PCI DSS OWASP "
        "WCAG ECMA IEC IEEE ANSI FIPS PEP JSR WIN SQL HDMI USB LTE ISBN GMT UTC CST PST EST JST "
        "ICT SEV PRI STEP CASE PHASE ROUND LEVEL TIER WEEK DAY TOP FY KPI OKR BT"
    )
)
_CONTEXT_BEFORE = 48
_CONTEXT_AFTER = 24


def presidio_language(lang: str) -> str:
    """The Presidio language code a ``--lang`` value runs under (``zh-TW`` → ``zh``)."""
    key = lang.strip().replace("_", "-")
    for name, code in LANGUAGES.items():
        if key.lower() == name.lower():
            return code
    if key.lower() in {"zh", "zh-hant", "zh-hans"}:
        return "zh"
    raise CaseforgeError(f"unsupported language {lang!r} (use one of {', '.join(LANGUAGES)})")


def _glossary_regex(terms: Sequence[str]) -> str:
    """One alternation for a class's glossary strings, longest first, CJK-safe boundaries.

    A string that starts (ends) with a Latin letter or digit must not continue a Latin word on
    that side; CJK strings match anywhere. Latin strings match without regard to case, runs of
    spaces match any white space, and both NFC and NFD spellings are matched.
    """
    variants: set[str] = set()
    for term in terms:
        variants.add(unicodedata.normalize("NFC", term))
        variants.add(unicodedata.normalize("NFD", term))
    parts: list[str] = []
    for term in sorted(variants, key=lambda t: (-len(t), t)):
        body = r"\s+".join(re.escape(word) for word in term.split())
        left = rf"(?<![{_LATIN}])" if re.match(rf"[{_LATIN}]", term) else ""
        right = rf"(?![{_LATIN}\u0300-\u036f])" if re.search(rf"[{_LATIN}]$", term) else ""
        parts.append(f"{left}{body}{right}")
    return "(?i:" + "|".join(parts) + ")"


def _presidio() -> Any:
    """Import Presidio (slow: about a second) the first time a detector is built."""
    import presidio_analyzer
    from presidio_analyzer.nlp_engine import NoOpNlpEngine

    return presidio_analyzer, NoOpNlpEngine


def _entity(cls: str, glossary: bool = False) -> str:
    return ("GLOSSARY_" if glossary else "CF_") + cls.upper()


_ENTITY_CLASS: dict[str, tuple[str, bool]] = {}
for _cls in CLASSES:
    _ENTITY_CLASS[_entity(_cls)] = (_cls, False)
    _ENTITY_CLASS[_entity(_cls, True)] = (_cls, True)


@dataclass(frozen=True)
class _Candidate:
    start: int
    end: int
    cls: str
    score: float
    pattern: str
    glossary: bool

    @property
    def length(self) -> int:
        return self.end - self.start


class IdentifierDetector:
    """Finds identifier spans in ticket text; one Presidio engine, built once and reused.

    ``scan`` returns spans sorted by position and never overlapping: among overlapping pattern
    matches the longest wins (then the higher score, then a fixed class order). Glossary spans are
    always kept, except one lying strictly inside a longer pattern span (an e-mail address or URL
    that contains the name), since replacing the whole address removes the name too.
    """

    def __init__(
        self,
        glossary: Glossary | None = None,
        languages: Sequence[str] = ("zh-TW", "zh-CN", "vi", "en"),
    ) -> None:
        if not languages:
            raise ValueError("at least one language is needed")
        self.languages = tuple(languages)
        codes: list[str] = []
        for lang in self.languages:
            code = presidio_language(lang)
            if code not in codes:
                codes.append(code)
        self._codes = tuple(codes)
        self.glossary = glossary or Glossary()
        presidio, noop = _presidio()
        self._pattern_cls = presidio.PatternRecognizer
        self._pattern = presidio.Pattern
        registry = presidio.RecognizerRegistry(
            supported_languages=list(codes), global_regex_flags=self._flags
        )
        for code in codes:
            for recognizer in self._pattern_recognizers(code):
                registry.add_recognizer(recognizer)
            for recognizer in self._glossary_recognizers(self.glossary, code):
                registry.add_recognizer(recognizer)
        nlp = noop(models=[{"lang_code": code, "model_name": "none"} for code in codes])
        self._engine: AnalyzerEngine = presidio.AnalyzerEngine(
            registry=registry, nlp_engine=nlp, supported_languages=list(codes)
        )

    # Presidio's default flags add IGNORECASE; codes and keys are case-sensitive here.
    _flags = int(re.DOTALL | re.MULTILINE)

    def _pattern_recognizers(self, code: str) -> list[PatternRecognizer]:
        by_class: dict[str, list[Any]] = {}
        for cls, name, rx, score in PATTERNS:
            by_class.setdefault(cls, []).append(self._pattern(name=name, regex=rx, score=score))
        return [
            self._pattern_cls(
                supported_entity=_entity(cls),
                name=f"caseforge_{cls}_{code}",
                supported_language=code,
                patterns=patterns,
                global_regex_flags=self._flags,
            )
            for cls, patterns in by_class.items()
        ]

    def _glossary_recognizers(self, glossary: Glossary, code: str) -> list[PatternRecognizer]:
        return [
            self._pattern_cls(
                supported_entity=_entity(cls, glossary=True),
                name=f"caseforge_glossary_{cls}_{code}",
                supported_language=code,
                patterns=[self._pattern(name="glossary", regex=_glossary_regex(terms), score=1.0)],
                global_regex_flags=self._flags,
            )
            for cls, terms in glossary.items()
        ]

    def scan(
        self, text: str, lang: str | None = None, *, glossary: Glossary | None = None
    ) -> list[Span]:
        """Every identifier in ``text``, sorted by ``start``, non-overlapping.

        ``lang`` is one of ``zh-TW``, ``zh-CN``, ``vi``, ``en`` (the first configured language when
        omitted); the patterns are the same for all, since tickets mix scripts. ``glossary`` adds
        strings for this call only, on top of the detector's own glossary.
        """
        code = presidio_language(lang) if lang else self._codes[0]
        if code not in self._codes:
            raise CaseforgeError(
                f"language {lang!r} is not enabled here (enabled: {', '.join(self.languages)})"
            )
        if not text:
            return []
        ad_hoc: list[EntityRecognizer] | None = None
        if glossary:
            ad_hoc = list(self._glossary_recognizers(glossary, code))
        results = self._engine.analyze(
            text=text, language=code, ad_hoc_recognizers=ad_hoc, score_threshold=0.0
        )
        candidates = [c for c in (self._candidate(text, r) for r in results) if c is not None]
        return [
            Span(c.start, c.end, c.cls, text[c.start : c.end], c.score)
            for c in _resolve(candidates)
        ]

    def _candidate(self, text: str, result: RecognizerResult) -> _Candidate | None:
        cls, from_glossary = _ENTITY_CLASS.get(result.entity_type, ("", False))
        if not cls:
            return None
        start, end = int(result.start), int(result.end)
        score = float(result.score)
        if from_glossary:
            return _Candidate(start, end, cls, score, "glossary", True)
        checked = _check(cls, text, start, end, score)
        if checked is None:
            return None
        return _Candidate(start, end, cls, checked, "", False)


def _window(text: str, start: int, end: int) -> str:
    """The text around a match on the same line, lower-cased, the match itself left out."""
    before = text[max(0, start - _CONTEXT_BEFORE) : start]
    after = text[end : end + _CONTEXT_AFTER]
    before = before.rsplit("\n", 1)[-1]
    after = after.split("\n", 1)[0]
    return f"{before} \x00 {after}".lower()


def _has_context(text: str, start: int, end: int, words: Sequence[str]) -> bool:
    window = _window(text, start, end)
    return any(word in window for word in words)


def _check(cls: str, text: str, start: int, end: int, score: float) -> float | None:
    """Checks after matching; the score to keep the match with, or ``None`` to drop it."""
    value = text[start:end]
    if cls == "commit_sha" and len(value) <= 12:
        if not (re.search(r"[0-9]", value) and re.search(r"[a-f]", value)):
            return None
        if _has_context(text, start, end, SHA_CONTEXT) or _near_other_sha(text, start):
            return 0.85
        return None
    if cls == "error_code" and score < 0.5:
        words = set(value.split("_"))
        if words & _ERROR_REASONS or _has_context(text, start, end, ERROR_CONTEXT):
            return 0.65
        return None
    if cls == "ticket_key" and value.split("-", 1)[0] in TICKET_STOP:
        return None
    if cls == "date" and not _valid_date(value):
        return None
    if cls == "ip" and "." not in value:
        return 0.8 if _valid_ipv6(value) else None
    if cls == "phone":
        digits = sum(ch.isdigit() for ch in value)
        if not 8 <= digits <= 15:
            return None
    if cls == "url" and _reserved_host(value):
        return None
    if cls == "money":
        numbers = re.findall(r"[0-9]+", value)
        if not numbers or all(int(n) == 0 for n in numbers):
            return None
    return score


def _reserved_host(value: str) -> bool:
    """A bare host name that is already a placeholder (``example.com``, ``shop.test``)."""
    host = value.lower()
    if not re.fullmatch(r"[a-z0-9.-]+", host):
        return False
    return host.split(".")[-1] in ("test", "example", "invalid", "localhost") or any(
        host == d or host.endswith("." + d) for d in ("example.com", "example.net", "example.org")
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
    return _has_context(text, prev_start, prev_end, SHA_CONTEXT) or _near_other_sha(
        text, prev_start, depth + 1
    )


_SHA_LIST = re.compile(
    r"(?<![0-9A-Za-z])([0-9a-f]{7,40})(?:\s*(?:[,、/，;&]|and|和|與|与|và)\s*|\s+)$"
)


def _valid_date(value: str) -> bool:
    numbers = [int(n) for n in re.findall(r"[0-9]+", value)]
    if re.fullmatch(r"[0-9]{1,2}[/.-][0-9]{1,2}[/.-][0-9]{4}", value):
        a, b, year = numbers
        return _is_date(year, b, a) or _is_date(year, a, b)
    if re.fullmatch(r"[0-9]{4}[/.-][0-9]{1,2}[/.-][0-9]{1,2}", value):
        year, month, day = numbers
        return _is_date(year, month, day)
    return True  # word forms: the pattern already bounds day and month


def _is_date(year: int, month: int, day: int) -> bool:
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    return True


def _valid_ipv6(value: str) -> bool:
    if value.count(":") < 2 or not ("::" in value or value.count(":") == 7):
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


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
    final_glossary: list[_Candidate] = []
    dropped: set[_Candidate] = set()
    for g in kept_glossary:
        container = next(
            (
                p
                for p in kept_patterns
                if p.start <= g.start and g.end <= p.end and p.length > g.length
            ),
            None,
        )
        if container is not None:
            continue
        final_glossary.append(g)
        dropped.update(p for p in kept_patterns if p.start < g.end and g.start < p.end)
    kept = final_glossary + [p for p in kept_patterns if p not in dropped]
    return sorted(kept, key=lambda c: c.start)


def _greedy(ordered: Iterable[_Candidate]) -> list[_Candidate]:
    kept: list[_Candidate] = []
    for cand in ordered:
        if all(cand.end <= k.start or k.end <= cand.start for k in kept):
            kept.append(cand)
    return kept
