"""The original's distinctive set (privacy.distinct): names found by word frequency and shape
without a glossary, shared runs that count only when they say something uncommon, and the
defects of issue 24 in their original shape."""

from __future__ import annotations

import sys

import pytest

from caseforge.errors import EnvError
from caseforge.privacy import distinct
from caseforge.privacy.identifiers import Glossary, IdentifierDetector
from caseforge.privacy.overlap import Original


def classes(original: str, variant: str, terms: list[tuple[str, str]] | None = None) -> set[str]:
    return {f.cls for f in Original([("c", original)], terms or []).findings([("t", variant)])}


# --- names without a glossary (defect 5) ------------------------------------------------------

CHAT_ZH = "19:02 陈柏翰 你好 我上週租的車 還車時說有刮傷\n19:06 云栖家居 陈先生您好 幫您查一下"
CHAT_EN = "10:02 Renee Lindqvist: the Vantorra order shipped from Alder Creek Rd on Tuesday"


@pytest.mark.parametrize(
    "variant",
    [
        "Chen Bohan asked about the scratch",  # Pinyin with spaces
        "chenbohan@example.com wrote again",  # Pinyin squashed
        "Chén Bóhàn called",  # Pinyin with tones
        "陳柏翰 called",  # Traditional for Simplified
        "陈 柏 翰 called",  # spaced
        "客服 柏翰 回覆",  # the given name alone
        "云栖 the furniture shop",  # a business's distinctive part without its trade
    ],
)
def test_a_han_name_found_without_a_glossary_is_caught_in_every_form(variant: str) -> None:
    assert classes(CHAT_ZH, variant), variant


@pytest.mark.parametrize(
    "variant",
    [
        "Lindqvist asked for a refund",
        "R e n e e L i n d q v i s t",
        "the V4ntorra order",  # digits for letters
        "the Vantorra order",
        "Lind\u200bqvist",  # zero-width inside
    ],
)
def test_a_latin_name_no_dictionary_has_is_caught(variant: str) -> None:
    assert classes(CHAT_EN, variant), variant


def test_names_are_found_by_frequency_and_shape() -> None:
    terms = distinct.name_terms(
        CHAT_ZH + "\n" + CHAT_EN + "\nnhà cung cấp Tân Hòa Phong ở Bình Dương"
    )
    assert ("person", "陈柏翰") in terms
    assert ("organization", "云栖家居") in terms
    assert ("distinctive", "Lindqvist") in terms and ("distinctive", "Vantorra") in terms
    assert ("distinctive", "Hòa Phong") in terms
    found = {t for _, t in terms}
    # ordinary words, register words and labels are not names
    for word in ("Tuesday", "Zalo", "你好", "幫您查", "有刮傷", "the"):
        assert word not in found, word


@pytest.mark.parametrize(
    "text",
    [
        "Zalo: nhóm CSKH Cửa hàng\n09:12 Em cảm ơn anh, lần sau nhắn riêng Zalo em nhé",
        "Facilitator: the PM\nScribe: the designer\nAttendees: everyone",
        "Resend the invoice, please. Retry after the hotfix lands.",
        "收到 複核結果最晚週四前會回覆您 在此之前不會從信用卡扣款 請放心",
        "預算 2 萬以內，帳戶餘額約 186 元，排程卡住了",
    ],
)
def test_ordinary_text_yields_no_name(text: str) -> None:
    assert distinct.name_terms(text) == []


# --- Vietnamese without false alarms (defect 4) ----------------------------------------------


def test_a_vietnamese_word_with_other_marks_is_not_the_name() -> None:
    original = "Anh Tuấn và chị Lan sẽ gọi lại cho khách"
    terms = [("person", "Tuấn"), ("person", "Lan")]
    assert not classes(original, "Tuần này em gửi lại lần nữa nhé", terms)
    assert classes(original, "Tuan sẽ gọi", terms)  # no diacritics: the name
    assert classes(original, "Tuấn sẽ gọi", terms)  # its own


def test_the_scanner_does_not_read_a_word_with_other_marks_as_a_glossary_name() -> None:
    glossary = Glossary.from_mapping(
        {"person": ["Lan", "Nguyen Thi Kim Oanh", "Nguyễn Thị Kim Oanh"]}
    )
    spans = IdentifierDetector(glossary).scan("Lần này chị Nguyễn Thị Kim Oanh gọi, Lan nghe máy")
    assert [s.text for s in spans] == ["Nguyễn Thị Kim Oanh", "Lan"]


def test_wechat_at_everyone_is_not_a_handle() -> None:
    assert IdentifierDetector().scan("@所有人 今晚十點維護") == []


# --- runs: common words never leak -----------------------------------------------------------


def test_a_short_run_of_ordinary_words_is_not_a_leak() -> None:
    original = (
        "Also, the deposit went out. Can you confirm you've received it? Our bank says it cleared."
    )
    assert not classes(original, "Can you confirm you've received it? Our bank says it cleared.")


def test_a_run_with_an_uncommon_word_or_a_long_passage_is_a_leak() -> None:
    original = "The proration anchor date slipped when the renewal moved to the first of the month"
    assert classes(original, "so the proration anchor date slipped when") == {"run"}
    passage = (
        "we will send the replacement once the warehouse confirms the pallet count and the "
        "carrier books a slot for next week"
    )
    assert classes(passage, "Note: " + passage) == {"run"}


# --- numbers and dates ------------------------------------------------------------------------


def test_phone_numbers_compare_as_a_whole_not_group_by_group() -> None:
    original = "Kettle & Pine | +44 1473 555 014"
    assert not classes(original, "Northern Pages | +1 416 555 0107")  # both fictional 555
    assert classes(original, "call 01473 555014") == {"phone"}


def test_a_year_alone_and_a_day_both_name_relatively_are_not_the_original_s() -> None:
    today = __import__("datetime").date(2026, 9, 3)
    original = Original([("c", "2026 年度結算 月底前匯款")], today=today)
    assert not original.findings([("t", "2026 年的活動 月底前完成")])
    assert {f.cls for f in original.findings([("t", "9/30 前完成")])} == {"date"}


# --- the extra --------------------------------------------------------------------------------


def test_without_the_privacy_extra_the_check_stops_and_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for cached in (distinct._wordfreq, distinct._jieba, distinct.zipf_latin, distinct.zipf_han):
        cached.cache_clear()
    monkeypatch.setitem(sys.modules, "wordfreq", None)
    try:
        with pytest.raises(EnvError, match=r"pip install 'caseforge\[privacy\]'"):
            distinct.name_terms("Renee Lindqvist")
        assert not distinct.available()
    finally:
        distinct._wordfreq.cache_clear()
        distinct._jieba.cache_clear()
        distinct.zipf_latin.cache_clear()


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("WhatsApp Chat with Riverside Allotments Committee", []),  # the group's title
        ("Teams Producer Nell Curnow joined", []),
        ("LINE ID：xuchi_tyairport 加了", ["xuchi_tyairport"]),  # an id stays one
    ],
)
def test_a_capitalised_word_after_an_apps_name_is_not_a_messaging_id(
    text: str, found: list[str]
) -> None:
    spans = IdentifierDetector().scan(text)
    assert [s.text for s in spans if s.cls == "messaging_id"] == found
