"""Identifier detection on fictional tickets in Traditional Chinese, Simplified Chinese,
Vietnamese and English: every class found with exact offsets, CJK neighbours, no false SHAs,
the glossary, overlap resolution and the glossary file loader."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from caseforge.errors import CaseforgeError
from caseforge.privacy.identifiers import (
    Glossary,
    IdentifierDetector,
    Span,
    load_glossary,
)

GLOSSARY = Glossary.from_mapping(
    {
        "person": ["林雅婷", "王晓明", "Nguyễn Văn An", "Dana Whitfield"],
        "organization": ["宏達科技", "华盛零售", "Công ty TNHH An Phát", "Brightline Foods"],
        "project": ["閃電計畫", "星火计划", "Dự án Mặt Trời", "Project Falcon"],
        "feature": ["閃購模組", "秒杀模块", "Mua Một Tặng Một", "Flash Checkout"],
    }
)

# Each ticket contains every class; the pairs are what the detector must return, in order.
TICKETS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "zh-TW": (
        "請看 commit 3f9a2c1，fix/coupon-limit 分支在 2024年3月5日 出錯 ERR_PAY_4012，"
        "金額 NT$12,500 / 3萬元，聯絡 alice@contoso-corp.com 或 0912-345-678，"
        "詳見 https://jira.acme.io/browse/PAY-1234，伺服器 10.2.3.4。"
        "林雅婷 說宏達科技的閃電計畫要在閃購模組上線前完成，另一張卡是 PAY-1240。",
        [
            ("commit_sha", "3f9a2c1"),
            ("branch", "fix/coupon-limit"),
            ("date", "2024年3月5日"),
            ("error_code", "ERR_PAY_4012"),
            ("money", "NT$12,500"),
            ("money", "3萬元"),
            ("email", "alice@contoso-corp.com"),
            ("phone", "0912-345-678"),
            ("url", "https://jira.acme.io/browse/PAY-1234"),
            ("ip", "10.2.3.4"),
            ("person", "林雅婷"),
            ("organization", "宏達科技"),
            ("project", "閃電計畫"),
            ("feature", "閃購模組"),
            ("ticket_key", "PAY-1240"),
        ],
    ),
    "zh-CN": (
        "客户华盛零售反馈：星火计划的秒杀模块在2025年11月11日零点上线后报错ORDER_ERR_5003。"
        "王晓明在群里说，回滚到提交 9c1e7a2 也没用，分支 hotfix/seckill-stock 已经合并。"
        "涉及金额¥86,400和12万元。请联系wangxm@huasheng-retail.cn或138-1234-5678，"
        "工单SEC-2071，日志在 http://kibana.huasheng.internal/app/discover#/view/88f1 ，"
        "数据库172.16.8.21。",
        [
            ("organization", "华盛零售"),
            ("project", "星火计划"),
            ("feature", "秒杀模块"),
            ("date", "2025年11月11日"),
            ("error_code", "ORDER_ERR_5003"),
            ("person", "王晓明"),
            ("commit_sha", "9c1e7a2"),
            ("branch", "hotfix/seckill-stock"),
            ("money", "¥86,400"),
            ("money", "12万元"),
            ("email", "wangxm@huasheng-retail.cn"),
            ("phone", "138-1234-5678"),
            ("ticket_key", "SEC-2071"),
            ("url", "http://kibana.huasheng.internal/app/discover#/view/88f1"),
            ("ip", "172.16.8.21"),
        ],
    ),
    "vi": (
        "Khách hàng Công ty TNHH An Phát báo lỗi: sau khi triển khai Dự án Mặt Trời "
        "ngày 5 tháng 12 năm 2026, tính năng Mua Một Tặng Một trả về mã lỗi AP-ERR-502. "
        "Anh Nguyễn Văn An nói commit của a1b2c3d trên nhánh fix/voucher-rule gây ra lỗi. "
        "Số tiền bị trừ sai là 12.500.000 đồng (khoảng 1,5 triệu mỗi đơn). "
        "Liên hệ an.nguyen@anphat.com.vn hoặc 0912 345 678. Ticket VN-889, trang quản trị "
        "https://admin.anphat.vn/orders?id=7731, máy chủ 10.20.30.40, hạn chót 15/01/2027.",
        [
            ("organization", "Công ty TNHH An Phát"),
            ("project", "Dự án Mặt Trời"),
            ("date", "ngày 5 tháng 12 năm 2026"),
            ("feature", "Mua Một Tặng Một"),
            ("error_code", "AP-ERR-502"),
            ("person", "Nguyễn Văn An"),
            ("commit_sha", "a1b2c3d"),
            ("branch", "fix/voucher-rule"),
            ("money", "12.500.000 đồng"),
            ("money", "1,5 triệu"),
            ("email", "an.nguyen@anphat.com.vn"),
            ("phone", "0912 345 678"),
            ("ticket_key", "VN-889"),
            ("url", "https://admin.anphat.vn/orders?id=7731"),
            ("ip", "10.20.30.40"),
            ("date", "15/01/2027"),
        ],
    ),
    "en": (
        "Brightline Foods reported that Project Falcon's Flash Checkout broke after the "
        "Jan 15, 2027 release: checkout returns ERR_CHECKOUT_TIMEOUT. Dana Whitfield says "
        "reverting commit 4e7d9b1 on branch feature/flash-checkout fixes it (full SHA "
        "4e7d9b1c0a2f3e4d5c6b7a8091a2b3c4d5e6f708). Refunds total $12,400.00, about "
        "9,800 EUR, since 3 March 2026. Contact dana.whitfield@brightline-foods.com or "
        "(415) 555-0134. Tracked as CHK-4821; logs at "
        "https://grafana.brightline.io/d/checkout?from=now-1h; node 10.0.12.7.",
        [
            ("organization", "Brightline Foods"),
            ("project", "Project Falcon"),
            ("feature", "Flash Checkout"),
            ("date", "Jan 15, 2027"),
            ("error_code", "ERR_CHECKOUT_TIMEOUT"),
            ("person", "Dana Whitfield"),
            ("commit_sha", "4e7d9b1"),
            ("branch", "feature/flash-checkout"),
            ("commit_sha", "4e7d9b1c0a2f3e4d5c6b7a8091a2b3c4d5e6f708"),
            ("money", "$12,400.00"),
            ("money", "9,800 EUR"),
            ("date", "3 March 2026"),
            ("email", "dana.whitfield@brightline-foods.com"),
            ("phone", "(415) 555-0134"),
            ("ticket_key", "CHK-4821"),
            ("url", "https://grafana.brightline.io/d/checkout?from=now-1h"),
            ("ip", "10.0.12.7"),
        ],
    ),
}


@pytest.fixture(scope="module")
def detector() -> IdentifierDetector:
    return IdentifierDetector(GLOSSARY)


@pytest.fixture(scope="module")
def plain() -> IdentifierDetector:
    return IdentifierDetector()


def expected_spans(text: str, pairs: list[tuple[str, str]]) -> list[tuple[int, int, str, str]]:
    """(start, end, class, text) for each pair, found left to right."""
    out: list[tuple[int, int, str, str]] = []
    position = 0
    for cls, value in pairs:
        start = text.index(value, position)
        out.append((start, start + len(value), cls, value))
        position = start + len(value)
    return out


def found(spans: list[Span]) -> list[tuple[int, int, str, str]]:
    return [(s.start, s.end, s.cls, s.text) for s in spans]


@pytest.mark.parametrize("lang", list(TICKETS))
def test_every_class_found_with_exact_offsets(detector: IdentifierDetector, lang: str) -> None:
    text, pairs = TICKETS[lang]
    spans = detector.scan(text, lang)
    assert found(spans) == expected_spans(text, pairs)
    assert {s.cls for s in spans} == {cls for cls, _ in pairs}
    for span in spans:
        assert text[span.start : span.end] == span.text
        assert 0 < span.score <= 1


def test_spans_sorted_and_disjoint(detector: IdentifierDetector) -> None:
    for text, _ in TICKETS.values():
        spans = detector.scan(text)
        for before, after in itertools.pairwise(spans):
            assert before.end <= after.start


@pytest.mark.parametrize(
    ("text", "cls", "value"),
    [
        ("請寄信到alice@contoso.com謝謝", "email", "alice@contoso.com"),
        ("日期2024-03-05發生", "date", "2024-03-05"),
        ("伺服器10.2.3.4當機", "ip", "10.2.3.4"),
        ("於2024年3月5日上線", "date", "2024年3月5日"),
        ("金額NT$12,500元整", "money", "NT$12,500元"),
        ("預算3萬元以內", "money", "3萬元"),
        ("分支fix/coupon-limit已合併", "branch", "fix/coupon-limit"),
        ("錯誤碼ERR_PAY_4012出現", "error_code", "ERR_PAY_4012"),
        ("電話0912345678謝謝", "phone", "0912345678"),
        ("見PAY-1234處理", "ticket_key", "PAY-1234"),
        ("提交3f9a2c1後壞掉", "commit_sha", "3f9a2c1"),
        ("網址https://x.acme.io/a/b謝謝", "url", "https://x.acme.io/a/b"),
        ("詳見https://jira.acme.io/browse/PAY-1，謝謝", "url", "https://jira.acme.io/browse/PAY-1"),
        ("退款¥3,000元", "money", "¥3,000元"),
        ("日期为2025/11/11。", "date", "2025/11/11"),
        ("时间12月25日晚", "date", "12月25日"),
        ("Hạn chót ngày 05/03/2026.", "date", "ngày 05/03/2026"),
        ("Hạn chót tháng 12/2026.", "date", "tháng 12/2026"),
        ("Giá 500.000đ một tháng", "money", "500.000đ"),
        ("Phí 2 tỷ đồng", "money", "2 tỷ đồng"),
        ("gọi +84 912 345 678 nhé", "phone", "+84 912 345 678"),
        ("Shipped on March 5th, 2026.", "date", "March 5th, 2026"),
        ("Budget: USD 1,200.", "money", "USD 1,200"),
        ("call +886 912 345 678", "phone", "+886 912 345 678"),
        ("v6 at 2001:db8:85a3::8a2e:370:7334 now", "ip", "2001:db8:85a3::8a2e:370:7334"),
        ("see api.cloudledger.internal for logs", "url", "api.cloudledger.internal"),
        ("invoice INV-2026-0091 is open", "ticket_key", "INV-2026-0091"),
        ("錯誤碼 PAYMENT_DECLINED 出現", "error_code", "PAYMENT_DECLINED"),
        ("error code card_declined", "error_code", "card_declined"),
        ("PR #482 merged", "ticket_key", "#482"),
        ("預算 NT$3,000~5,000 之間", "money", "NT$3,000~5,000"),
        ("約 3-5萬元", "money", "3-5萬元"),
        ("about 100~200 USD", "money", "100~200 USD"),
    ],
)
def test_next_to_cjk_and_other_forms(
    plain: IdentifierDetector, text: str, cls: str, value: str
) -> None:
    spans = plain.scan(text)
    start = text.index(value)
    assert (start, start + len(value), cls, value) in found(spans)


@pytest.mark.parametrize(
    "text",
    [
        "The deadbeef cafe, a facade1 and a1b2c3d4 sit here without any context.",
        "訂單編號 1234567 與色碼 ff00aa 無關",
        "build 20240305 passed; checksum b4d5e6f7a8 noted",
        "commit deadbeef",  # no digit: an English word, not a SHA
    ],
)
def test_no_sha_without_context(plain: IdentifierDetector, text: str) -> None:
    assert [s for s in plain.scan(text) if s.cls == "commit_sha"] == []


def test_short_sha_context_words_in_each_language(plain: IdentifierDetector) -> None:
    for text in (
        "revert 3f9a2c1 please",
        "請回滾提交 3f9a2c1",
        "xem commit của 3f9a2c1",
        "3f9a2c1 這個 commit 有問題",
        "commits 1a2b3c4, 5d6e7f8 和 9a8b7c6",
    ):
        shas = [s.text for s in plain.scan(text) if s.cls == "commit_sha"]
        assert shas and all(len(s) == 7 for s in shas), text
    listed = plain.scan("commits 1a2b3c4, 5d6e7f8 和 9a8b7c6")
    assert [s.text for s in listed] == ["1a2b3c4", "5d6e7f8", "9a8b7c6"]


@pytest.mark.parametrize(
    "text",
    ["UTF-8 and ISO-8601", "AC-3 conflicts with AC-2", "CVE-2024-1234", "UTC-8 at 10:30:00"],
)
def test_not_ticket_keys(plain: IdentifierDetector, text: str) -> None:
    assert plain.scan(text) == []


def test_no_identifiers_in_plain_prose(plain: IdentifierDetector) -> None:
    text = (
        "這張卡有 7 條 AC，第 2 條寫「優惠碼一人只能用一次」，第 3 條寫「優惠碼可以無限次使用」。"
        "重跑了 24 次，4 個 case × 2 個 configuration × 3 次，通過率 64%。"
        "The agent missed 3 of 4 flags; Version 2 ships in two weeks."
    )
    assert plain.scan(text) == []


def test_placeholders_are_not_identifiers(plain: IdentifierDetector) -> None:
    assert plain.scan("see example.com, shop.test and docs.example.org") == []
    assert [s.cls for s in plain.scan("https://example.com/customers/hongda")] == ["url"]


def test_glossary_matching(plain: IdentifierDetector) -> None:
    glossary = Glossary.from_mapping(
        {"company": ["Contoso"], "person": ["Nguyễn Văn An", "林雅婷"], "feature": "閃購"}
    )
    detector = IdentifierDetector(glossary)
    text = "contoso and CONTOSO but not Contosoville; 請林雅婷確認閃購，Nguyễn  Văn An ok"
    spans = detector.scan(text)
    assert [(s.cls, s.text) for s in spans] == [
        ("organization", "contoso"),
        ("organization", "CONTOSO"),
        ("person", "林雅婷"),
        ("feature", "閃購"),
        ("person", "Nguyễn  Văn An"),
    ]
    assert all(s.score == 1.0 for s in spans)
    # the same strings passed per call to a detector built without a glossary
    assert found(plain.scan(text, glossary=glossary)) == found(spans)
    # decomposed (NFD) Vietnamese is found too
    import unicodedata

    nfd = unicodedata.normalize("NFD", "anh Nguyễn Văn An")
    assert [s.cls for s in detector.scan(nfd)] == ["person"]
    # a Vietnamese name is not found inside a longer Latin word
    vi = IdentifierDetector(Glossary.from_mapping({"organization": ["Đông Á"]}))
    assert [s.start for s in vi.scan("XĐông Á / Đông Á")] == [10]


def test_overlap_resolution(plain: IdentifierDetector) -> None:
    # a ticket key inside a branch or a URL: the longer span wins
    assert [(s.cls, s.text) for s in plain.scan("branch fix/PAY-1234-coupon")] == [
        ("branch", "fix/PAY-1234-coupon")
    ]
    assert [s.cls for s in plain.scan("see https://jira.acme.io/browse/PAY-1234 now")] == ["url"]
    # the same characters matched as ticket key and as branch name: the key wins
    assert [s.cls for s in plain.scan("PAY-1234 branch")] == ["ticket_key"]
    # a glossary name inside an e-mail address: the address is replaced whole
    detector = IdentifierDetector(Glossary.from_mapping({"person": ["alice"]}))
    assert [(s.cls, s.text) for s in detector.scan("mail alice@contoso.com or alice")] == [
        ("email", "alice@contoso.com"),
        ("person", "alice"),
    ]
    # a glossary span crossing a pattern span is kept, the pattern span dropped
    crossing = IdentifierDetector(Glossary.from_mapping({"project": ["5日計畫"]}))
    spans = crossing.scan("2024年3月5日計畫啟動")
    assert [(s.cls, s.text) for s in spans] == [("project", "5日計畫")]


def test_languages(plain: IdentifierDetector) -> None:
    text = TICKETS["en"][0]
    spans = [found(plain.scan(text, lang)) for lang in ("zh-TW", "zh-CN", "vi", "en", None)]
    assert all(s == spans[0] for s in spans)
    with pytest.raises(CaseforgeError, match="unsupported language"):
        plain.scan("x", "fr")
    english = IdentifierDetector(languages=("en",))
    with pytest.raises(CaseforgeError, match="not enabled"):
        english.scan("x", "vi")
    assert plain.scan("") == []


def test_span_json() -> None:
    span = Span(3, 10, "commit_sha", "3f9a2c1", 0.85)
    assert span.to_json() == {
        "start": 3,
        "end": 10,
        "class": "commit_sha",
        "text": "3f9a2c1",
        "score": 0.85,
    }


# --- glossary files -------------------------------------------------------------------------


def test_load_glossary(tmp_path: Path) -> None:
    path = tmp_path / "glossary.yaml"
    path.write_text(
        "person: [林雅婷, 'Dana Whitfield']\n"
        "company:\n  - 宏達科技\n"
        "project: [閃電計畫]\n"
        "feature: 閃購模組\n"
        "error_code: [ERR_PAY_4012]\n",
        encoding="utf-8",
    )
    glossary = load_glossary(path)
    assert dict(glossary.items()) == {
        "person": ("林雅婷", "Dana Whitfield"),
        "organization": ("宏達科技",),
        "project": ("閃電計畫",),
        "feature": ("閃購模組",),
        "error_code": ("ERR_PAY_4012",),
    }
    assert len(glossary) == 6
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n", encoding="utf-8")
    assert not load_glossary(empty)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("person: [林雅婷\n", "YAML syntax error"),
        ("- 林雅婷\n", "maps a class"),
        ("person: [林雅婷]\nplanet: [Mars]\n", "2:1: planet: unknown class 'planet' (use one of"),
        ("persn: [林雅婷]\n", "1:1: persn: unknown class 'persn' (did you mean 'person'?)"),
        ("person: [林雅婷, {a: 1}]\n", "entries must be strings"),
        ("person: ['  ']\n", "empty string"),
    ],
)
def test_bad_glossary_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "glossary.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CaseforgeError) as info:
        load_glossary(path)
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(str(path))
    assert message in text


def test_missing_glossary_file(tmp_path: Path) -> None:
    with pytest.raises(CaseforgeError, match="glossary file not found"):
        load_glossary(tmp_path / "nope.yaml")


def test_glossary_from_mapping_rejects_unknown_class() -> None:
    with pytest.raises(ValueError, match="unknown class"):
        Glossary.from_mapping({"planet": ["Mars"]})
