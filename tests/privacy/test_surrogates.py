"""Surrogates: reproducible from the secret, never the original, consistent within a case,
shape-keeping per class; money ratios and date intervals survive; no redaction marks."""

from __future__ import annotations

import datetime as dt
import ipaddress
import itertools
import re

import pytest

from caseforge.privacy.identifiers import IdentifierDetector, Span
from caseforge.privacy.policy import has_redaction
from caseforge.privacy.surrogates import (
    SurrogateMaker,
    parse_date,
    parse_money,
    shift_date,
)
from tests.privacy.test_identifiers import GLOSSARY, TICKETS

LOCALE = {"zh-TW": "zh_TW", "zh-CN": "zh_CN", "vi": "vi_VN", "en": "en_US"}
SECRET = b"local-test-secret"
DOC_NETS = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")]


@pytest.fixture(scope="module")
def scanned() -> dict[str, tuple[str, list[Span]]]:
    detector = IdentifierDetector(GLOSSARY)
    return {lang: (text, detector.scan(text, lang)) for lang, (text, _) in TICKETS.items()}


def span(cls: str, text: str) -> Span:
    return Span(0, len(text), cls, text, 1.0)


def shape(text: str) -> str:
    return re.sub(r"[0-9]", "9", re.sub(r"[a-z]", "a", re.sub(r"[A-Z]", "A", text)))


def test_deterministic_per_secret_and_case(scanned: dict[str, tuple[str, list[Span]]]) -> None:
    for lang, (text, spans) in scanned.items():
        first, map1 = SurrogateMaker(SECRET, "case-7", LOCALE[lang]).apply(text, spans)
        again, map2 = SurrogateMaker(SECRET, "case-7", LOCALE[lang]).apply(text, spans)
        assert first == again and map1 == map2
        other, _ = SurrogateMaker(b"another-secret", "case-7", LOCALE[lang]).apply(text, spans)
        assert other != first
        other_case, _ = SurrogateMaker(SECRET, "case-8", LOCALE[lang]).apply(text, spans)
        assert other_case != first


@pytest.mark.parametrize("secret", [SECRET, b"k2", b"k3", b"k4", b"k5"])
def test_never_equal_never_left_behind(
    scanned: dict[str, tuple[str, list[Span]]], secret: bytes
) -> None:
    for lang, (text, spans) in scanned.items():
        new_text, mapping = SurrogateMaker(secret, "case-1", LOCALE[lang]).apply(text, spans)
        assert set(mapping.replacements) == {s.text for s in spans}
        for original, surrogate in mapping.replacements.items():
            assert surrogate != original
            assert original not in new_text, (lang, original)
        assert not has_redaction(new_text)
        for mark in ("█", "■", "[REDACTED]", "***", "<PERSON>"):
            assert mark not in new_text


def test_consistent_within_a_case(scanned: dict[str, tuple[str, list[Span]]]) -> None:
    text, spans = scanned["zh-TW"]
    maker = SurrogateMaker(SECRET, "case-1", "zh_TW")
    _new_text, mapping = maker.apply(text, spans)
    # the same original, scanned again or asked for alone, gets the same surrogate
    for s in spans:
        assert maker.surrogate(s) == mapping.replacements[s.text]
    # the key inside the URL and the same letter group elsewhere map alike
    key_1240 = mapping.replacements["PAY-1240"]
    url = mapping.replacements["https://jira.acme.io/browse/PAY-1234"]
    prefix = key_1240.split("-")[0]
    assert url.endswith("/browse/" + maker.surrogate(span("ticket_key", "PAY-1234")))
    assert maker.surrogate(span("ticket_key", "PAY-1234")).startswith(prefix + "-")
    assert mapping.replacements["ERR_PAY_4012"].split("_")[1] == prefix
    # two originals of a class never share a surrogate
    names = ["林雅婷", "林雅琪", "陳志明", "王小華", "李大同", "張三豐", "趙敏", "周芷若"]
    surrogates = {maker.surrogate(span("person", n)) for n in names}
    assert len(surrogates) == len(names)
    # a short SHA and the full SHA it abbreviates stay prefixes of each other
    full = "3f9a2c1e0b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"
    assert maker.surrogate(span("commit_sha", full)).startswith(
        maker.surrogate(span("commit_sha", "3f9a2c1"))
    )


def test_money_factor_and_date_offset_per_case() -> None:
    factors, offsets = set(), set()
    for i in range(200):
        maker = SurrogateMaker(SECRET, f"case-{i}")
        assert 0.6 <= maker.money_factor < 0.9 or 1.1 <= maker.money_factor < 1.6
        assert 21 <= abs(maker.date_offset_days) <= 399
        assert maker.date_offset_days % 7 == 0
        factors.add(maker.money_factor)
        offsets.add(maker.date_offset_days > 0)
    assert len(factors) > 150 and offsets == {True, False}


@pytest.mark.parametrize("lang", list(TICKETS))
def test_shapes_per_class(scanned: dict[str, tuple[str, list[Span]]], lang: str) -> None:
    _text, spans = scanned[lang]
    maker = SurrogateMaker(SECRET, "case-1", LOCALE[lang])
    for s in spans:
        new = maker.surrogate(s)
        old = s.text
        if s.cls == "commit_sha":
            assert re.fullmatch(r"[0-9a-f]+", new) and len(new) == len(old)
        elif s.cls == "branch":
            assert new.split("/")[0] == old.split("/")[0] and "/" in new
            assert re.fullmatch(r"[A-Za-z0-9._/-]+", new)
        elif s.cls in ("error_code", "ticket_key"):
            assert shape(new) == shape(old)
        elif s.cls == "phone":
            assert re.sub(r"[0-9]", "9", new) == re.sub(r"[0-9]", "9", old)
            assert new[:2] == old[:2]
        elif s.cls == "email":
            domain = new.rsplit("@", 1)[1]
            assert domain.endswith((".test", "example.com", "example.net", "example.org"))
            assert re.fullmatch(r"[a-z0-9._+-]+@[a-z0-9.-]+", new)
        elif s.cls == "url":
            host = re.match(r"[a-z]+://([^/?#:]+)", new)
            assert host is not None and host.group(1).endswith(".example.com")
            assert new.split("://")[0] == old.split("://")[0]
        elif s.cls == "ip":
            assert any(ipaddress.ip_address(new) in net for net in DOC_NETS)
        elif s.cls == "money":
            assert re.sub(r"[0-9.,]", "", new) == re.sub(r"[0-9.,]", "", old)
        elif s.cls == "date":
            dayfirst = LOCALE[lang] != "en_US"
            before, after = parse_date(old, dayfirst), parse_date(new, dayfirst)
            assert before is not None and after is not None
            assert (after - before).days == maker.date_offset_days
        elif s.cls == "person":
            if re.search(r"[\u4e00-\u9fff]", old):
                assert len(new) == len(old) and re.fullmatch(r"[\u4e00-\u9fff]+", new)
            else:
                assert len(new.split()) == len(old.split())
        elif s.cls in ("organization", "project", "feature"):
            for affix in ("科技", "计划", "計畫", "模組", "模块", "Foods"):
                if old.endswith(affix):
                    assert new.endswith(affix)
            for affix in ("Công ty TNHH", "Dự án", "Project"):
                if old.startswith(affix):
                    assert new.startswith(affix + " ")


def test_people_use_the_locale() -> None:
    assert re.fullmatch(
        r"[\u4e00-\u9fff]{3}",
        SurrogateMaker(SECRET, "c", "zh_CN").surrogate(span("person", "王晓明")),
    )
    vi = SurrogateMaker(SECRET, "c", "vi_VN").surrogate(span("person", "Nguyễn Văn An"))
    assert len(vi.split()) == 3 and re.search(r"[^\x00-\x7f]", vi)
    plain_vi = SurrogateMaker(SECRET, "c", "vi_VN").surrogate(span("person", "Nguyen Van An"))
    assert plain_vi.isascii() and len(plain_vi.split()) == 3
    en = SurrogateMaker(SECRET, "c", "en_US").surrogate(span("person", "Dana Whitfield"))
    assert re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z'-]+", en)
    handle = SurrogateMaker(SECRET, "c", "zh_TW").surrogate(span("person", "yating.lin"))
    assert re.fullmatch(r"[a-z]+\.[a-z]+", handle)


def test_money_formats() -> None:
    maker = SurrogateMaker(SECRET, "case-1")
    maker.money_factor = 1.2
    cases = {
        "NT$12,500": "NT$15,000",
        "3萬元": "3.6萬元",
        "12.500.000 đồng": "15.000.000 đồng",
        "1,5 triệu": "1,8 triệu",
        "$1,250.50": "$1,500.60",
        "500 USD": "600 USD",
        "¥86,400": "¥103,700",
        "9,800 EUR": "11,800 EUR",
        "1.2億元": "1.44億元",
        "NT$3,000~5,000": "NT$3,600~6,000",
        "3-5萬元": "3.6-6萬元",
    }
    for old, new in cases.items():
        assert maker.surrogate(span("money", old)) == new, old


def test_money_ratios_and_order_survive() -> None:
    amounts = ["NT$1,200", "NT$12,500", "3萬元", "NT$45,000", "12萬元", "NT$1,250,000"]
    for secret in (SECRET, b"k2", b"k3", b"k4"):
        maker = SurrogateMaker(secret, "ratios")
        old = [parse_money(a) for a in amounts]
        new = [parse_money(maker.surrogate(span("money", a))) for a in amounts]
        assert all(v is not None for v in old + new)
        old_v = [v for v in old if v is not None]
        new_v = [v for v in new if v is not None]
        assert sorted(range(len(new_v)), key=new_v.__getitem__) == list(range(len(new_v)))
        for a, b in zip(old_v, new_v, strict=True):
            assert b / a == pytest.approx(maker.money_factor, rel=0.011)
        for i in range(len(old_v)):
            for j in range(len(old_v)):
                assert new_v[i] / new_v[j] == pytest.approx(old_v[i] / old_v[j], rel=0.021)


def test_date_formats() -> None:
    cases = {
        "2024-03-05": "2024-04-04",
        "2024/03/05": "2024/04/04",
        "05/03/2024": "04/04/2024",
        "2024年3月5日": "2024年4月4日",
        "2024 年 3 月 5 日": "2024 年 4 月 4 日",
        "3月5日": "4月4日",
        "ngày 5 tháng 12 năm 2026": "ngày 4 tháng 1 năm 2027",
        "Jan 15, 2027": "Feb 14, 2027",
        "3 March 2026": "2 April 2026",
        "March 5th, 2026": "April 4th, 2026",
        "15/01/2027": "14/02/2027",
    }
    for old, new in cases.items():
        assert shift_date(old, 30) == new, old
    assert shift_date("01/15/2027", 30, dayfirst=False) == "02/14/2027"
    assert shift_date("2024-12-20", -30) == "2024-11-20"


def test_date_intervals_and_weekdays_survive() -> None:
    dates = ["2024-03-05", "2024年3月19日", "ngày 2 tháng 4 năm 2024", "Apr 30, 2024", "2025/01/01"]
    for secret in (SECRET, b"k2", b"k3"):
        maker = SurrogateMaker(secret, "dates")
        old = [parse_date(d) for d in dates]
        new = [parse_date(maker.surrogate(span("date", d))) for d in dates]
        old_d = [d for d in old if d is not None]
        new_d = [d for d in new if d is not None]
        assert len(old_d) == len(new_d) == len(dates)
        for a, b in zip(old_d, new_d, strict=True):
            assert (b - a).days == maker.date_offset_days
            assert a.weekday() == b.weekday()
        gaps_old = [(y - x).days for x, y in itertools.pairwise(old_d)]
        gaps_new = [(y - x).days for x, y in itertools.pairwise(new_d)]
        assert gaps_old == gaps_new


def test_other_classes_shapes() -> None:
    maker = SurrogateMaker(SECRET, "case-1", "en_US")
    sha = maker.surrogate(span("commit_sha", "4E7D9B1C0A2F3E4D5C6B7A8091A2B3C4D5E6F708"))
    assert re.fullmatch(r"[0-9a-f]{40}", sha)
    assert maker.surrogate(span("ip", "10.2.0.0/16")).endswith("/16")
    v6 = maker.surrogate(span("ip", "fe80::1"))
    assert ipaddress.ip_address(v6) in ipaddress.ip_network("2001:db8::/32")
    us = maker.surrogate(span("phone", "(415) 555-0134"))
    assert re.fullmatch(r"\([2-9][0-9]{2}\) 555-01[0-9]{2}", us)
    assert maker.surrogate(span("email", "support@contoso.com")).startswith("support@")
    assert maker.surrogate(span("email", "bob@gmail.com")).endswith(
        ("@example.com", "@example.net", "@example.org")
    )
    code = maker.surrogate(span("error_code", "ERR_EXPORT_TIMEOUT"))
    assert code.startswith("ERR_") and code.endswith("_TIMEOUT") and code != "ERR_EXPORT_TIMEOUT"
    assert shape(maker.surrogate(span("error_code", "ERR_TIMEOUT"))) == "AAA_AAAAAAA"
    assert re.fullmatch(r"#[1-9][0-9]{2}", maker.surrogate(span("ticket_key", "#482")))
    assert maker.surrogate(span("ticket_key", "INV-2026-0091")).split("-")[1] == "2026"
    assert re.fullmatch(r"0x[0-9A-F]{8}", maker.surrogate(span("error_code", "0x80070005")))
    branch = maker.surrogate(span("branch", "release/2024.03"))
    assert branch.startswith("release/") and branch != "release/2024.03"
    reserved = maker.surrogate(span("url", "https://example.com"))
    assert reserved != "https://example.com" and reserved.endswith(".example.com")
    org = maker.surrogate(span("organization", "Contoso Ltd."))
    assert org.endswith(" Ltd.") and "Contoso" not in org


def test_apply_checks_its_input() -> None:
    maker = SurrogateMaker(SECRET, "case-1")
    text = "commit 3f9a2c1"
    with pytest.raises(ValueError, match="does not match"):
        maker.apply(text, [Span(0, 6, "commit_sha", "3f9a2c1", 1.0)])
    with pytest.raises(ValueError, match="overlapping"):
        maker.apply(
            text,
            [Span(7, 14, "commit_sha", "3f9a2c1", 1.0), Span(8, 10, "commit_sha", "f9", 1.0)],
        )
    with pytest.raises(ValueError, match="unknown identifier class"):
        maker.surrogate(Span(0, 1, "planet", "x", 1.0))
    with pytest.raises(ValueError, match="empty"):
        SurrogateMaker(b"", "case-1")
    with pytest.raises(ValueError, match="unsupported locale"):
        SurrogateMaker(SECRET, "case-1", "fr_FR")
    assert maker.apply("nothing here", []) == ("nothing here", maker.apply("", [])[1])
    assert SurrogateMaker(SECRET, "c", "zh-TW").locale == "zh_TW"


def test_no_redaction_marks_over_many_values() -> None:
    values = {
        "person": ["林雅婷", "Dana Whitfield", "Nguyễn Văn An", "@alice", "ALICE"],
        "organization": ["宏達科技", "Brightline Foods", "Công ty TNHH An Phát", "ACME"],
        "project": ["閃電計畫", "Project Falcon", "Dự án Mặt Trời", "LIGHTNING"],
        "feature": ["閃購模組", "Flash Checkout", "Mua Một Tặng Một"],
        "url": ["https://a.b.io/x/%E9%96%83/PAY-1?q=1#frag", "www.acme.io", "socket.io"],
        "error_code": ["ERR_PAY_4012", "E1042", "PAYGW-E1042", "card_declined"],
    }
    for i in range(20):
        maker = SurrogateMaker(f"s{i}".encode(), "case", "zh_TW")
        for cls, originals in values.items():
            for original in originals:
                new = maker.surrogate(span(cls, original))
                assert new and new != original and not has_redaction(new)


def test_parse_helpers() -> None:
    assert parse_money("3萬元") == 30000
    assert parse_money("1,5 triệu") == 1_500_000
    assert parse_money("US$50k") == 50_000
    assert parse_money("no amount") is None
    assert parse_date("2024年3月5日") == dt.date(2024, 3, 5)
    assert parse_date("05/03/2024") == dt.date(2024, 3, 5)
    assert parse_date("05/03/2024", dayfirst=False) == dt.date(2024, 5, 3)
    assert parse_date("not a date") is None


def test_long_cases_do_not_run_out_of_surrogates() -> None:
    maker = SurrogateMaker(SECRET, "long-case", "zh_TW")
    originals = [f"公司{i}科技" for i in range(80)]
    surrogates = [maker.surrogate(span("organization", o)) for o in originals]
    assert all(
        new != old and new.endswith("科技") for old, new in zip(originals, surrogates, strict=True)
    )
    words = [
        maker.surrogate(span("branch", f"fix/module{chr(97 + i % 26)}{i}")) for i in range(200)
    ]
    assert len(set(words)) == 200
