"""corpus_d: informal chats, emails and meeting notes in four languages, written blind for
issue 24 (tests/privacy/corpus_d/README.md). The corpus is held to its own spec, and what
``verify`` and the scanner do on it is pinned as a ratchet: the figures measured before any
change made for it may only get better (benchmarks/privacy_corpus.py prints them)."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from tests.privacy.corpora import benchmark, load

HERE = Path(__file__).parent / "corpus_d"


def test_the_corpus_holds_what_its_spec_asks() -> None:
    logs, clean, variants = (
        load(HERE, "sensitive.yaml"),
        load(HERE, "clean.yaml"),
        load(HERE, "variants.yaml"),
    )
    assert len(logs) >= 40 and len(clean) >= 8
    assert collections.Counter(log["lang"] for log in logs) == {
        "zh-TW": 10,
        "zh-CN": 10,
        "vi": 10,
        "en": 10,
    }
    classes = collections.Counter(cls for log in logs for cls, _ in log["identifiers"])
    assert sum(classes.values()) >= 300 and len(classes) >= 15
    by_id = {log["id"]: log for log in logs}
    for log in logs:
        for cls, value in log["identifiers"]:
            assert str(value) in log["text"], (log["id"], cls, value)
    kinds = collections.Counter(v["kind"] for v in variants)
    assert kinds["honest"] == len(logs) and sum(kinds.values()) - kinds["honest"] >= 120
    for variant in variants:
        if variant["kind"] != "honest":
            assert variant["disguised"] in variant["text"], variant["source"]
            assert variant["of"] in by_id[variant["source"]]["text"], variant["source"]
    for log in clean:
        assert log["identifiers"] == []


# Measured on 2026-12-03: before any change made for this corpus 638, 91, 58 and 30. Then,
# after reading informal amounts, dates and ids (112, 76, 30), the distinctive set
# (privacy.distinct): names found by word frequency and shape without a glossary, and a shared
# run counted only when it holds an uncommon word or is a long passage. That last rule is why
# caught-with-glossary went from 112 to 109: three copied product names made of ordinary words
# (夜間自動對帳排程, 分期零利率即時試算, Đồng bộ tồn kho 2 chiều) now pass, as common words
# never leak; in exchange honest rewrites rejected went from 30 to 1. Then (the next session)
# ids' groups, spaced ids, phones with their country code, IPv4 networks, ranges of days,
# names respelled, e-mail users, the address and reference classes: 113, 108, 1, scan 714.
# A change may only improve the figures below.
BEFORE = {
    "scan_with_glossary": 714,
    "caught_with_glossary": 113,
    "caught_without_glossary": 108,
    "honest_rejected_with_glossary": 1,
}


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    return benchmark("privacy_corpus").measure(HERE)  # type: ignore[no-any-return]


def test_scan_and_verify_are_no_worse_than_before(figures: dict[str, Any]) -> None:
    print({k: figures[k] for k in figures if k.startswith(("scan", "verify"))})
    assert figures["scan_with_glossary"]["found"] >= BEFORE["scan_with_glossary"]
    assert figures["verify_with_glossary"]["caught"] >= BEFORE["caught_with_glossary"]
    assert figures["verify_without_glossary"]["caught"] >= BEFORE["caught_without_glossary"]
    honest = len(figures["verify_with_glossary"]["honest_rejected"])
    assert honest <= BEFORE["honest_rejected_with_glossary"]


def test_the_audit_finds_the_leak_forms_verify_finds() -> None:
    """Each disguised variant planted in the repository five ways (a Markdown line, a JSON
    string with escapes, UTF-16, gzip, a commit message) against a store holding its source
    log; the honest rewrites planted plain are the false alarms (benchmarks/audit_recall.py).
    Measured on 2026-12-03: 545/600, then 565/600 (plain 113/120, as verify with the
    glossary), no false alarm."""
    result = benchmark("audit_recall").measure(HERE)
    print({k: result[k] for k in ("found", "planted", "by_carrier", "false_alarms")})
    assert result["planted"] == 600 and result["found"] >= 565
    assert result["false_alarms"] == []
