"""corpus_e: the second blind corpus of issue 24, written after the implementation
(tests/privacy/corpus_e/README.md). Held to its spec, and what scan, verify and the audit do
on it is pinned as a ratchet: the figures may only get better."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from tests.privacy.corpora import benchmark, load

HERE = Path(__file__).parent / "corpus_e"


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
    assert sum(classes.values()) >= 320 and len(classes) >= 15
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


# Measured on 2026-12-03 after the general fixes its first reading showed (see the README).
# The audit's 490 is below its first reading's 520 on purpose: it now confirms every name it
# finds with verify's own reading of the line, which drops 30 "finds" that were scanner false
# positives (a WhatsApp header's "Chat", a meeting's "Producer" read as messaging ids) and
# takes its false alarms from 11 to 5. The next session's fixes, made after reading its
# misses (so these figures are no longer blind; corpus_f is): 110, 106, 1, 0, audit 545 and
# no false alarm, scan 1137; then 109, 105 and 540 once corpus_f's fixes stopped "Fri" and a
# "hasn't" counting as uncommon words (one disguise each was caught only by them).
AFTER = {
    "scan_with_glossary": 1137,
    "caught_with_glossary": 109,
    "caught_without_glossary": 105,
    "honest_rejected_with_glossary": 1,
    "honest_rejected_without_glossary": 0,
    "audit_found": 540,
    "audit_false_alarms": 0,
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
