"""Reaching a person or a team: messaging ids (LINE, WeChat, Zalo, Telegram… after their word,
and ``wxid_…``), chat handles (``@name``), channels (``#team-pay``, 「…」群組) and phone numbers
(international, Taiwan, China, Vietnam, the US).

Checks after matching: a chat mention, a code annotation or a CSS at-rule (``@here``,
``@param``, ``@media``) is not a handle; a one-word channel needs a context word; a phone has
8 to 15 digits.
"""

from __future__ import annotations

from caseforge.privacy.patterns.common import (
    HAN_CHARS,
    After,
    At,
    Match,
    Pattern,
    Row,
    any_digit,
    contains,
    has_context,
    split_words,
)

# Words that introduce an id of a messaging app: the value after them is the id.
_MESSAGING = (
    r"(?:LINE\s?ID|LINE|Line\s?ID|line\s?id|Line|WeChat\s?ID|WeChat|wechat|微信號|微信号|微信|"
    r"(?i:weixin)|Zalo(?:\s?ID)?|zalo|ZALO|Telegram|telegram|TG|Skype|skype|Kakao(?:Talk)?|WhatsApp|"
    r"whatsapp|Viber|viber)"
)

# The apps themselves: words of every chat's register, never a person's (privacy.distinct).
MESSAGING_APPS = (
    "line", "wechat", "微信", "weixin", "zalo", "telegram", "tg", "skype", "kakao", "whatsapp",
    "viber",
)  # fmt: skip

CHATS: tuple[Row, ...] = (
    # messaging ids and chat handles
    (
        "messaging_id",
        "messaging_after_word",
        rf"{_MESSAGING}\s{{0,2}}(?:ID|id|Id|號|号)?\s{{0,2}}[:：=]?\s{{0,2}}(?:是|為|为|là|la|is)?\s{{0,2}}"
        r"(?P<v>@?[A-Za-z][A-Za-z0-9._-]{2,30}[A-Za-z0-9]|\+?[0-9][0-9 .-]{6,14}[0-9])"
        r"(?![A-Za-z0-9_-]|\.[A-Za-z0-9])",
        0.85,
        After(MESSAGING_APPS),
    ),
    (
        "messaging_id",
        "wxid",
        r"(?<![A-Za-z0-9_])wxid_[a-z0-9]{6,20}(?![A-Za-z0-9_])",
        0.9,
        contains("wxid_"),
    ),
    (
        "handle",
        "handle",
        rf"(?<![0-9A-Za-z._%+\-@/]){'@'}(?:[A-Za-z][A-Za-z0-9._-]{{0,30}}[A-Za-z0-9]|[{HAN_CHARS}]{{1,4}})"
        r"(?![A-Za-z0-9-]*\.[A-Za-z]{2,}|[A-Za-z0-9@])",
        0.7,
        contains("@"),
    ),
    # chat channels and named group chats
    (
        "channel",
        "channel_slack",
        r"(?<![0-9A-Za-z&#/])#[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![A-Za-z0-9_-])",
        0.8,
        contains("#"),
    ),
    (
        "channel",
        "channel_word",
        r"(?<![0-9A-Za-z&#/])#[a-z][a-z0-9]{2,30}(?![A-Za-z0-9_-])",
        0.3,
        contains("#"),
    ),
    (
        "channel",
        "channel_group",
        r"[「『“](?P<v>[^」』”\n]{2,24})(?=[」』”]\s?(?:群組|群组|群|(?i:group|nhóm|nhom)(?![A-Za-z])))",
        0.75,
        contains("群", "group", "Group", "nhóm", "nhom"),
    ),
)

PHONES: tuple[Row, ...] = (
    # phones: international, Taiwan, China, Vietnam, US
    (
        "phone",
        "phone_intl",
        r"(?<![0-9A-Za-z+])\+[0-9]{1,3}[ .-]?(?:\(0?[0-9]{1,4}\)[ .-]?)?[0-9]{1,4}"
        r"(?:[ .-]?[0-9]{2,4}){1,4}(?![0-9A-Za-z])",
        0.8,
        contains("+"),
    ),
    (
        "phone",
        "phone_tw_mobile",
        r"(?<![0-9A-Za-z.,])09[0-9]{2}[ -]?[0-9]{3}[ -]?[0-9]{3}(?![0-9A-Za-z])",
        0.85,
        any_digit,
    ),
    (
        "phone",
        "phone_landline",
        r"(?<![0-9A-Za-z.,])(?:\(0[0-9]{1,2}\)\s?[0-9]{3,4}[ -]?[0-9]{4}"
        r"|0[2-8]-[0-9]{3,4}-?[0-9]{4})(?:\s?(?:#|ext\.?|分機|分机)\s?[0-9]{1,5})?(?![0-9A-Za-z])",
        0.8,
        any_digit,
    ),
    (
        "phone",
        "phone_cn_mobile",
        r"(?<![0-9A-Za-z.,])1[3-9][0-9][ -]?[0-9]{4}[ -]?[0-9]{4}(?![0-9A-Za-z])",
        0.8,
        any_digit,
    ),
    (
        "phone",
        "phone_vn",
        r"(?<![0-9A-Za-z.,])0[0-9]{2,3}[ .][0-9]{3,4}[ .][0-9]{3,4}(?![0-9A-Za-z]|[.,][0-9])",
        0.75,
        any_digit,
    ),
    (
        "phone",
        "phone_plain",
        r"(?<![0-9A-Za-z.,])0[0-9]{9,10}(?![0-9A-Za-z])",
        0.7,
        At(r"(?<![0-9A-Za-z.,])0[0-9]{9}"),
    ),
    (
        "phone",
        "phone_us",
        r"(?=[(2-9])(?<![0-9A-Za-z.,])(?:\([2-9][0-9]{2}\)\s?|[2-9][0-9]{2}[-.])[0-9]{3}[-.][0-9]{4}"
        r"(?![0-9A-Za-z]|[.,][0-9])",
        0.75,
        any_digit,
    ),
)

_HANDLE_STOP = frozenset(
    split_words(
        "here channel everyone all param return returns throws override deprecated media import "
        "test before after property staticmethod classmethod dataclass pytest app font-face "
        "keyframes mixin include extend apply tailwind types babel angular vue nestjs "
        "supports page 所有人 全体成员 全體成員"
    )
)
_CHANNEL_CONTEXT = ("channel", "頻道", "频道", "kênh", "kenh", "slack", "群", "discord", "teams")


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """Checks after matching a contact; the score to keep it with, or ``None`` to drop it."""
    cls, score = pattern.cls, pattern.score
    value = text[start:end]
    if cls == "phone":
        digits = sum(ch.isdigit() for ch in value)
        if not 8 <= digits <= 15:
            return None
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
    if cls == "messaging_id" and value.isalpha() and value[0].isupper():
        return None  # "WhatsApp Chat with …", "Teams Producer": a capitalised word, not an id
    return score
