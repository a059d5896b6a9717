"""Reading a messy card: title, meta lines, description, chat messages and numbered ACs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

AC_LINE = re.compile(r"^\s*AC\s*(\d+)\s*[:：.、)）]?\s*(.*)$")
CHAT_LINE = re.compile(r"^\s*@")
SEPARATOR = re.compile(r"^\s*(?:[-=＝─—_*]{2,}.*|.*[-=＝─—_*]{2,})\s*$")
META_KEYS = re.compile(
    r"(owner|reviewer|PM|提出|需求單位|窗口|設計|目標月份|預計版本|希望上線|優先度|標籤|負責人|"
    r"截止|版本)\s*[:：]",
    re.IGNORECASE,
)
HEADER_WORDS = re.compile(
    r"^(acceptance criteria|驗收條件|驗收標準|AC|描述|背景|現況|為什麼要做|規則|需求說明|說明)",
    re.IGNORECASE,
)
SENTENCE_END = re.compile(r"(?<=[。！？!?])")
CLAUSE_SPLIT = re.compile(r"[，；;。！？!?]|(?<!\d),|,(?!\d)")
NUMBERED_RULE = re.compile(r"^\s*\d+\s*[.、)）]\s*")


@dataclass
class AC:
    """One numbered acceptance criterion."""

    number: int
    text: str


@dataclass
class Sentence:
    """One description sentence; ``rule`` is true for an item of a numbered rule list."""

    text: str
    rule: bool = False

    @property
    def clauses(self) -> list[str]:
        return split_clauses(self.text)


@dataclass
class Card:
    """What the reviewer reads out of a card."""

    raw: str
    title: str
    meta: list[str] = field(default_factory=list)
    description: list[Sentence] = field(default_factory=list)
    chat: list[str] = field(default_factory=list)
    acs: list[AC] = field(default_factory=list)

    @property
    def description_text(self) -> str:
        return "".join(s.text for s in self.description)

    def ac(self, number: int) -> AC:
        for ac in self.acs:
            if ac.number == number:
                return ac
        raise KeyError(number)


def split_clauses(text: str) -> list[str]:
    """Clauses of a sentence, split on Chinese and Latin punctuation; empty ones dropped."""
    return [c.strip() for c in CLAUSE_SPLIT.split(text) if c.strip()]


def _is_header(line: str) -> bool:
    stripped = line.strip()
    if HEADER_WORDS.match(stripped) and len(stripped) <= 40:
        return True
    if stripped.endswith(("：", ":")) and len(stripped) <= 30:
        return True
    # An aside such as "（以下是週會後在討論串補的）".
    return stripped.startswith(("（", "(")) and stripped.endswith(("）", ")"))


def _chat_body(line: str) -> str:
    """The message of a chat line, without the "@someone 補充：" prefix."""
    text = line.strip().lstrip("@")
    head = text[:24]
    for colon in ("：", ":"):
        at = head.find(colon)
        if at != -1:
            return text[at + 1 :].strip()
    parts = text.split(maxsplit=1)
    return parts[1].strip() if len(parts) == 2 else ""


def _sentences(lines: list[tuple[str, bool]]) -> list[Sentence]:
    """Join wrapped lines (a line ending in a comma continues) and split into sentences."""
    joined: list[tuple[str, bool]] = []
    buffer, rule = "", False
    for text, is_rule in lines:
        if buffer and buffer.endswith(("，", ",", "、")):
            buffer += text
            continue
        if buffer:
            joined.append((buffer, rule))
        buffer, rule = text, is_rule
    if buffer:
        joined.append((buffer, rule))
    out: list[Sentence] = []
    for text, is_rule in joined:
        for part in SENTENCE_END.split(text):
            part = part.strip().rstrip("。！？!?～~").strip()
            if part:
                out.append(Sentence(part, is_rule))
    return out


def parse_card(raw: str) -> Card:
    """Split a card into its parts. Unknown lines count as description."""
    lines = [line.rstrip() for line in raw.splitlines()]
    non_empty = [line for line in lines if line.strip()]
    title = non_empty[0].strip() if non_empty else ""
    card = Card(raw=raw, title=title)
    description_lines: list[tuple[str, bool]] = []
    current_ac: AC | None = None
    seen_title = False
    for line in lines:
        stripped = line.strip()
        if not stripped:
            current_ac = None
            continue
        if not seen_title:
            seen_title = True
            continue
        match = AC_LINE.match(stripped)
        if match and match.group(2):
            current_ac = AC(int(match.group(1)), match.group(2).strip())
            card.acs.append(current_ac)
            continue
        if current_ac is not None and not CHAT_LINE.match(stripped) and not _is_header(stripped):
            current_ac.text += stripped  # a wrapped AC line
            continue
        current_ac = None
        if CHAT_LINE.match(stripped):
            body = _chat_body(stripped)
            if body:
                card.chat.append(body)
        elif SEPARATOR.match(stripped) or _is_header(stripped):
            continue
        elif META_KEYS.search(stripped):
            card.meta.append(stripped)
        else:
            is_rule = bool(NUMBERED_RULE.match(stripped))
            description_lines.append((NUMBERED_RULE.sub("", stripped), is_rule))
    card.description = _sentences(description_lines)
    return card
