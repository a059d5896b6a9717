"""corpus_f: the third blind corpus of issue 24, written after the fixes corpus_e showed
(tests/privacy/corpus_f/README.md). Held to its spec, and what scan, verify and the audit do
on it is pinned as a ratchet: the figures may only get better."""

from __future__ import annotations

from pathlib import Path

from tests.privacy.corpora import check_audit_no_worse, check_blind_corpus, check_no_worse

HERE = Path(__file__).parent / "corpus_f"


def test_the_corpus_holds_what_its_brief_asks() -> None:
    check_blind_corpus(HERE, min_items=300)


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


def test_scan_and_verify_are_no_worse_than_measured() -> None:
    check_no_worse(HERE, AFTER)


def test_the_audit_is_no_worse_than_measured() -> None:
    check_audit_no_worse(HERE, AFTER)
