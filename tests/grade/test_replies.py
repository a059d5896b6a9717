"""The reserved field `replies`: every agent reply of a conversation, graded reply by reply
(a requirement met by any reply, a ban broken by none), and what may not read it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

import pytest
import respx
from pydantic import ValidationError

from caseforge.agent.protocol import AgentResult
from caseforge.case.model import Case, case_model
from caseforge.checks import BUILTIN_MODES, CheckMode, Verdict, declare, failed, passed
from caseforge.grade import grade_trial
from caseforge.grade.judge import Judge, judge_record
from caseforge.grade.trial import agent_replies, lookup
from caseforge.results import CheckStatus, TrialRecord, TrialStatus
from tests.grade.test_judge import URL, facts_answer, judge_client
from tests.llm.wire import ok

INSTRUCTION = "Cancel order #W2378156. If asked, the refund goes to gift card 4,200-ready."


def talk(*replies: str, user: str = "hello", paused: bool = False) -> AgentResult:
    """A conversation's result: the user says ``user`` each turn, the agent ``replies``."""
    transcript: list[dict[str, Any]] = []
    for turn, reply in enumerate(replies, start=1):
        transcript.append({"turn": turn, "role": "user", "content": user})
        transcript.append({"turn": turn, "role": "agent", "content": reply})
    return AgentResult.model_validate(
        {"reply": replies[-1], "transcript": transcript, "paused_for_approval": paused}
    )


def case(expect: dict[str, Any], **extra: Any) -> Case:
    return Case.model_validate({"id": "c", "input": {}, "expect": expect, **extra})


def graded(expect: dict[str, Any], result: AgentResult) -> dict[str, tuple[str, str]]:
    _, checks = grade_trial(case(expect), result)
    return {c.name: (c.status.value, c.reason) for c in checks}


def test_tau_style_an_output_stated_in_the_first_reply_passes_on_replies_not_on_reply() -> None:
    expect = {
        "replies": {"mode": "must_include", "values": ["1,093.34"], "normalize": True},
        "last": {"mode": "must_include", "field": "reply", "values": ["1,093.34"]},
    }
    result = talk("The refund is 1093.34 dollars.", "Anything else?", "Goodbye!")
    found = graded(expect, result)
    assert found["replies"] == ("pass", '"1,093.34" in reply 1')
    assert found["last"][0] == "fail"


def test_an_output_only_the_user_said_passes_on_transcript_but_not_on_replies() -> None:
    expect = {
        "replies": {"mode": "must_include", "values": ["W2378156"]},
        "transcript": {"mode": "must_include", "values": ["W2378156"]},
    }
    found = graded(expect, talk("Done.", "Bye.", user=INSTRUCTION))
    assert found["transcript"][0] == "pass"  # the user's message holds it
    assert found["replies"] == ("fail", 'no reply includes ["W2378156"] (2 replies)')


def test_a_single_turn_case_has_one_reply() -> None:
    single = AgentResult.model_validate({"reply": "Refund of 240.00 filed."})
    assert agent_replies(single) == ["Refund of 240.00 filed."]
    assert lookup(single, "replies") == ["Refund of 240.00 filed."]
    expect = {
        "replies": {"must_include": ["240.00"], "must_not_include": ["sorry"]},
        "shape": {"mode": "regex", "field": "replies", "value": r"^Refund"},
    }
    assert graded(expect, single) == {
        "replies.must_include": ("pass", '"240.00" in reply 1'),
        "replies.must_not_include": ("pass", ""),
        "shape": ("pass", "reply 1"),
    }


def test_must_include_finds_each_value_in_any_reply_and_match_any_one_value() -> None:
    result = talk("Order ORD-7 is on its way.", "It ships from Leeds.", "Bye")
    assert graded({"replies": {"must_include": ["ORD-7", "Leeds"]}}, result) == {
        "replies.must_include": ("pass", '"ORD-7" in reply 1, "Leeds" in reply 2')
    }
    assert graded({"replies": {"must_include": ["ORD-7", "Paris"]}}, result) == {
        "replies.must_include": ("fail", 'no reply includes ["Paris"] (3 replies)')
    }
    any_of = {"mode": "must_include", "values": ["Paris", "Leeds"], "match": "any"}
    assert graded({"replies": any_of}, result) == {"replies": ("pass", '"Leeds" in reply 2')}
    none = {**any_of, "values": ["Paris", "Oslo"], "case_sensitive": False}
    assert graded({"replies": none}, result) == {
        "replies": ("fail", 'no reply includes any of ["Paris", "Oslo"] (3 replies) (any case)')
    }


def test_a_ban_holds_only_when_no_reply_breaks_it() -> None:
    result = talk("I'm sorry, the refund is pending.", "The refund is done.", "Bye")
    expect = {
        "apology": {"mode": "must_not_include", "field": "replies", "values": ["sorry"]},
        "no_done": {"mode": "regex", "field": "replies", "value": "done", "negate": True},
        "not_bye": {"mode": "exact", "field": "replies", "value": "Bye", "negate": True},
        "not_hi": {"mode": "exact", "field": "replies", "value": "Hi", "negate": True},
    }
    found = graded(expect, result)
    assert found["apology"] == ("fail", 'reply 1: includes ["sorry"]')
    assert found["no_done"][0] == "fail" and found["no_done"][1].startswith("reply 2: ")
    assert found["not_bye"] == ("fail", 'reply 3: equals "Bye" but must not')
    assert found["not_hi"] == ("pass", "")


def test_a_requirement_of_another_mode_passes_on_any_reply_and_says_why_not() -> None:
    result = talk("Hello", "The total is 41.5", "Bye")
    close = {"mode": "number", "field": "replies", "value": 41.5}
    assert graded({"n": close}, result)["n"][0] == "fail"  # no reply is a number alone
    result = talk("Hello", "41.5", "Bye")
    assert graded({"n": close}, result) == {"n": ("pass", "reply 2")}
    shape = {"mode": "regex", "field": "replies", "value": r"^\d+$"}
    status, reason = graded({"r": shape}, talk("a", "b", "c", "d", "e", "f", "g"))["r"]
    assert status == "fail"
    assert reason.startswith("no reply passes (7 replies): reply 1: ")
    assert reason.endswith("; and 2 more")  # the reasons of the first five, then a count


def test_after_an_approval_pause_what_earlier_replies_decide_stands() -> None:
    paused = talk("Your total is 4200.", "", paused=True)
    expect = {
        "total": {"mode": "must_include", "field": "replies", "values": ["4200"]},
        "ticket": {"mode": "must_include", "field": "replies", "values": ["TCK-1"]},
        "ban": {"mode": "must_not_include", "field": "replies", "values": ["4200"]},
    }
    status, checks = grade_trial(case(expect), paused)
    found = {c.name: (c.status, c.reason) for c in checks}
    assert found["total"] == (CheckStatus.PASS, '"4200" in reply 1')
    assert found["ticket"][0] is CheckStatus.CANNOT_JUDGE
    assert "no earlier reply meets it" in found["ticket"][1]
    assert found["ban"] == (CheckStatus.FAIL, 'reply 1: includes ["4200"]')
    assert status is TrialStatus.FAIL


def test_replies_are_stored_whole_when_they_fit_and_by_reference_when_not() -> None:
    short = grade_trial(case({"replies": {"must_include": ["x"]}}), talk("x", "y"))[1][0]
    assert short.actual == ["x", "y"]
    long = grade_trial(case({"replies": {"must_include": ["x"]}}), talk("x" * 5000, "y"))[1][0]
    assert isinstance(long.actual, str) and long.actual_ref == "transcript"


@pytest.mark.parametrize(
    ("expect", "extra", "says"),
    [
        ({"replies": {"must_include": ["a"], "turn": 2}}, {}, "`turn` picks one"),
        ({"r": {"mode": "exact_set", "field": "replies", "values": ["a"]}}, {}, "whole list"),
        (
            {"x": {"mode": "exact", "value": 1}},
            {
                "conversation": {
                    "max_turns": 2,
                    "script": [{"say": "hi", "expect": {"replies": {"must_include": ["a"]}}}],
                }
            },
            "conversation.script.0.expect.replies: `replies` is every agent reply",
        ),
    ],
)
def test_what_cannot_read_replies_is_refused(
    expect: dict[str, Any], extra: dict[str, Any], says: str
) -> None:
    with pytest.raises(ValidationError, match=says.replace("(", r"\(").replace(".", r"\.")):
        case(expect, **extra)


@respx.mock
def test_a_judge_on_replies_reads_every_reply_numbered() -> None:
    route = respx.post(URL).mock(return_value=ok(facts_answer("conveyed")))
    judged = case({"facts": {"mode": "judge", "field": "replies", "values": ["refund filed"]}})
    result = talk("I filed the refund.", "Anything else?")
    status, checks = grade_trial(judged, result)
    record = TrialRecord(case_id="c", trial=1, status=status, checks=checks)
    asyncio.run(judge_record(Judge(judge_client()), judged, result, record))
    assert record.checks[0].status is CheckStatus.PASS
    sent = json.loads(route.calls[0].request.content)["messages"][1]["content"]
    assert "[reply 1] I filed the refund.\n\n[reply 2] Anything else?" in sent


class Shouts(CheckMode):
    """The reply is in capitals."""

    strength = 40
    mode: Literal["shouts"]

    def grade(self, actual: object) -> Verdict:
        return passed() if str(actual).isupper() else failed("not in capitals")


class NoShouting(CheckMode):
    """No reply is in capitals (it forbids, and says so)."""

    strength = 30
    mode: Literal["no_shouting"]

    @property
    def forbids(self) -> bool:
        return True

    def grade(self, actual: object) -> Verdict:
        return ("fail", "in capitals") if str(actual).isupper() else ("pass", "")  # type: ignore[return-value]


class Cracks(CheckMode):
    """A grader that raises."""

    strength = 40
    mode: Literal["cracks"]

    def grade(self, actual: object) -> Verdict:
        raise ValueError("broken grader")


class WholeList(CheckMode):
    """A mode that compares a whole list."""

    strength = 40
    per_reply = False
    mode: Literal["whole_list"]

    def grade(self, actual: object) -> Verdict:
        return passed()


def test_a_suites_own_modes_read_replies_as_they_declare() -> None:
    modes = BUILTIN_MODES.plus(
        declare(m, Path("checks.py")) for m in (Shouts, NoShouting, Cracks, WholeList)
    )
    model = case_model(modes)
    expect = {
        "loud": {"mode": "shouts", "field": "replies"},
        "calm": {"mode": "no_shouting", "field": "replies"},
        "broken": {"mode": "cracks", "field": "replies"},
    }
    case = model.model_validate({"id": "c", "input": {}, "expect": expect})
    _, checks = grade_trial(case, talk("hello", "DONE", "bye"))
    found = {c.name: (c.status.value, c.reason) for c in checks}
    assert found["loud"] == ("pass", "reply 2")
    assert found["calm"] == ("fail", "reply 2: in capitals")
    assert found["broken"] == ("error", "grading raised ValueError: broken grader")
    with pytest.raises(ValidationError, match="compares a whole list"):
        model.model_validate(
            {"id": "c", "input": {}, "expect": {"w": {"mode": "whole_list", "field": "replies"}}}
        )
