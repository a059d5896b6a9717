"""Secrets: a pasted password, API key, token or coupon code (class ``secret``).

Three ways one is written, in the manner of detect-secrets' plugins:

- after its word, in any of the four languages (``password: TgPay#2611db``, ``mật khẩu
  HoaSen@2026``, ``優惠碼 SORRY300``, ``api key = …``): the value must hold a letter and a
  digit or a symbol, so ``password: reset`` is not one;
- by a vendor's prefix (``sk_live_…``, ``pk_prod_…``, ``AKIA…``, ``ghp_…``, ``xoxb-…``,
  ``AIza…``, a JWT's ``eyJ….….…``);
- as a long random token: 20 characters or more of upper- and lower-case letters and digits
  whose Shannon entropy is high (a commit SHA, hex only, is not one);
- in a password's shape with no word before it: 8 to 32 characters mixing upper- and
  lower-case letters, digits and a symbol (``Wint3r!Otter#41``), not an e-mail address.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from caseforge.privacy.patterns.common import (
    After,
    L,
    Match,
    Pattern,
    R,
    Row,
    always,
    any_word,
    contains,
)

_WORDS = (
    "password", "passwd", "pwd", "passcode", "pass", "api key", "apikey", "api_key", "token",
    "secret", "key", "coupon", "promo code", "voucher", "code", "mật khẩu", "mat khau", "mk",
    "khóa", "mã giảm giá", "mã", "密碼", "密码", "口令", "優惠碼", "优惠码", "折扣碼", "折扣码",
    "兌換碼", "兑换码", "序號", "序号", "代碼", "代码", "券碼", "券码", "pw", "輸入", "输入",
    "nhập",
)  # fmt: skip

_VALUE = r"[^\s,，。;；'\"“”‘’()（）<>\[\]{}|、]{4,64}"
_KEYWORD_ROW = (
    any_word(_WORDS)
    + r"\s{0,2}(?:[:：=]|是|為|为|là|la|is)?\s{0,2}(?:(?:那張|那组|那組|这组|這組)\s{0,2})?"
    rf"(?P<v>{_VALUE}){R}"
)

TABLE: tuple[Row, ...] = (
    ("secret", "secret_after_word", _KEYWORD_ROW, 0.8, After(tuple(w.lower() for w in _WORDS))),
    (
        "secret",
        "vendor_key",
        rf"{L}(?:(?:sk|pk|rk)_(?:live|test|prod)_[0-9A-Za-z]{{8,}}|AKIA[0-9A-Z]{{16}}|"
        r"gh[pousr]_[0-9A-Za-z]{30,}|xox[abpr]-[0-9A-Za-z-]{10,}|AIza[0-9A-Za-z_\-]{30,}|"
        rf"eyJ[0-9A-Za-z_-]{{10,}}\.[0-9A-Za-z_-]{{10,}}\.[0-9A-Za-z_-]{{5,}}){R}",
        0.95,
        contains("_live_", "_test_", "_prod_", "AKIA", "gh", "xox", "AIza", "eyJ"),
    ),
    ("secret", "random_token", rf"{L}[0-9A-Za-z+/_\-]{{20,128}}{R}", 0.7, always),
    # a password's shape, with no word before it: letters, digits and a symbol, mixed case
    (
        "secret",
        "password_shape",
        r"(?<![0-9A-Za-z!@#$%^&*._-])(?=[^\s]*[0-9])(?=[^\s]*[!@#$%^&*])(?=[^\s]*[a-z])"
        r"(?=[^\s]*[A-Z])[0-9A-Za-z!@#$%^&*._-]{8,32}(?![0-9A-Za-z!@#$%^&*._-])",
        0.75,
        contains("!", "@", "#", "$", "%", "^", "&", "*"),
    ),
)

_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f\u3400-\u9fff]")
_DIGIT = re.compile(r"[0-9]")
_SYMBOL = re.compile(r"[!@#$%^&*+=?~_\-]")


def entropy(text: str) -> float:
    """Shannon entropy of ``text``, in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """Checks after matching a secret; the score to keep it with, or ``None`` to drop it."""
    value = text[start:end]
    if pattern.name == "secret_after_word":
        if "://" in value or ("@" in value and "." in value.split("@")[-1]):
            return None  # a URL or an e-mail address has its own class
        mixed_case = re.search("[a-z]", value) and re.search("[A-Z]", value)
        if not (
            _LETTER.search(value)
            and (_DIGIT.search(value) or (mixed_case and _SYMBOL.search(value)))
        ):
            return None  # "password: reset", "code 404", "card_declined" are words and numbers
        if value.isdigit() or re.fullmatch(r"[0-9.]+", value):
            return None
        return pattern.score
    if pattern.name == "password_shape":
        if re.search(r"@[\w-]+\.[A-Za-z]", value) or value.startswith("@"):
            return None  # an e-mail address, a handle
        return pattern.score
    if pattern.name == "random_token":
        kinds = sum(bool(re.search(p, value)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
        if kinds < 3 or entropy(value) < 3.8 or "/" in value.strip("/"):
            return None  # a path, a word with a number, a SHA (hex, one case) is not a secret
        return pattern.score
    return pattern.score
