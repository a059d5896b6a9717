"""The form of a case's text (synth/form.py): re-synthesis keeps a chat log a chat log, an
email thread a thread, meeting notes notes (issue 24, 7). All text here is fictional."""

from __future__ import annotations

import pytest

from caseforge.case.model import Case
from caseforge.synth.contract import check_form, derive, prompt
from caseforge.synth.form import read_form

LINE_CHAT = """[LINE] 門市小組 的聊天記錄

09:41 小芸 @阿凱 早 昨天那張單你有看到嗎
09:42 小芸 AC1 退貨要在七天內申請
09:43 阿凱 有 我看一下
09:44 阿凱 AC2 退款三天內入帳
09:45 小芸 AC3 退款當天入帳，不用等
09:46 阿凱 好 那我先回客人
"""

WECHAT_CHAT = """群聊：装修对接群(3)

设计师小何 14:02
@业主 下午好，板材今天到仓了
业主 14:10
好的 周五可以
设计师小何 14:11
收到[抱拳]
"""

SLACK_CHAT = """#support

Dana Whitlock  10:02 AM
hey, the order came back again
Sam Oyelaran  10:09 AM
@Dana looking now
Dana Whitlock  10:11 AM
thanks
"""

EMAIL = """From: Ana Costa <ana@example.com>
To: Ben Ito <ben@example.org>
Subject: RE: invoice

Hi Ben, the total still looks off.

> On Monday, Ben Ito wrote:
> Sorry, will fix.
"""

NOTES = """Weekly sync — notes
Attendees: the PM, two engineers

1. Release
- the build is green
- QA signs off Friday
"""

TIMELINE = """Incident timeline
14:05 merged the change
14:20 CPU pegged on two nodes
14:31 reverted
"""

TICKET = "Checkout coupons\n\nAC1 a field for the code\nAC2 one use per account\n"


@pytest.mark.parametrize(
    ("text", "kind", "counts"),
    [
        (LINE_CHAT, "chat", {"app": "LINE", "speakers": 2, "messages": 6, "mentions": 1}),
        (WECHAT_CHAT, "chat", {"app": "WeChat", "speakers": 2, "messages": 3, "mentions": 1}),
        (SLACK_CHAT, "chat", {"speakers": 2, "messages": 3, "mentions": 1}),
        (EMAIL, "email", {"messages": 2}),
        (NOTES, "notes", {"bullets": 2}),
        (TIMELINE, "text", {}),  # each "speaker" once: a timeline, not a chat
        (TICKET, "ticket", {}),
    ],
)
def test_the_form_is_read_from_line_shapes(text: str, kind: str, counts: dict[str, object]) -> None:
    form = read_form(text)
    assert form.kind == kind
    for key, value in counts.items():
        assert getattr(form, key) == value, key


def chat_case() -> Case:
    return Case.model_validate(
        {
            "id": "chat-001",
            "input": {"log": LINE_CHAT},
            "expect": {
                "flags": {"mode": "exact_set", "values": ["3:conflict", "3:mismatch"]},
            },
        }
    )


def test_a_chat_log_is_asked_for_as_a_chat_with_its_counts() -> None:
    contract = derive(chat_case())
    assert contract.form.kind == "chat" and contract.form.decisive == 5  # AC3 is message 5
    text = prompt(contract, "a bakery", "a reviewer misses a flag")
    line = next(x for x in text.splitlines() if x.startswith("- log:"))
    assert "a LINE group chat" in line and "6 messages from 2 speakers" in line
    assert "@mentioning" in line and "decisive message is number 5 of 6" in line
    assert "a ticket as a person would paste it" not in text
    for word in ("小芸", "阿凱", "退款", "七天"):  # counts and kinds only
        assert word not in text


def test_a_variant_must_keep_the_form() -> None:
    contract = derive(chat_case())
    assert check_form(contract, LINE_CHAT.replace("小芸", "小安")).passed
    ticket = check_form(contract, TICKET)
    assert not ticket.passed and "the source is a chat log, the variant a ticket" in ticket.detail
    quiet = check_form(contract, LINE_CHAT.replace("@阿凱", "阿凱"))
    assert not quiet.passed and "@mentions are gone" in quiet.detail


def test_a_ticket_keeps_today_s_request() -> None:
    case = Case.model_validate(
        {
            "id": "t-1",
            "input": {"card": TICKET + "AC3 no limit per account\n"},
            "expect": {"flags": {"mode": "exact_set", "values": ["3:conflict"]}},
        }
    )
    contract = derive(case)
    assert contract.form.kind == "ticket"
    assert "a ticket as a person would paste it" in prompt(contract, "x", "y")
    assert check_form(contract, "anything at all").passed
