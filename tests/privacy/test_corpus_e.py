"""corpus_e: the second blind corpus of issue 24, written after the implementation
(tests/privacy/corpus_e/README.md). Held to its spec, and what scan, verify and the audit do
on it is pinned as a ratchet: the figures may only get better."""

from __future__ import annotations

from pathlib import Path

from tests.privacy.corpora import check_audit_no_worse, check_blind_corpus, check_no_worse

HERE = Path(__file__).parent / "corpus_e"


def test_the_corpus_holds_what_its_brief_asks() -> None:
    check_blind_corpus(HERE, min_items=320)


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


def test_scan_and_verify_are_no_worse_than_measured() -> None:
    check_no_worse(HERE, AFTER)


def test_the_audit_is_no_worse_than_measured() -> None:
    check_audit_no_worse(HERE, AFTER)
