"""Goal, scope in and scope out, read from the title, the description and the chat."""

from __future__ import annotations

import re

from clarifier_agent.card import AC, Card, split_clauses

OUT_MARKER = re.compile(
    r"(這次|這期|本期|本次|暫|先)?不做|先不要|先?不碰|(這次|本期|這期)?不動|"
    r"(之後|以後)?另(外)?開(一張)?(卡)?|(之後|以後|明年)再(說|做|議)|明年的事|"
    r"下一?(季|期|版)|二期(再加|再做)?|不在(這次|本次|本期|這期|這張)?的?範圍(內)?|範圍外|"
    r"out of scope",
    re.IGNORECASE,
)
IN_MARKER = re.compile(r"(這次|這期|本期|這張|本次)?只(做|處理|要|包含)")
QUESTION = re.compile(r"要不要|嗎$|[?？]$")

LEADING = re.compile(r"^(但是?|不過|而且?|所以|還有|另外|然後|至於|那麼?)\s*")
EDGE_WORDS = (
    "這次",
    "這期",
    "本期",
    "本次",
    "這張",
    "這個",
    "那個",
    "之後",
    "以後",
    "明年",
    "先",
    "也",
    "都",
    "就",
    "了",
    "的",
)
PRONOUNS = {"", "那", "這", "它", "這些", "那些", "這個", "那個", "這張"}
MONEY = re.compile(r"(NT\$|新台幣|\$)\s*[\d,]+(\.\d+)?\s*(元)?|[\d,]+\s*元")
PER_UNIT = re.compile(r"每(晚|日|天|月|週|筆|次|人|單)")
EVALUATIVE_TAIL = re.compile(r"(很|非常|蠻|滿|也|真的)?(重要|需要|必要|有用)$")
FILLER = re.compile(r"那邊|這邊")
IN_TAIL = re.compile(r"(跑得起來|能跑|能用|就好|即可|上線)$")
CJK_GAP = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")

INTENT = re.compile(r"這張要|這次要|想改成|希望|目標是|要讓|讓.{0,8}(可以|能)")
INTENT_PREFIX = re.compile(r"^(這張要|這次要|想改成|目標是|希望)")
MUST = re.compile(r"務必|一定要|必須|不得|不可以|不能")
BECAUSE = re.compile(r"^(所以|因此|因為這樣)")
COMPLAINT_QUOTE = re.compile(r"(抱怨|反映|大意都是|反應)[^「]{0,12}「([^」]+)」")
TITLE_TAG = re.compile(r"^\s*(【[^】]*】|\[[^\]]*\])\s*")
PARENTHETICAL = re.compile(r"（[^）]*）|\([^)]*\)")


def _strip_edges(text: str) -> str:
    text = text.strip(" 　：:、")
    changed = True
    while changed:
        changed = False
        match = LEADING.match(text)
        if match and match.group(0):
            text, changed = text[match.end() :], True
        for word in EDGE_WORDS:
            if text.startswith(word):
                text, changed = text[len(word) :], True
            if text.endswith(word):
                text, changed = text[: -len(word)], True
        text = text.strip(" 　：:、")
    return text


def _subject(text: str) -> str:
    """A short key phrase for a piece of scope: no amounts, fillers or verdicts."""
    text = LEADING.sub("", text.strip())
    if "是" in text:  # "電子報是 email" -> "電子報"
        text = text.split("是", 1)[0]
    text = MONEY.sub("", text)
    text = PER_UNIT.sub("", text)
    text = FILLER.sub("", text)
    text = _strip_edges(text)
    text = EVALUATIVE_TAIL.sub("", text)
    text = CJK_GAP.sub("", text.strip())
    text = text.replace("的檢查", "檢查")
    text = _strip_edges(text)
    return "" if text in PRONOUNS else text


def _pieces(card: Card) -> list[list[str]]:
    """Clause lists to look for scope in: each description sentence and each chat message."""
    pieces = [s.clauses for s in card.description]
    pieces += [split_clauses(message) for message in card.chat if not QUESTION.search(message)]
    return pieces


def scope_out(card: Card) -> list[str]:
    """What the card says this change does not do, as short phrases with the reason."""
    items: list[str] = []
    seen: set[str] = set()
    for clauses in _pieces(card):
        for k, clause in enumerate(clauses):
            marker = OUT_MARKER.search(clause)
            if not marker:
                continue
            subject = _subject(clause[: marker.start()])
            back = k - 1
            while not subject and back >= 0:
                if not OUT_MARKER.search(clauses[back]):
                    subject = _subject(clauses[back])
                back -= 1
            if subject and subject not in seen:
                seen.add(subject)
                items.append(f"{subject}（{marker.group(0)}）")
    return items


def _ac_scope(ac: AC) -> str:
    return ac.text.strip().rstrip("。.")


def scope_in(card: Card, excluded: set[int]) -> list[str]:
    """What the card says this change does: the stated focus, then each sound AC."""
    items: list[str] = []
    for clauses in _pieces(card):
        for clause in clauses:
            marker = IN_MARKER.search(clause)
            if marker:
                focus = IN_TAIL.sub("", _subject(clause[marker.end() :]))
                if focus and focus not in items:
                    items.append(focus)
    items += [_ac_scope(ac) for ac in card.acs if ac.number not in excluded]
    return items


def _title(card: Card) -> str:
    title = TITLE_TAG.sub("", card.title)
    title = PARENTHETICAL.sub("", title)
    title = re.sub(r"\s*[｜|]\s*", " ", title)
    title = re.sub(r"\s*[—–]+\s*", "，", title)
    return re.sub(r"[!！]+", "", title).strip(" 　：")


def goal(card: Card) -> str:
    """One line: the title, what the card wants, the pain it removes, and its hard rule."""
    narrative = [s for s in card.description if not s.rule]
    parts: list[str] = []
    intent = next((s.text for s in narrative if INTENT.search(s.text)), None)
    if intent is None and narrative:
        intent = narrative[0].text
    if intent:
        parts.append(INTENT_PREFIX.sub("", intent).strip("，, "))
    for sentence in narrative:
        quote = COMPLAINT_QUOTE.search(sentence.text)
        if quote:
            parts.append(f"解決使用者反映的「{quote.group(2)}」")
            break
    for sentence in narrative:
        clauses = sentence.clauses
        at = next((k for k, c in enumerate(clauses) if MUST.search(c)), None)
        if at is None:
            continue
        start = at
        for k in range(at, -1, -1):
            if BECAUSE.match(clauses[k]):
                start = k
                break
        rule = BECAUSE.sub("", "，".join(clauses[start:]))
        if not any(rule in part for part in parts):
            parts.append(rule)
        break
    head = _title(card)
    return f"{head}：{'；'.join(parts)}" if parts else head
