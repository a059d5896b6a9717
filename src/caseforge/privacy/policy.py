"""The privacy policy: one place for what scan, surrogates, verify and audit must agree on.

- the redaction-mark families people actually use when they mask data by hand (a variant or
  a committed case must never carry one: a masked ticket reads like nothing the agent meets,
  and the pieces left can be put back together);
- the reserved domains, documentation address ranges and placeholder phone ranges that a
  surrogate may use and that are never a leak;
- the locale map between the languages a ticket is written in and Faker's locales;
- the structural values an overlap check never counts as shared (item numbers, flag counts,
  small integers that are not part of an amount or a date).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

# --- languages --------------------------------------------------------------------------------

# The languages caseforge reads tickets in, and the Faker locale for each one's surrogates.
LOCALES: dict[str, str] = {"zh-TW": "zh_TW", "zh-CN": "zh_CN", "vi": "vi_VN", "en": "en_US"}
_LOCALE_ALIASES: dict[str, str] = {
    "zh": "zh-TW",
    "zh-hant": "zh-TW",
    "zh-hans": "zh-CN",
    "zh_tw": "zh-TW",
    "zh_cn": "zh-CN",
    "vi-vn": "vi",
    "vi_vn": "vi",
    "en-us": "en",
    "en_us": "en",
}

_VI_LETTERS = re.compile(r"[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", re.IGNORECASE)
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SIMPLIFIED_ONLY = "这个们说时会对发开关还没问题让给过从见长东车门应该网点实现"
_TRADITIONAL_ONLY = "這個們說時會對發開關還沒問題讓給過從見長東車門應該網點實現"


def language(name: str) -> str:
    """The canonical language (``zh-TW``, ``zh-CN``, ``vi``, ``en``) that ``name`` means."""
    key = name.strip()
    for lang in LOCALES:
        if key.lower() == lang.lower():
            return lang
    found = _LOCALE_ALIASES.get(key.lower().replace(" ", ""))
    if found is None:
        raise ValueError(f"unsupported language {name!r} (use one of {', '.join(LOCALES)})")
    return found


def faker_locale(lang: str) -> str:
    """Faker's locale for a language (``zh-TW`` → ``zh_TW``); Faker locales pass through."""
    if lang in LOCALES.values():
        return lang
    return LOCALES[language(lang)]


def detect_language(text: str) -> str:
    """The language a ticket is most likely written in, from its script."""
    if _VI_LETTERS.search(text):
        return "vi"
    if _HAN.search(text):
        simplified = sum(text.count(c) for c in _SIMPLIFIED_ONLY)
        traditional = sum(text.count(c) for c in _TRADITIONAL_ONLY)
        return "zh-CN" if simplified > traditional else "zh-TW"
    return "en"


# --- reserved names ---------------------------------------------------------------------------

RESERVED_DOMAINS: tuple[str, ...] = ("example.com", "example.net", "example.org")
RESERVED_SUFFIXES: tuple[str, ...] = (".test", ".example", ".invalid", ".localhost")
DOC_NETS_V4: tuple[str, ...] = ("192.0.2", "198.51.100", "203.0.113")
_DOC_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)


def is_reserved_domain(host: str) -> bool:
    """A domain set aside for examples (RFC 2606/6761): never a real organisation's."""
    low = host.strip().lower().rstrip(".")
    return (
        low in RESERVED_DOMAINS
        or any(low.endswith("." + d) for d in RESERVED_DOMAINS)
        or low.endswith(RESERVED_SUFFIXES)
        or low in {s.lstrip(".") for s in RESERVED_SUFFIXES}
    )


def is_documentation_ip(value: str) -> bool:
    """An address from the documentation ranges (RFC 5737, RFC 3849)."""
    try:
        address = ipaddress.ip_address(value.split("/")[0])
    except ValueError:
        return False
    return any(address in net for net in _DOC_NETWORKS if net.version == address.version)


def is_fictional_phone(value: str) -> bool:
    """A North American number in 555-0100…0199, the range set aside for fiction."""
    digits = re.sub(r"[^0-9]", "", value)
    return bool(re.search(r"55501[0-9]{2}$", digits))


# --- structural values ------------------------------------------------------------------------

# Integers below this, when not part of an amount or a date, say nothing about a ticket: item
# numbers, counts of flags, "4 or 5 seconds". An overlap check never counts them as shared.
SMALL_INTEGER = 32


# --- redaction marks --------------------------------------------------------------------------

_H = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
_NUMERAL = "〇零一二三四五六七八九十百千萬万億亿兩两年月日號号"
_NAME_HAN = rf"[{_H}](?<![{_NUMERAL}])"  # a Han character that is not a numeral or date word
_DOTS = "○〇●◯◦•⚫⬤"
_O = "OＯ"  # a Latin O written for the circle (林O明)
_STARS = "*＊✱✲∗⁎"

# Words a placeholder in brackets is made of, in the languages caseforge reads.
_PLACEHOLDER_WORDS = (
    r"redacted|masked|removed|hidden|deleted|anonymi[sz]ed|censored|omitted|withheld|confidential|"
    r"name|full[ _-]?name|first[ _-]?name|last[ _-]?name|person|people|user(?:name)?|customer(?:[ _-]?name)?|"
    r"client(?:[ _-]?name)?|contact|email(?:[ _-]?address)?|e-mail|phone(?:[ _-]?number)?|mobile|tel|"
    r"address|location|city|company(?:[ _-]?name)?|organi[sz]ation|org|employer|account(?:[ _-]?(?:id|number))?|"
    r"id(?:[ _-]?number)?|ssn|national[ _-]?id|passport|card(?:[ _-]?number)?|credit[ _-]?card|iban|"
    r"date[ _-]?of[ _-]?birth|dob|birthday|ip(?:[ _-]?address)?|url|amount|price|date(?:[ _-]?time)?|"
    r"pii|nrp|us[ _-]ssn|phone[ _-]number|email[ _-]address|"
    r"姓名|名字|全名|人名|客戶(?:名稱|姓名)?|客户(?:名称|姓名)?|顧客|顾客|用戶|用户|會員|会员|聯絡人|联系人|"
    r"電話(?:號碼)?|电话(?:号码)?|手機(?:號碼)?|手机(?:号码)?|地址|信箱|郵箱|邮箱|電子郵件|电子邮件|"
    r"公司(?:名稱|名称)?|廠商|厂商|單位|单位|帳號|账号|賬號|身分證(?:字號)?|身份证(?:号)?|證號|证号|"
    r"金額|金额|日期|生日|卡號|卡号|統編|统编|已?隱藏|已?隐藏|已?刪除|已?删除|已?遮蔽|已?屏蔽|遮罩|"
    r"已?移除|保密|機密|机密|已?匿名|略|某某|手機號碼?|手机号码?|已?脫敏|已?脱敏|暱稱|昵称|用戶暱稱|用户昵称|"
    r"帳戶名稱|账户名称|真實姓名|真实姓名|"
    r"tên(?: khách hàng| người dùng| công ty)?|khách hàng|họ tên|số điện thoại|sđt|điện thoại|"
    r"địa chỉ|email|công ty|tài khoản|số tài khoản|cccd|cmnd|mã số thuế|đã ẩn|ẩn|đã xóa|bí mật|"
    r"ẩn danh|tên đăng nhập|biệt danh|số cccd"
)
_OPEN_CLOSE = (
    ("[", "]"),
    ("［", "］"),
    ("【", "】"),
    ("〔", "〕"),
    ("(", ")"),
    ("（", "）"),
    ("<", ">"),
    ("＜", "＞"),
    ("〈", "〉"),
    ("《", "》"),
    ("«", "»"),
)
_UPPER_ENTITY = (
    r"(?:[A-Z]+_)*(?:NAME|PERSON|EMAIL|PHONE|ADDRESS|CUSTOMER|CLIENT|USER|REDACTED|MASKED|REMOVED|"
    r"HIDDEN|ORG|ORGANI[SZ]ATION|COMPANY|ACCOUNT|SSN|CARD|IBAN|DOB|LOCATION|CITY|PII|NRP|"
    r"IP_ADDRESS|URL|DATE_TIME|CREDIT_CARD|ID_NUMBER|PASSPORT|CONTACT)(?:_[A-Z0-9]+)*"
)


def _brackets() -> str:
    parts = []
    for open_, close in _OPEN_CLOSE:
        o, c = re.escape(open_), re.escape(close)
        # one placeholder word, or several ([redacted email], [removed by admin], （已匿名）)
        parts.append(
            rf"{o}\s*(?:已|已經|已经)?(?i:{_PLACEHOLDER_WORDS})(?:[\s_-]+[\w\u3400-\u9fff]+){{0,3}}"
            rf"(?:\s*[#_-]?\s*[0-9]{{1,3}})?\s*{c}"
        )
        parts.append(rf"{o}\s*{_UPPER_ENTITY}\s*{c}")
    return "|".join(parts)


_STOCK_NAMES = (
    r"(?<![A-Za-z])REDACTED(?![A-Za-z])|[王張张李陳陈林黃黄劉刘吳吴趙赵周徐孫孙楊杨]某(?!些|天|處|处|種|种|个|個|年|月|日|次|地|時|时|位|人)(?:先生|小姐|女士|某)?|"
    r"張三|张三|李四|王五|趙六|赵六|某某(?:某)?(?:公司|先生|小姐|女士|人)?|某公司|某人|王小明|陳大文|陈大文|"
    r"(?:ABC|XYZ|XXX|ＸＸＸ)(?:公司|科技|集團|集团|股份有限公司)|"
    r"(?i:công ty (?:abc|xyz|xxx))|"
    r"(?:Nguy[ễe]n|Tr[ầa]n|L[êe]|Ph[ạa]m) (?:V[ăa]n|Th[ịi]) [ABCX](?![A-Za-zÀ-ỹ])|"
    r"(?<![A-Za-z])(?:John|Jane|Richard|Baby) Doe(?![A-Za-z])|(?<![A-Za-z])Foo Bar(?![A-Za-z])|"
    r"(?<![A-Za-z])(?i:lorem ipsum)"
)

# (family, pattern). Order matters only for which family a mark is reported under.
MASK_FAMILIES: tuple[tuple[str, str], ...] = (
    ("shade", r"[█▓▒░■▇▆▅▄▃▂▌▐]++(?!\s?[0-9]{1,3}\s?%)|_{4,}|＿{3,}"),
    # ○ 〇 ● • inside a name (王○明, 陳●●) or a number (0912-●●●-678)
    (
        "dot mask",
        rf"{_NAME_HAN}[{_DOTS}]+|[{_DOTS}]+{_NAME_HAN}|[0-9][-\s]?[{_DOTS}]{{2,}}"
        rf"|(?<=[{_H}])[{_O}]{{1,2}}(?=[{_H}])"
        rf"|[{_DOTS}]{{2,}}[-\s]?[0-9]|[{_DOTS}]{{3,}}",
    ),
    # * ＊ inside a name or a number (张**, j***@, 4111-****-1111); **bold** is markdown
    (
        "star mask",
        rf"(?<![*＊])(?:[{_H}A-Za-z0-9@.][{_STARS}]{{2,}}|[{_STARS}]{{2,}}[{_H}0-9@])(?![*＊])"
        rf"|[0-9][-\s][{_STARS}]{{2,}}|[{_STARS}]{{2,}}[-\s][0-9]"
        rf"|(?<![*＊{_H}A-Za-z0-9])[{_STARS}]{{3,}}(?![*＊{_H}A-Za-z0-9])"
        rf"|{_NAME_HAN}[{_STARS}](?![*＊{_H}])",
    ),
    # x X ｘ Ｘ × inside a name (林XX, 王X明) or a number (0912-xxx-678, A12xxxx789)
    (
        "x mask",
        rf"{_NAME_HAN}[XＸ×]{{1,3}}(?=[{_H}]|[^A-Za-z0-9]|$)(?![光射])"
        rf"|(?<![A-Za-z])[0-9]{{2,}}[-\s]?(?:[xX×]{{3,}}|[xX×]{{2,}}(?=[-\s][0-9]))"
        rf"|(?<![A-Za-z])(?:[xX×]{{3,}}|[xX×]{{2}}(?=[0-9]))[-\s]?[0-9]{{2,}}"
        rf"|(?<![A-Za-z0-9])(?:XXX+|ＸＸＸ+|xxx+)(?![A-Za-z0-9])",
    ),
    ("bracketed placeholder", _brackets()),
    (
        "template",
        r"\{\{\s*[^{}\n]{1,60}?\s*\}\}|\$\{\s*[A-Za-z_\u4e00-\u9fff][^{}\n]{0,40}\}"
        r"|(?<![{$\w])\{[A-Za-z_\u4e00-\u9fff][A-Za-z0-9_.\u4e00-\u9fff]{0,40}\}(?!\})"
        r"|%[A-Z][A-Z0-9_]{2,30}%|<<\s*[A-Za-z_\u4e00-\u9fff][^<>\n]{0,40}>>",
    ),
    ("stock placeholder name", _STOCK_NAMES),
)

_MASK_RE = re.compile(
    "|".join(f"(?P<g{i}>{rx})" for i, (_, rx) in enumerate(MASK_FAMILIES)), re.MULTILINE
)


@dataclass(frozen=True)
class Mark:
    """One redaction mark found in a text."""

    start: int
    end: int
    family: str
    text: str


_BOLD = re.compile(r"(?<![*\w])\*\*(?=[^*\s])([^*\n]{1,60}?)(?<=[^*\s])\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*(?=[^*\s])([^*\n]{1,40}?)(?<=[^*\s])\*(?![*\w])")
_CODE = re.compile(r"`[^`\n]{1,200}`")


def redaction_marks(text: str) -> list[Mark]:
    """Every redaction mark in ``text``, by position (markdown ``**bold**``, ``*italics*``
    and ```inline code``` are not masks)."""
    if "*" in text:
        text = _BOLD.sub(lambda m: "  " + m.group(1) + "  ", text)
        text = _ITALIC.sub(lambda m: " " + m.group(1) + " ", text)
    if "`" in text:
        text = _CODE.sub(lambda m: " " * len(m.group()), text)
    marks = []
    for match in _MASK_RE.finditer(text):
        group = match.lastgroup or "g0"
        family = MASK_FAMILIES[int(group[1:])][0]
        marks.append(Mark(match.start(), match.end(), family, match.group()))
    return marks


def has_redaction(text: str) -> bool:
    """Whether ``text`` carries any redaction mark (what a surrogate must never do)."""
    return bool(redaction_marks(text))
