"""Text options on the string checks: case_sensitive, normalize, word. The defaults keep
the literal, case-sensitive substring match."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from caseforge.case.model import Case
from caseforge.checks.text import normalize_text
from caseforge.results import CheckStatus


def graded(expect: dict[str, Any], actual: object) -> dict[str, CheckStatus]:
    case = Case.model_validate({"id": "t", "input": {}, "expect": {"reply": expect}})
    return {name: check.grade(actual).status for name, _, check in case.checks()}


PASS, FAIL = CheckStatus.PASS, CheckStatus.FAIL


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("1,093.34", "1093.34"),
        ("１，０９３．３４ 元", "1093.34 元"),  # full-width: NFKC first
        ("12 500 000", "12500000"),
        ("1,2,3", "1,2,3"),  # not groups of three: left alone
        ("“quoted” — here…", '"quoted" - here...'),
        ("退款  已提交。\n谢谢", "退款 已提交. 谢谢"),
    ],
)
def test_normalize_text(text: str, normalized: str) -> None:
    assert normalize_text(text) == normalized


@pytest.mark.parametrize(
    ("expect", "actual", "verdict"),
    [
        ({"must_include": ["1093.34"]}, "total 1,093.34", FAIL),  # today's literal match
        ({"must_include": ["1093.34"], "normalize": True}, "total 1,093.34", PASS),
        ({"must_include": ["1,093.34"], "normalize": True}, "total 1093.34", PASS),
        ({"must_include": ["camera"]}, "The Camera", FAIL),
        ({"must_include": ["camera"], "case_sensitive": False}, "The Camera", PASS),
        ({"must_include": ["full"]}, "done successfully", PASS),  # substring, as today
        ({"must_include": ["full"], "word": True}, "done successfully", FAIL),
        ({"must_include": ["full"], "word": True}, "a full refund", PASS),
        ({"must_include": ["退款"], "word": True}, "已经申请退款了", PASS),  # CJK: no boundary
        ({"must_include": ["Camera"], "case_sensitive": False}, ["camera", "lens"], PASS),
        ({"must_include": ["1093.34"], "normalize": True}, ["1,093.34 yuan"], PASS),
    ],
)
def test_must_include_options(expect: dict[str, Any], actual: object, verdict: str) -> None:
    assert graded(expect, actual) == {"reply.must_include": verdict}


def test_must_not_include_options() -> None:
    forbid = {"must_not_include": ["full"]}
    assert graded(forbid, "done successfully") == {"reply.must_not_include": FAIL}
    assert graded({**forbid, "word": True}, "done successfully") == {"reply.must_not_include": PASS}
    assert graded({"must_not_include": ["REFUNDED"], "case_sensitive": False}, "refunded") == {
        "reply.must_not_include": FAIL
    }
    both = graded(
        {"must_include": ["1093.34"], "must_not_include": ["full"], "normalize": True,
         "word": True},
        "a partial refund of 1,093.34, successfully filed",
    )  # fmt: skip
    assert both == {"reply.must_include": PASS, "reply.must_not_include": PASS}


@pytest.mark.parametrize(
    ("expect", "actual", "verdict"),
    [
        ({"mode": "exact", "value": "Refund"}, "refund", FAIL),
        ({"mode": "exact", "value": "Refund", "case_sensitive": False}, "refund", PASS),
        ({"mode": "exact", "value": "1,093.34 元", "normalize": True}, "1093.34  元", PASS),
        ({"mode": "exact", "value": 1, "case_sensitive": False}, 1, PASS),  # not text: as today
        ({"mode": "exact", "value": "a", "case_sensitive": False}, ["a"], FAIL),
        ({"mode": "regex", "value": "^total"}, "TOTAL 5", FAIL),
        ({"mode": "regex", "value": "^total", "case_sensitive": False}, "TOTAL 5", PASS),
        ({"mode": "regex", "value": r"1093\.34", "normalize": True}, "1,093.34", PASS),
        ({"mode": "regex", "value": "ful+", "word": True}, "successfully", FAIL),
        ({"mode": "regex", "value": "ful+", "word": True}, "a full one", PASS),
    ],
)
def test_exact_and_regex_options(expect: dict[str, Any], actual: object, verdict: str) -> None:
    assert graded(expect, actual) == {"reply": verdict}


def test_word_on_exact_is_refused_and_options_show_in_the_rendering() -> None:
    with pytest.raises(ValidationError, match="`word` applies to must_include"):
        graded({"mode": "exact", "value": "x", "word": True}, "x")
    case = Case.model_validate(
        {"id": "t", "input": {}, "expect": {"reply": {"must_include": ["a"], "normalize": True,
                                                       "case_sensitive": False}}}
    )  # fmt: skip
    rendered = [check.render() for _, _, check in case.checks()]
    assert rendered == ['must_include ["a"] (normalized, any case)']
    failing = case.checks()[0][2].grade("b")
    assert failing.reason == 'does not include ["a"] (normalized, any case)'
