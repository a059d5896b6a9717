"""National and business ids: the Taiwanese id, the PRC resident id, the Vietnamese CCCD and
the US SSN; the Taiwanese 統一編號, the PRC unified social credit code (USCC) and the
Vietnamese tax code (MST).

Checks after matching: each format's checksum where it has one (python-stdnum, and the
Taiwanese id's letter table); a 統一編號 that reads as a date (``20260305``) needs a context
word (``統編``, ``tax id``), an MST needs one unless it carries its branch suffix (``-001``),
and a context word makes a CCCD certain.
"""

from __future__ import annotations

import re

from caseforge.privacy.patterns.common import At, L, Match, Pattern, R, Row, has_context
from caseforge.privacy.patterns.dates import valid_date

TABLE: tuple[Row, ...] = (
    # national ids (checksums where the format has one)
    (
        "national_id",
        "tw_id",
        rf"{L}[A-Z][1289][0-9]{{8}}{R}",
        0.9,
        At(r"(?<![0-9A-Za-z])[A-Z][1289][0-9]{8}"),
    ),
    (
        "national_id",
        "cn_ric",
        rf"{L}[1-9][0-9]{{5}}(?:19|20)[0-9]{{2}}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{{3}}[0-9Xx]{R}",
        0.9,
        At(r"(?<![0-9A-Za-z])[1-9][0-9]{16}"),
    ),
    (
        "national_id",
        "vn_cccd",
        rf"(?<![0-9A-Za-z.,])0(?:0[1-9]|[1-8][0-9]|9[0-6])[0-3][0-9]{{8}}{R}",
        0.8,
        At(r"(?<![0-9A-Za-z.,])0[0-9]{11}"),
    ),
    (
        "national_id",
        "us_ssn",
        r"(?<![0-9A-Za-z-])(?!000|666|9)[0-9]{3}([- ])(?!00)[0-9]{2}\1(?!0000)[0-9]{4}(?![0-9A-Za-z-])",
        0.8,
        At(r"(?<![0-9A-Za-z-])[0-9]{3}[- ][0-9]{2}[- ][0-9]{4}"),
    ),
    # business ids
    (
        "business_id",
        "tw_ubn",
        rf"{L}[0-9]{{8}}{R}",
        0.4,
        At(r"(?<![0-9A-Za-z])[0-9]{8}(?![0-9A-Za-z])"),
    ),
    (
        "business_id",
        "cn_uscc",
        rf"{L}[0-9A-HJ-NPQRTUWXY]{{2}}[0-9]{{6}}[0-9A-HJ-NPQRTUWXY]{{10}}{R}",
        0.9,
        At(r"[0-9A-Z]{18}"),
    ),
    (
        "business_id",
        "vn_mst",
        rf"{L}[0-9]{{10}}(?:-[0-9]{{3}})?{R}",
        0.4,
        At(r"(?<![0-9A-Za-z])[0-9]{10}"),
    ),
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


def _looks_like_date(value: str) -> bool:
    return bool(
        re.fullmatch(r"(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])", value)
    )


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """Checks after matching an id; the score to keep it with, or ``None`` to drop it."""
    cls, name, score = pattern.cls, pattern.name, pattern.score
    value = text[start:end]
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
