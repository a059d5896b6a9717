"""Amounts the way people write them in chats (issue 24, item 2), each read as its value,
and caught by ``verify`` when a rewrite copies the amount in another notation."""

from __future__ import annotations

import datetime as dt

import pytest

from caseforge.privacy.overlap import Original
from caseforge.privacy.values import dates, numbers, prepare


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("退我18万6吧", 186_000),  # was read as 180,006
        ("先转2萬3给你", 23_000),
        ("兩萬三", 23_000),
        ("chuyển 2tr3 nhé", 2_300_000),  # was read as 2,000,003
        ("tháng này 1.5 củ thôi", 1_500_000),  # was 1.5
        ("30w搞定", 300_000),
        ("twenty-three thousand four hundred dollars", 23_400),
        ("còn thiếu tám triệu rưỡi", 8_500_000),
        ("mười bốn triệu hai trăm nghìn đồng", 14_200_000),
        ("ba mươi bảy triệu rưỡi", 37_500_000),
        ("2.300.000 đồng", 2_300_000),
    ],
)
def test_an_informal_amount_is_read_as_its_value(text: str, value: float) -> None:
    assert value in [v.value for v in numbers(prepare(text))]


@pytest.mark.parametrize("text", ["one of them said two items", "năm nay tăng", "năm 2026"])
def test_ordinary_words_stay_words(text: str) -> None:
    assert all(v.value in (2026,) for v in numbers(prepare(text)))


@pytest.mark.parametrize(
    ("original", "variant"),
    [
        ("客户说退我18万6就行", "the client settles for 186,000"),
        ("anh ơi chuyển 2tr3 trước thứ 6", "please wire 2,300,000 before Friday"),
        ("we owe them $23,400 by Friday", "nợ họ twenty-three thousand four hundred dollars"),
        ("còn thiếu tám triệu rưỡi", "the balance is 8.5M"),
    ],
)
def test_verify_catches_the_amount_in_another_notation(original: str, variant: str) -> None:
    findings = Original([("input.log", original)]).findings([("input.log", variant)])
    assert "number" in {f.cls for f in findings}


TODAY = dt.date(2026, 9, 3)  # a Thursday: the case's clock


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("下週五交貨", dt.date(2026, 9, 11)),
        ("下禮拜三再說", dt.date(2026, 9, 9)),
        ("这周五之前", dt.date(2026, 9, 4)),
        ("6月底前付清", dt.date(2026, 6, 30)),
        ("月底前付清", dt.date(2026, 9, 30)),
        ("下個月底", dt.date(2026, 10, 31)),
        ("thứ 4 tuần sau họp", dt.date(2026, 9, 9)),
        ("mùng 5 tháng sau", dt.date(2026, 10, 5)),
        ("cuối tháng 8", dt.date(2026, 8, 31)),
        ("next Tue the 14th", dt.date(2026, 9, 14)),
        ("by the end of June", dt.date(2026, 6, 30)),
    ],
)
def test_a_relative_date_is_the_day_it_means_from_the_cases_clock(text: str, day: dt.date) -> None:
    assert day in dates(prepare(text), TODAY).full


@pytest.mark.parametrize(
    ("text", "month_days"),
    [
        ("due 9/12", {(9, 12), (12, 9)}),  # English: either way round
        ("交期改到 9/12", {(9, 12)}),  # Chinese writes the month first
        ("hẹn 18/3", {(3, 18)}),
        ("hẹn 3/4 nha", {(4, 3)}),  # Vietnamese, the day first
        ("v1/2 of the API", set()),
        ("6月底前", {(6, 30)}),  # a month's end with no clock: a month-day, no made-up year
        ("cuối tháng 2", {(2, 28), (2, 29)}),
    ],
)
def test_a_bare_month_day_is_read_as_the_language_writes_it(
    text: str, month_days: set[tuple[int, int]]
) -> None:
    assert dates(prepare(text)).partial == month_days


@pytest.mark.parametrize(
    ("original", "variant"),
    [
        ("貨下週五到", "the parcel lands on September 11"),
        ("thứ 4 tuần sau họp nhé", "meeting on 9/9"),
        ("交期 9月12日", "due 9/12"),
        ("see you next Tue the 14th", "họp ngày 14 tháng 9"),
    ],
)
def test_verify_catches_a_date_written_another_way(original: str, variant: str) -> None:
    findings = Original([("input.log", original)], today=TODAY).findings([("input.log", variant)])
    assert "date" in {f.cls for f in findings}


def test_a_shape_text_naming_the_originals_day_in_words_is_caught() -> None:
    """Free text a person writes into the request ("Tuesday the 14th") is checked against the
    original with its clock (issue 24, 6)."""
    original = Original([("input.log", "khách hẹn thứ 2 ngày 14/9 giao hàng")], today=TODAY)
    findings = original.findings([("shape", "the client was promised Tuesday the 14th")])
    assert "date" in {f.cls for f in findings}
