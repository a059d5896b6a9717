"""The reviewer's rules: vague wording, opposed stances, and numeric contradictions.

Every rule reads words and patterns of the card; none knows a case id or an AC number.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from clarifier_agent.card import Sentence

# --- unverifiable: a quality word with nothing to measure it by -------------------------

VAGUE = re.compile(
    r"順暢|流暢|友善|好用|易用|直覺|好上手|容易上手|盡量|盡可能|適當|適度|良好|快速|迅速|很快|"
    r"有質感|質感|夠專業|專業感|美觀|好看|漂亮|吸引人|吸睛|清楚易懂|簡潔|舒服|舒適|人性化|"
    r"體驗要好|體驗.{0,2}佳|要好$|更好|合理的?|穩定|足夠|大幅|明顯"
)
# A measurable criterion: a number (with or without a unit), a count written in words, or
# an exact text the screen must show.
MEASURABLE = re.compile(
    r"\d|[一二兩三四五六七八九十百千]\s*(次|秒|分鐘|小時|天|個|筆|字|步|%)|"
    r"(顯示|出現|提示)[^，。]{0,6}「[^」]+」"
)


def vague_words(text: str) -> list[str]:
    """The vague quality words in an AC when it gives no measurable criterion, else []."""
    found = [m.group(0) for m in VAGUE.finditer(text)]
    if not found or MEASURABLE.search(text):
        return []
    return found


# --- conflict / mismatch: opposed stances on one dimension -----------------------------


@dataclass(frozen=True)
class Dimension:
    """A question an AC can take one of two opposite stances on.

    ``first`` is checked before ``second``: it holds the negated forms (e.g. "no usage
    limit") that would otherwise also match the plain form of the other side.
    ``context``, when set, must appear in the same text for a stance to count.
    """

    name: str
    first: tuple[str, re.Pattern[str]]
    second: tuple[str, re.Pattern[str]]
    context: re.Pattern[str] | None = None

    def stance(self, text: str) -> tuple[str, str] | None:
        """``(stance, matched words)`` or None when the text takes no stance."""
        if self.context is not None and not self.context.search(text):
            return None
        for label, pattern in (self.first, self.second):
            match = pattern.search(text)
            if match:
                return label, match.group(0)
        return None


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension(
        "usage count",
        (
            "unlimited",
            re.compile(
                r"(沒有|無|不設|不限|不限制)[^，。]{0,6}(次數|上限|限制)|無限次|不限次數|"
                r"重複(套用|使用|領取|兌換)|可.{0,4}無限"
            ),
        ),
        (
            "limited",
            re.compile(
                r"(只能|僅能|僅限|限|最多)[^，。]{0,8}一次|一次為限|不得重複|"
                r"(使用|套用|兌換)次數(限制|上限)|(限制|限定)[^，。]{0,4}(使用|套用)?次數"
            ),
        ),
    ),
    Dimension(
        "approval before publishing",
        (
            "immediate",
            re.compile(
                r"立即(發布|公開|上架|上線|生效)|馬上[^，。]{0,6}(公開|上架|上線|生效)|"
                r"直接(公開|發布|上架|上線)|不(必|需|用)(等待|經過|經)[^，。]{0,8}|免審核?|"
                r"不需(要)?審核"
            ),
        ),
        (
            "approval required",
            re.compile(
                r"(核准|審核通過)[^。；]{0,8}才|要經[^，。]{0,8}(核准|審核)|"
                r"(須|需|必須)經[^，。]{0,8}(核准|審核)|未經[^，。]{0,6}(核准|審核)[^，。]{0,6}不"
            ),
        ),
    ),
    Dimension(
        "default on/off",
        ("off", re.compile(r"(預設|默認)(值)?(為|是)?\s*(關閉|關|停用|不開啟|不勾選|未勾選)")),
        ("on", re.compile(r"(預設|默認)(值)?(為|是)?\s*(開啟|打開|啟用|開|勾選)")),
    ),
    Dimension(
        "approver away",
        (
            "return or wait",
            re.compile(
                r"退回[^，。]{0,4}(申請人|送件人|提出人)|等[^，。]{0,8}(銷假|回來|復職)|"
                r"暫停[^，。]{0,4}(簽核|審核)"
            ),
        ),
        (
            "forward to deputy",
            re.compile(r"轉(給|交|到|由)?[^，。]{0,14}代理人|代理人[^，。]{0,4}(代簽|簽核|處理)"),
        ),
        context=re.compile(r"請假|休假|不在|出差|缺席"),
    ),
    Dimension(
        "login",
        ("guest", re.compile(r"免登入|不(需|用|必)登入|訪客[^，。]{0,4}(可|能)")),
        ("login required", re.compile(r"(需|須|必須|要)(先)?登入|登入後才")),
    ),
    Dimension(
        "required field",
        ("optional", re.compile(r"選填|非必填|可(以)?不填")),
        ("required", re.compile(r"必填")),
    ),
    Dimension(
        "who may do it",
        (
            "everyone",
            re.compile(r"(所有|任何)(人|使用者|會員|用戶)[^，。]{0,4}(都)?(可|能)"),
        ),
        (
            "restricted",
            re.compile(r"(只有|僅|限)[^，。]{0,4}(管理員|主管|本人|admin)[^，。]{0,4}(可|能)"),
        ),
    ),
)

# Words that make a description sentence a requirement rather than background.
NORMATIVE = re.compile(r"務必|必須|一定要|一定得|需要|須|要|不能|不可|不得|不要|只能|應|至少|最多")

STOP_BIGRAMS = frozenset({"使用", "可以", "系統", "顯示", "之後", "以後", "時候", "一個", "所有"})
CJK_OR_WORD = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9]+")


def bigrams(text: str) -> set[str]:
    """Character bigrams of the CJK runs (Latin words count as one unit)."""
    units = CJK_OR_WORD.findall(text)
    grams = {a + b for a, b in itertools.pairwise(units)}
    return grams - STOP_BIGRAMS


def same_subject(a: str, b: str, a_words: str, b_words: str) -> bool:
    """Two texts talk about the same thing: at least two shared bigrams besides the stance."""
    shared = bigrams(a.replace(a_words, " ")) & bigrams(b.replace(b_words, " "))
    return len(shared) >= 2


def description_stance(dimension: Dimension, description: list[Sentence]) -> tuple[str, str] | None:
    """The stance the description takes as a requirement (background sentences do not count)."""
    for sentence in description:
        if not NORMATIVE.search(sentence.text):
            continue
        found = dimension.stance(sentence.text)
        if found:
            return found[0], sentence.text
    return None


# --- mismatch by numbers: kept for N, deleted after M < N --------------------------------

UNIT_DAYS = {"年": 365, "個月": 30, "月": 30, "週": 7, "周": 7, "天": 1, "日": 1}
DURATION = r"(\d+)\s*(年|個月|月|週|周|天|日)"
KEEP = re.compile(r"(保存|保留|留存|存放)[^，。\d]{0,6}" + DURATION)
DELETE_AFTER = re.compile(DURATION + r"(後|以後|之後)?[^，。]{0,12}(刪除|清除|移除|銷毀|清空)")
RECORD_NOUNS = re.compile(r"附件|檔案|電子檔|單據|資料|紀錄|記錄|收據|發票|影片|照片|log", re.I)


def _days(number: str, unit: str) -> int:
    return int(number) * UNIT_DAYS[unit]


def retention_mismatch(ac_text: str, description: list[Sentence]) -> str | None:
    """Why the AC deletes records sooner than the description says to keep them, or None."""
    deleted = DELETE_AFTER.search(ac_text)
    if not deleted:
        return None
    ac_nouns = set(RECORD_NOUNS.findall(ac_text))
    for sentence in description:
        kept = KEEP.search(sentence.text)
        if not kept or not ac_nouns & set(RECORD_NOUNS.findall(sentence.text)):
            continue
        if _days(deleted.group(1), deleted.group(2)) < _days(kept.group(2), kept.group(3)):
            return (
                f"deletes after {deleted.group(1)}{deleted.group(2)}, "
                f"but the description keeps them {kept.group(2)}{kept.group(3)}: {sentence.text}"
            )
    return None


# --- mismatch by numbers: a review threshold that moved ----------------------------------

THRESHOLD = re.compile(
    r"(超過|高於|大於|滿|以上)\s*(NT\$|新台幣|\$)?\s*([\d,]+)\s*(元)?[^。]{0,30}?(覆核|核准|審核|簽核)"
)


def threshold_mismatch(ac_text: str, description: list[Sentence]) -> str | None:
    """Why the AC sends things to review above a different amount than the description."""
    found = THRESHOLD.search(ac_text)
    if not found:
        return None
    amount, step = found.group(3).replace(",", ""), found.group(5)
    for sentence in description:
        for other in THRESHOLD.finditer(sentence.text):
            if other.group(5) == step and other.group(3).replace(",", "") != amount:
                return f"reviews above {amount}, the description above {other.group(3)}"
    return None
