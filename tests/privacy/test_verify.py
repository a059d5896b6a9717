"""Variant verification: structure cell by cell, overlap in every fold (the finding names
the field and the class, never the original), redaction marks in any field."""

from __future__ import annotations

import unicodedata

import pytest

from caseforge.privacy.fold import strip_marks
from caseforge.privacy.overlap import Original, Settings, fields_of
from caseforge.privacy.verify import check_overlap, check_redaction, content_fields
from caseforge.synth.contract import check_structure

FLAGS = ["3:conflict", "3:mismatch", "4:unverifiable", "7:unverifiable"]
ORIGINAL = {
    "input": {
        "card": "【需求】結帳頁支援優惠碼，提出：林佩萱，commit 3f9a2c1d4e5b 修過 ERR_PAY_4012。"
        "所以這次的碼務必設使用次數限制，不能再讓人鑽漏洞一直折。"
        "預算 NT$1,280,000，2026/3/5 上線。",
        "reporter": "pei.lin@mumian.example.com",
        "phone": "0912-345-678",
    },
    "tags": ["coupon", "木棉市集"],
    "expect": {
        "reply": {"must_include": ["優惠碼輸入框"]},
        "sku": {"mode": "regex", "value": "MM-[0-9]{4}"},
    },
}
TERMS = [
    ("person", "林佩萱"),
    ("organization", "木棉市集"),
    ("commit_sha", "3f9a2c1d4e5b"),
    ("error_code", "ERR_PAY_4012"),
    ("email", "pei.lin@mumian.example.com"),
    ("phone", "0912-345-678"),
]
CLEAN = "【需求】課程上架流程，提出：周承翰，修正 ERR_CRS_7731 之後再上線。講師送審後需主管核准。"


@pytest.fixture(scope="module")
def original() -> Original:
    return Original(list(fields_of(ORIGINAL)), TERMS)


def test_a_faithful_variant_passes_every_check(original: Original) -> None:
    assert check_structure(
        FLAGS, ["8:conflict", "8:mismatch", "3:unverifiable", "11:unverifiable"], 12
    ).passed
    assert check_overlap(original, [("input.card", CLEAN)]).passed
    assert check_redaction([("input.card", CLEAN)]).passed


@pytest.mark.parametrize(
    ("field", "variant", "cls"),
    [
        ("input.card", CLEAN + " 參考提交 3f9a2c1", "commit_sha"),  # the SHA's prefix
        ("input.card", CLEAN.replace("周承翰", "林 佩萱"), "person"),  # spaced
        ("input.card", CLEAN.replace("周承翰", "陳昱廷和佩萱"), "part of a person's name"),
        ("input.card", CLEAN.replace("ERR_CRS_7731", "err-pay-4012"), "error_code"),
        # a copied passage: 24 Han characters in a row, however ordinary its words
        (
            "input.card",
            CLEAN + "這次的碼，務必設使用次數限制，不能再讓人鑽漏洞一直折",
            "a run of text",
        ),
        ("input.card", CLEAN + "預算一百二十八萬元", "a number"),
        ("input.card", CLEAN + "民國115年3月5日", "a calendar date"),
        ("tags[1]", "木棉市集", "organization"),
        ("input.reporter", "PEI.LIN@MUMIAN.EXAMPLE.COM", "email"),
        ("input.card", CLEAN + " 找 林~佩★萱", "person"),  # symbols inside the name
        ("input.card", CLEAN + " 預算 1 280 000 đồng", "a number"),  # spaces for thousands
        ("input.card", CLEAN + " 預算 １，２８０，０００元", "a number"),  # full-width commas
        ("input.card", unicodedata.normalize("NFD", CLEAN + " ngày 5 tháng 3 năm 2026"), "date"),
        ("input.card", CLEAN + " 請打 +886 912 345 678", "phone"),  # the same number abroad
    ],
)
def test_leaks_fail_naming_the_field_and_class(
    original: Original, field: str, variant: str, cls: str
) -> None:
    result = check_overlap(original, [(field, variant)])
    assert not result.passed and result.detail.startswith(f"{field}: shares ")
    assert cls in result.detail
    for secret in ("林佩萱", "3f9a2c1", "4012", "木棉", "1,280,000", "mumian"):
        assert secret not in result.detail


def test_runs_are_configurable_and_safe_texts_are_boilerplate() -> None:
    text = "所以這次的閾值務必設使用次數限制"
    copy = [("t", "說明：這次的閾值務必設使用次數")]  # 12 Han characters in a row, with 閾值
    assert [f.cls for f in Original([("c", text)]).findings(copy)] == ["run"]
    assert not Original([("c", text)], settings=Settings(cjk_run=13)).findings(copy)
    assert not Original([("c", text)], safe=["這次的閾值務必設使用次數限制是範本"]).findings(copy)


def test_a_shared_run_counts_when_it_says_something_uncommon_or_is_long() -> None:
    """Issue 24: common words never leak. A short run of ordinary words is how anyone writes
    ("can you confirm you've received it"); one with an uncommon word, or a long one, is
    the original's."""
    original = Original(
        [
            (
                "c",
                "Also the deposit went out on Monday. Can you confirm you've received it? "
                "Our bank says it cleared.",
            )
        ]
    )
    assert not original.findings(
        [("t", "Hi! Can you confirm you've received it? Our bank says it cleared.")]
    )
    han = Original([("c", "收到 複核結果最晚週四前會回覆您 在此之前不會從信用卡扣款 請放心")])
    assert not han.findings([("t", "收到 複查結果週四前會回覆您 在此之前不會扣押金 請放心")])
    passage = " ".join(
        ["the refund is queued behind the nightly batch and will post by Friday"] * 2
    )
    assert [f.cls for f in Original([("c", passage)]).findings([("t", passage)])] == ["run"]


def test_copied_latin_clauses_are_caught() -> None:
    original = Original(
        [("c", "Both retries hit the proration check on seat C4 at the very same moment")]
    )
    found = original.findings(
        [("t", "New card: both retries hit the proration check on seat C4, sadly")]
    )
    assert [f.cls for f in found] == ["run"]
    assert not original.findings([("t", "Two customers arrive; both want the aisle seat")])


@pytest.mark.parametrize(
    "mark",
    [
        "█████",
        "■■",
        "[REDACTED]",
        "王○明",
        "<PERSON>",
        "{{name}}",
        "王某",
        "林O明",
        "[redacted email]",
    ],
)
def test_redaction_marks_are_rejected_in_any_field(mark: str) -> None:
    result = check_redaction([("input.card", CLEAN), ("note", f"客戶 {mark} 反映")])
    assert not result.passed and result.detail.startswith("redaction marks in note: ")


def test_dropping_the_double_flag_is_rejected() -> None:
    dropped = ["8:conflict", "5:mismatch", "3:unverifiable", "11:unverifiable"]
    result = check_structure(FLAGS, dropped, 12)
    assert not result.passed and "multi-flagged items" in result.detail
    assert "4 flags became 3" in check_structure(FLAGS, FLAGS[:3], 12).detail
    outside = ["13:conflict", "13:mismatch", "3:unverifiable", "11:unverifiable"]
    assert "lacks" in check_structure(FLAGS, outside, 12).detail


def test_content_keys_and_written_provenance_are_compared_without_printing_them(
    original: Original,
) -> None:
    variant = {
        "input": {"by_customer": {"林佩萱": "VIP"}},
        "provenance": {"synth_run": "resynth-1", "source": "木棉市集 的單"},
    }
    found = check_overlap(original, content_fields(variant))
    assert not found.passed
    assert "input.by_customer{0}.key: shares" in found.detail  # the key's position, not its text
    assert "provenance.source: shares" in found.detail
    assert "林佩萱" not in found.detail


def test_an_organisation_is_found_without_its_suffix() -> None:
    original = Original([], [("organization", "金蘭食品行")])
    assert [f.cls for f in original.findings([("t", "合作廠商 ＫＮ金蘭食品 出貨")])] == [
        "organization"
    ]


@pytest.mark.parametrize(
    ("original", "variant"),
    [
        ("请打 04-2358-7719 分机 31 找陈先生", "call 04-2358-7719 for the warehouse"),
        ("请打 04-2358-7719 分機 31 找陳先生", "call 0423587719 about it"),
        ("call (02) 2598-7713 ext. 204 after lunch", "ring 02 2598 7713 tomorrow"),
    ],
)
def test_a_phone_number_copied_without_its_extension_is_caught(original: str, variant: str) -> None:
    """The scanner's span swallowed the extension, so the bare number passed (issue 24, 1)."""
    from caseforge.privacy.verify import know_original

    known = know_original({"input": {"log": original}})
    assert not check_overlap(known.original, [("input.log", variant)]).passed


@pytest.mark.parametrize(
    ("name", "original", "variant"),
    [
        ("Nguyễn Minh Tuấn", "anh Nguyễn Minh Tuấn gọi lại", "tuần này bên em bận, hẹn tuần sau"),
        ("Trần Thị Lan", "chị Trần Thị Lan báo lỗi", "lần sau nhắn riêng nhé"),
    ],
)
def test_a_common_vietnamese_word_is_not_the_name_it_looks_like(
    name: str, original: str, variant: str
) -> None:
    """`tuần` (week) is not Tuấn, `lần` (time) is not Lan: a stripped match counts only for a
    word written without diacritics or with the name's own (issue 24, 4)."""
    from caseforge.privacy.identifiers import Glossary
    from caseforge.privacy.verify import know_original

    known = know_original({"input": {"log": original}}, Glossary.from_mapping({"person": [name]}))
    assert check_overlap(known.original, [("input.log", variant)]).passed
    if name.endswith("Lan"):  # a given name that is also a common word is left to the glossary
        return
    # the given name itself, diacritics dropped, still is the name
    given = strip_marks(name.split()[-1])
    assert not check_overlap(
        known.original, [("input.log", f"{variant}, hỏi anh chị {given} nhé")]
    ).passed


@pytest.mark.parametrize(
    ("organization", "variant"),
    [
        ("云栖家居", "the 云栖 showroom called back"),
        ("旭馳租車", "旭驰 rental desk"),
        ("Northgate Supply Co.", "our vendor Northgate sent it"),
        ("Vantorra Freight", "ship with V4ntorra again"),
        ("Quillmark", "the Qu1llm4rk team"),
    ],
)
def test_a_company_by_its_distinctive_part_or_in_leetspeak_is_caught(
    organization: str, variant: str
) -> None:
    """云栖 of 云栖家居, Northgate of Northgate Supply Co., digits for letters (issue 24, 5)."""
    original = Original(
        [("input.log", f"客户 {organization} 来电")], [("organization", organization)]
    )
    assert original.findings([("input.log", variant)])


def test_leetspeak_reading_does_not_touch_ordinary_codes() -> None:
    original = Original([("input.log", "客户 Quillmark 来电")], [("organization", "Quillmark")])
    assert original.findings([("input.log", "build v2.3.1 with http2 and s3 on AC4")]) == []
