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
    # the phone as the scanner reads it, and its skeleton in its national spelling
    assert classes(original, "call 01473 555014") == {"phone", "identifier"}


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


# --- forms found on the second corpus (corpus_e), in their original shape ----------------------


@pytest.mark.parametrize(
    ("original", "variant"),
    [
        # a phone with its country code for one written nationally, and the other way round
        ("sđt chồng mình anh Khánh 0977 485 120", "người nhận số +84977485120"),
        ("call +44 1473 555 014", "ring 01473555014"),
        # the last group of an account, an order id's own number, written alone
        ("帳號轉的吧 188-50-0336-4172", "帳號最後是 4172"),
        ("订单号 YF-ORD-2605-88317", "订单号末尾是 88317"),
        # a plate and a postcode written in groups, and then without the space
        ("Reg is LK19 XPZ if anyone's ringing", "Reg LK19XPZ, white Transit"),
        ("address is 7 Orchard Close, Harrogate HG2 8PL", "deliver to postcode HG2 8PL"),
        # an IPv4 address's /24 network
        ("IP máy 10.24.3.17", "tivi nằm chung dải 10.24.3.0/24"),
        # a range of days, and the same days written another way
        ("Symposium on June 18–19. We signed", "free on the 18th and 19th of June"),
        ("6月18-19日 场地已订", "June 19 那天"),
    ],
)
def test_an_id_phone_or_date_written_another_way_is_caught(original: str, variant: str) -> None:
    assert classes(original, variant), variant


@pytest.mark.parametrize(
    ("original", "variant"),
    [
        ("07700 900582 is my mobile", "call 07700 900123"),  # a UK mobile range's first group
        ("router at 192.168.1.10", "printer at 192.168.1.20"),  # a home network
        ("住在 B 座 2207 室", "会员卡 ZP-VIP-2207 应该打 85 折"),  # a card's number is no flat's
        ("tests 2024-Q3 done", "sprint HT-2024 planning"),  # a year is no id's group
    ],
)
def test_a_shared_number_that_names_nothing_of_the_original_passes(
    original: str, variant: str
) -> None:
    assert not classes(original, variant), variant


@pytest.mark.parametrize(
    ("original", "variant", "terms"),
    [
        ("后端 钟磊 负责", "后端 钟垒 负责", []),  # a two-character name, the same sound
        ("主治是 钱医生（钱蔓）", "接诊的是钱曼医生", []),
        ("To: Marcus Bell <mbell@tiller.example>", "To: Markus Belle", [("person", "Marcus Bell")]),
        ("finance: Anya Petrova", "Treasurer Anja Petrowa", []),  # found without a glossary
        ("Apologies: Director Saoirse Quinn", "spelled as Seersha Quinn", []),
        ("From: Đặng Quốc Vỹ", "From: Đặng Quốc Vĩ", [("person", "Đặng Quốc Vỹ")]),  # y for i
        ("Kendra Lowe <kendra.lowe@brightpath.example>", "To: kendra.lowe@other.example", []),
        ("陳小姐 <peggy.li@lumi.example.com>", "cc peggy.li please", []),
    ],
)
def test_a_name_respelled_or_an_e_mail_user_alone_is_caught(
    original: str, variant: str, terms: list[tuple[str, str]]
) -> None:
    assert classes(original, variant, terms), variant


@pytest.mark.parametrize(
    ("original", "variant", "terms"),
    [
        # 白班 (day shift) 找 (find) is no name
        ("12/25 白班找 Ray 林代，加班費照算", "12/24 白班找 小吳 代", []),
        # Hoa the person, and a shop whose name opens with hoa (flowers)
        ("liên hệ c Hoa quản lý sảnh", "Hoa Cưới Hạ Vy 19:12", [("person", "c Hoa")]),
        # a school's word (trường) the scanner took from a glossary entry
        ("Lớp Chồi 2, Trường Mầm non Hoa Sen Nhỏ", "Lớp 3A4, Trường Tiểu học Bình Minh", []),
        ("post in #backend please", "the backend is slow", []),  # a channel named by a word
        ("Meeting notes: Chromebook Rollout", "Meeting notes: Self-Checkout Rollout", []),
        ("write to support@shop.example", "write to support@other.example", []),  # a role's
        (  # the line WeChat writes into every export
            "消息记录（此消息记录为文本格式，不支持重新导入）\n老王：货到了",
            "消息记录（此消息记录为文本格式，不支持重新导入）\n小李：收到",
            [],
        ),
    ],
)
def test_an_honest_rewrite_sharing_only_ordinary_words_passes(
    original: str, variant: str, terms: list[tuple[str, str]]
) -> None:
    assert not classes(original, variant, terms), variant


def test_a_common_word_the_scanner_took_from_a_glossary_name_is_no_needle() -> None:
    """The scanner read the school's word trường as the organization of the glossary entry;
    as a needle it rejected an honest rewrite about another school."""
    glossary = Glossary.from_mapping({"organization": ["Trường Mầm non Hoa Sen Nhỏ"]})
    original = "HỌP PHỤ HUYNH – Lớp Chồi 2, Trường Mầm non Hoa Sen Nhỏ. Cô nhắc trường nghỉ lễ"
    terms = [(s.cls, s.text) for s in IdentifierDetector(glossary).scan(original, "vi")]
    assert ("organization", "Trường Mầm non Hoa Sen Nhỏ") in terms
    assert not classes(original, "Lớp 3A4, Trường Tiểu học Bình Minh", terms)
    assert classes(original, "Lớp 3A4, Trường Mầm non Hoa Sen Nhỏ", terms)


def test_a_round_share_is_no_number_of_the_original_but_a_precise_rate_is() -> None:
    """A round share (88%) is in every report; a rate of three significant digits is not."""
    assert not classes("会費收繳率 88%，下學期再追", "上學期會費收繳率 88%，未繳的家長")
    assert classes("房貸利率 2.185% 固定", "利率 2.185% 的方案")


# --- forms the third corpus (corpus_f) showed, in their original shape -------------------------


@pytest.mark.parametrize(
    ("original", "variant", "shared"),
    [
        # a bare date as the text's language writes it: month first in Chinese
        ("打卡系統匯出 12/1–12/31 共 46.5 小時", "到職日 1/12，系統填成 1/21", False),
        ("打卡系統匯出 12/1 的紀錄", "打卡系統匯出 12/1 以後的", True),
        # and day first in Vietnamese; a range's first date is no day of the range
        ("em nghỉ 9/3–12/3 có đơn", "em nghỉ 16/3–18/3 có đơn", False),
        ("em nghỉ từ 9/3 nha", "nghỉ ngày 9 tháng 3", True),
        # the last digits of an account or a phone, however it is grouped
        ("Tài khoản nhận lương vẫn là ACB 2047 5583 9", "qua VPBank số đuôi 55839", True),
        ("sđt 0902 611 238 nha", "gọi số đuôi 1238 giúp em", True),
    ],
)
def test_dates_and_number_tails_the_third_corpus_showed(
    original: str, variant: str, shared: bool
) -> None:
    assert bool(classes(original, variant)) is shared, variant


@pytest.mark.parametrize(
    ("original", "variant"),
    [
        ("Rehearsal moved to Fri 19:00 at the hall", "Party moved to Fri 18:00 at the barn"),
        ("Ben's cousins from Duluth just RSVP'd", "Cal's aunts from Green Bay just RSVP'd"),
        ("Rob Kessler (Owner's rep, Brookhaven)", "Paula Estrada (Owner's rep, Cobalt)"),
        (
            "on hold, the insurer hasn't confirmed the policy",
            "on hold as the insurer hasn't confirmed it",
        ),
    ],
)
def test_a_calendar_abbreviation_a_clitic_or_a_contraction_is_no_name(
    original: str, variant: str
) -> None:
    assert not classes(original, variant), variant
