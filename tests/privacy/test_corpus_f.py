"""corpus_f: the third blind corpus of issue 24, written after the fixes corpus_e showed
(tests/privacy/corpus_f/README.md). Held to its spec, and what scan, verify and the audit do
on it is pinned as a ratchet: the figures may only get better."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from tests.privacy.corpora import benchmark, load

HERE = Path(__file__).parent / "corpus_f"


def test_the_corpus_holds_what_its_brief_asks() -> None:
    logs, clean, variants = (
        load(HERE, "sensitive.yaml"),
        load(HERE, "clean.yaml"),
        load(HERE, "variants.yaml"),
    )
    assert collections.Counter(log["lang"] for log in logs) == {
        "zh-TW": 10,
        "zh-CN": 10,
        "vi": 10,
        "en": 10,
    }
    classes = collections.Counter(cls for log in logs for cls, _ in log["identifiers"])
    assert sum(classes.values()) >= 300 and len(classes) >= 15
    for log in logs:
        for cls, value in log["identifiers"]:
            assert str(value) in log["text"], (log["id"], cls, value)
    by_id = {log["id"]: log for log in logs}
    kinds = collections.Counter(v["kind"] for v in variants)
    assert kinds["honest"] == 40 and sum(kinds.values()) == 160
    for variant in variants:
        if variant["kind"] != "honest":
            assert variant["disguised"] in variant["text"], variant["source"]
            assert variant["of"] in by_id[variant["source"]]["text"], variant["source"]
    assert len(clean) == 8 and all(log["identifiers"] == [] for log in clean)


# Measured on 2026-12-03, blind (before any change for it): scan 738/930, verify 111 and 109
# of 120 with and without the glossary, honest rewrites rejected 22/40 both ways, audit
# 532/600 with 20 honest flagged. Then general fixes its first reading showed (a range's
# first date is no day of it, a bare date read as the text's language writes it, calendar
# abbreviations, clitics and contractions are no names, an account's or phone's last digits):
# the figures below. Disguises "lost" were caught only by those accidents.
AFTER = {
    "scan_with_glossary": 738,
    "caught_with_glossary": 110,
    "caught_without_glossary": 104,
    "honest_rejected_with_glossary": 17,
    "honest_rejected_without_glossary": 17,
    "audit_found": 527,
    "audit_false_alarms": 16,
}


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    return benchmark("privacy_corpus").measure(HERE)  # type: ignore[no-any-return]


def test_scan_and_verify_are_no_worse_than_measured(figures: dict[str, Any]) -> None:
    assert figures["scan_with_glossary"]["found"] >= AFTER["scan_with_glossary"]
    assert figures["verify_with_glossary"]["caught"] >= AFTER["caught_with_glossary"]
    assert figures["verify_without_glossary"]["caught"] >= AFTER["caught_without_glossary"]
    with_glossary = len(figures["verify_with_glossary"]["honest_rejected"])
    without = len(figures["verify_without_glossary"]["honest_rejected"])
    assert with_glossary <= AFTER["honest_rejected_with_glossary"]
    assert without <= AFTER["honest_rejected_without_glossary"]


def test_the_audit_is_no_worse_than_measured() -> None:
    result = benchmark("audit_recall").measure(HERE)
    assert result["found"] >= AFTER["audit_found"]
    assert len(result["false_alarms"]) <= AFTER["audit_false_alarms"]
