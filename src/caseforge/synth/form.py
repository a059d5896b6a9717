"""The form of a case's text, in counts, never content: a chat log, an email thread, meeting
notes or a ticket. ``resynth`` records it in the structure contract, asks for the same form in
the new domain, and holds the variant to it, so that a chat log is not rebuilt as a ticket:
the speakers, the turns, the @mentions and where the decisive line sits are part of what
made the agent fail.

What is read (from line shapes, in any of the four languages):

- **chat**: lines that open a message with a time and a speaker (``09:41 小美 …``,
  ``Priya Raman  10:02 AM``, ``设计师小林 14:02``, ``[10:02] Mai: …``); speakers, messages and
  @mentions counted, the app named when the export's header says it (LINE, WeChat, Zalo,
  Slack are register words, never identifiers);
- **email**: sender headers (``From:``, ``寄件者:``, ``发件人:``, ``Từ:``) and quoted replies
  (``> On … wrote``, ``-----Original Message-----``); messages counted;
- **notes**: an attendees line (``Attendees:``, ``出席：``, ``参会：``, ``Thành phần:``),
  section headings and bullet points;
- **ticket**: numbered acceptance criteria (``AC1``…);
- anything else is **text**, and no form is asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TIME = r"\d{1,2}:\d{2}(?:\s?[AaPp]\.?[Mm]\.?)?"
# a message's first line: "09:41 小美 text", "[09:41] Mai: text"
_TIME_FIRST = re.compile(rf"^\[?{_TIME}\]?\s+(?P<who>[^\s:：\[\]]{{1,24}})(?:[:：]|\s|$)")
# a speaker's line with the time after the name: "Priya Raman  10:02 AM", "设计师小林 14:02"
_NAME_FIRST = re.compile(rf"^(?P<who>[^\s\d:：#>\-*•][^\n:：]{{0,28}}?)\s+\(?{_TIME}\)?\s*$")
_MENTION = re.compile(r"(?<![\w@.])@[^\s@,，。:：!?！？)）]{1,24}")
_APPS = {"line": "LINE", "wechat": "WeChat", "微信": "WeChat", "群聊": "WeChat", "zalo": "Zalo",
         "slack": "Slack", "telegram": "Telegram", "whatsapp": "WhatsApp"}  # fmt: skip
_SENDER = re.compile(r"(?im)^(?:From|寄件者|寄件人|发件人|發件人|Từ)\s*[:：]")
_QUOTED = re.compile(
    r"(?im)^(?:>+\s*)?(?:On .{4,80} wrote:|-{3,}\s*Original Message\s*-{3,}|在.{2,60}写道[:：]|"
    r"Vào .{4,80} đã viết:)"
)
_SUBJECT = re.compile(r"(?im)^(?:Subject|主旨|主题|主題|Chủ đề)\s*[:：]")
# who was there or who wrote it down, or a title that says these are notes
_ATTENDEES = re.compile(
    r"(?im)^\s*(?:Attendees|Participants|Present|Facilitator|Scribe|Notes? by|出席\S{0,2}|列席|"
    r"参会|參會|与会|與會|记录|紀錄|記錄|Thành phần|Tham dự|Người ghi|Bên mình)\s*[:：]"
    r"|^[^\n]{0,40}(?:meeting notes|notes|minutes|sync|postmortem|incident review|"
    r"会议纪要|會議紀錄|纪要|紀錄|biên bản|ghi chú họp)"
)
_HEADING = re.compile(
    r"(?m)^\s*(?:#{1,6}\s+\S|【[^】]+】|[一二三四五六七八九十]+、|\d+\.\s+\S[^\n]{0,60}$)"
)
_BULLET = re.compile(r"(?m)^\s*[-*•]\s+\S")
_ITEM = re.compile(r"(?m)^\s*AC\s*(\d+)\b")


@dataclass(frozen=True)
class Form:
    """The form of one text: its kind and the counts that make it that kind."""

    kind: str  # chat, email, notes, ticket or text
    app: str = ""
    speakers: int = 0
    messages: int = 0
    mentions: int = 0
    sections: int = 0
    bullets: int = 0
    decisive: int = 0  # the message (1-based) holding the first flagged item, 0 if not known

    def to_json(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if v}

    def describe(self) -> str:
        """The form in words for the request (counts and kinds only)."""
        if self.kind == "chat":
            app = f"a {self.app} " if self.app else "a "
            words = (
                f"{app}group chat as its export reads: about {self.messages} messages from "
                f"{self.speakers} speakers, each with its time and sender"
            )
            if self.mentions:
                words += f", {self.mentions} of them @mentioning someone"
            if self.decisive:
                words += f"; the decisive message is number {self.decisive} of {self.messages}"
            return words
        if self.kind == "email":
            return (
                f"an email thread of {self.messages} messages, newest first, each with its "
                "sender, recipients and subject headers, older ones quoted below"
            )
        if self.kind == "notes":
            return (
                f"meeting notes: a title, an attendees line, {self.sections} sections with "
                f"{self.bullets} bullet points in all"
            )
        return "a ticket as a person would paste it (a description first, then numbered items)"

    def problems(self, variant: Form) -> list[str]:
        """How ``variant`` departs from this form (empty: it keeps it)."""
        if self.kind in ("text", "ticket"):
            return []
        if variant.kind != self.kind:
            return [f"the source is {_NAMES[self.kind]}, the variant {_NAMES[variant.kind]}"]
        out = []
        if self.kind == "chat":
            if variant.speakers < min(self.speakers, 2):
                out.append(f"{self.speakers} speakers became {variant.speakers}")
            if not self.messages / 2 <= variant.messages <= self.messages * 2:
                out.append(f"{self.messages} messages became {variant.messages}")
            if self.mentions and not variant.mentions:
                out.append("the @mentions are gone")
        if self.kind == "email" and self.messages >= 2 and variant.messages < 2:
            out.append(f"a thread of {self.messages} messages became one")
        if self.kind == "notes" and self.bullets and not variant.bullets:
            out.append("the bullet points are gone")
        return out


_NAMES = {
    "chat": "a chat log",
    "email": "an email thread",
    "notes": "meeting notes",
    "ticket": "a ticket",
    "text": "plain text",
}


def _chat(lines: list[str]) -> tuple[list[str], list[int]]:
    """The speaker of each message, and the line each message starts on."""
    speakers: list[str] = []
    starts: list[int] = []
    for index, line in enumerate(lines):
        match = _TIME_FIRST.match(line) or _NAME_FIRST.match(line.strip())
        if match:
            speakers.append(match.group("who").strip())
            starts.append(index)
    return speakers, starts


def read_form(text: str, flagged_item: int | None = None) -> Form:
    """The form of ``text``; ``flagged_item`` (an item number) locates the decisive message."""
    lines = text.split("\n")
    speakers, starts = _chat(lines)
    senders = len(_SENDER.findall(text))
    if senders and (_SUBJECT.search(text) or senders >= 2):
        return Form("email", messages=senders + len(_QUOTED.findall(text)))
    # a chat: three messages or more, two speakers or more, and someone speaks twice (a
    # timeline's "14:05 merged …" lines each have their own first word)
    if len(starts) >= 3 and 2 <= len(set(speakers)) < len(speakers):
        head = " ".join(lines[: max(1, starts[0])]).casefold()
        app = next((name for word, name in _APPS.items() if word in head), "")
        decisive = 0
        if flagged_item is not None:
            at = _item_line(lines, flagged_item)
            if at is not None:
                decisive = sum(1 for s in starts if s <= at)
        return Form(
            "chat",
            app=app,
            speakers=len(set(speakers)),
            messages=len(starts),
            mentions=len(_MENTION.findall(text)),
            decisive=decisive,
        )
    if _ATTENDEES.search(text) and (_BULLET.search(text) or len(_HEADING.findall(text)) >= 2):
        return Form(
            "notes", sections=len(_HEADING.findall(text)), bullets=len(_BULLET.findall(text))
        )
    if _ITEM.search(text):
        return Form("ticket")
    return Form("text")


def _item_line(lines: list[str], item: int) -> int | None:
    # AC3 anywhere on a line (a chat message quoting it), or a line numbered 3.
    pattern = re.compile(rf"(?:^|\s)AC\s*{item}\b|^\s*{item}[.)、]\s")
    return next((i for i, line in enumerate(lines) if pattern.search(line)), None)
