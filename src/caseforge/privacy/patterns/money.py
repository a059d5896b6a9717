"""Money: amounts in digits with a currency before or after them, a multiplier (``3萬``,
``2,5 triệu``, ``1.28M``) or grouping of millions, ranges (``NT$3,000~5,000``), decimal
amounts, and amounts in Chinese numerals (``一百二十八萬元``).

Checks after matching: one pattern reads every number written in digits and ``_money`` tells
an amount apart — a currency, else a multiplier or grouping of millions, unless a count word
follows or precedes it (``3萬人``, ``日活约 3 万``); a budget word before it (``預算``)
raises the score. Zero is never an amount.
"""

from __future__ import annotations

import re

from caseforge.privacy import values
from caseforge.privacy.patterns.common import (
    CN_DIGIT,
    VI_LETTER,
    Match,
    Pattern,
    Row,
    any_digit,
)

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
# Classifiers after a number that make it a count, not an amount (3萬人, 12万次请求).
_COUNT_CJK = (
    r"人|位|名|個|个|次|筆|笔|件|台|張|张|條|条|份|則|则|篇|頁|页|行|列|筆資料|用戶|用户|會員|会员|"
    r"訂單|订单|單|单|家|間|间|天|小時|小时|分鐘|分钟|秒|年|月|週|周|倍|%|％|字|則|次请求|requests?|users?"
)
_CN_NUMERAL = rf"[{CN_DIGIT}十百千萬万億亿壹贰貳叁參肆伍陆陸柒捌玖拾佰仟]"
_HAN_DIGIT = re.compile(f"[{CN_DIGIT}十]")

TABLE: tuple[Row, ...] = (
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
        rf"(?:\s?(?P<after>{_CUR_CJK}|{_CUR_AFTER}(?!{VI_LETTER})))?(?![0-9])",
        0.85,
        any_digit,
    ),
    (
        "money",
        "money_decimal",
        r"(?<![0-9A-Za-z.:/-])(?:(?<![0-9],)[0-9]{3}|[0-9]{4,9})[.,][0-9]{2}(?![0-9]|[.,][0-9])"
        r"(?!\s?(?:%|％|ms|s\b|sec|kb|mb|gb|tb|km|kg|mm|cm|m\b|px|fps|°|度|秒|分|倍))",
        0.55,
        any_digit,
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
    """Checks after matching an amount; the score to keep it with, or ``None`` to drop it."""
    value = text[start:end]
    if pattern.name == "money_number":
        if match is None:
            raise ValueError("a money_number match is checked with its match object")
        money = _money(match, text)
        if money is None or all(int(n) == 0 for n in re.findall(r"[0-9]+", value)):
            return None
        return money
    numbers = re.findall(r"[0-9]+", value)
    if numbers and all(int(n) == 0 for n in numbers):
        return None
    return pattern.score
