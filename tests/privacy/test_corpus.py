"""Three fictional four-language corpora, each written by another author without sight of
the scanner (tests/privacy/corpus, corpus_b, corpus_c; corpus_c was measured before anything
was tuned on it, see the README): scan recall per class, false alarms on clean tickets, the
overlap verdict on every disguised and honest variant, and the redaction-mark families.

Each test prints what it measured (``pytest -s`` shows it) and pins it."""

from __future__ import annotations

import collections
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from caseforge.privacy.identifiers import Glossary, IdentifierDetector
from caseforge.privacy.overlap import Original
from caseforge.privacy.policy import redaction_marks

HERE = Path(__file__).parent
_YAML = YAML(typ="safe", pure=True)
NAME_CLASSES = {"person", "organization", "project", "feature"}


@dataclass(frozen=True)
class Corpus:
    name: str
    sensitive: list[dict[str, Any]]
    clean: list[dict[str, Any]]
    variants: list[dict[str, Any]]
    masks: dict[str, list[str]] | None

    @property
    def by_id(self) -> dict[str, dict[str, Any]]:
        return {t["id"]: t for t in self.sensitive}


def load(name: str) -> Corpus:
    folder = HERE / name

    def read(file: str) -> Any:
        path = folder / file
        return _YAML.load(path.read_text(encoding="utf-8")) if path.is_file() else None

    return Corpus(
        name, read("sensitive.yaml"), read("clean.yaml"), read("variants.yaml"), read("masks.yaml")
    )


CORPORA = {name: load(name) for name in ("corpus", "corpus_b", "corpus_c")}
# Measured (with the glossary): every planted identifier but one bare amount in a TSV cell of
# corpus_c ("412 800", one group of thousands, no currency: a count or an amount).
MISSED = {"corpus": 0, "corpus_b": 0, "corpus_c": 1}


@pytest.fixture(params=list(CORPORA))
def corpus(request: pytest.FixtureRequest) -> Corpus:
    return CORPORA[request.param]


def glossary_of(ticket: dict[str, Any]) -> Glossary:
    return Glossary.from_mapping(
        {k: [str(v) for v in vs] for k, vs in (ticket.get("glossary") or {}).items()}
    )


def planted(ticket: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(class, start, end) of every listed identifier, found in order."""
    text, position, out = ticket["text"], 0, []
    for cls, value in ticket["identifiers"]:
        start = text.find(str(value), position)
        assert start >= 0, (ticket["id"], value)
        out.append((cls, start, start + len(str(value))))
        position = start + len(str(value))
    return out


def recall(
    corpus: Corpus, with_glossary: bool
) -> tuple[collections.Counter[str], collections.Counter[str]]:
    found: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    for ticket in corpus.sensitive:
        detector = IdentifierDetector(glossary_of(ticket) if with_glossary else None)
        spans = detector.scan(ticket["text"], ticket["lang"])
        for cls, start, end in planted(ticket):
            total[cls] += 1
            covered = sum(
                min(s.end, end) - max(s.start, start)
                for s in spans
                if s.start < end and start < s.end
            )
            found[cls] += covered >= 0.8 * (end - start)
    return found, total


def test_scan_recall_per_class_with_the_glossary(corpus: Corpus) -> None:
    found, total = recall(corpus, with_glossary=True)
    for cls in sorted(total):
        print(f"{corpus.name} {cls:14s} {found[cls]}/{total[cls]}")
    print(f"{corpus.name} all {sum(found.values())}/{sum(total.values())}")
    assert len(total) == 21  # every class of the scanner is planted
    assert sum(total.values()) - sum(found.values()) == MISSED[corpus.name]
    assert sum(found.values()) / sum(total.values()) >= 0.98


def test_scan_recall_without_a_glossary_is_the_patterns_alone() -> None:
    found, total = recall(CORPORA["corpus"], with_glossary=False)
    patterns = {c: n for c, n in total.items() if c not in NAME_CLASSES}
    missed = {c: patterns[c] - found[c] for c in patterns if found[c] < patterns[c]}
    print(f"pattern classes {sum(found[c] for c in patterns)}/{sum(patterns.values())}, {missed}")
    # names need the glossary; every pattern class is found without one, but the channels
    # that are named group chats (listed under channel in the glossary)
    assert set(missed) <= {"channel"} and missed.get("channel", 0) <= 3


def test_no_false_alarm_on_clean_tickets(corpus: Corpus) -> None:
    detector = IdentifierDetector()
    alarms = [
        (t["id"], s.cls, s.text) for t in corpus.clean for s in detector.scan(t["text"], t["lang"])
    ]
    print(f"{corpus.name}: {len(alarms)} spans on {len(corpus.clean)} clean tickets: {alarms}")
    assert alarms == []


@pytest.mark.parametrize(
    "text",
    [
        "升級到 1.4.12.8 之後就好了",
        "前端用 socket.io 推播",
        "Q4-2026 的目標",
        "API 回 NOT_FOUND",
        "App Store 排名 #15",
        "đã có 3 triệu người dùng",
        "HTTP 502 之後重試",
        "12万次请求",
        "UTF-8 編碼",
    ],
)
def test_the_false_alarms_reported_before_are_gone(text: str) -> None:
    assert IdentifierDetector().scan(text) == []


def original_of(corpus: Corpus, source: str) -> Original:
    ticket = corpus.by_id[source]
    glossary = glossary_of(ticket)
    spans = IdentifierDetector(glossary).scan(ticket["text"])
    terms = [(s.cls, s.text) for s in spans] + [(c, v) for c, vs in glossary.items() for v in vs]
    return Original([("input.ticket", ticket["text"])], terms)


# What a disguise of each kind is reported as (the class in the finding).
EXPECTED = {
    "amount": {"number"},
    "date": {"date"},
    "copied_run": {"run"},
    "broken_run": {"run"},
    "name_romanised": {"romanised name"},
    "name_no_diacritics": NAME_CLASSES | {"name"},
    "name_simplified": NAME_CLASSES | {"name"},
    "name_zero_width": NAME_CLASSES | {"name", "handle"},
    "name_partial": {"name"},
    "glossary_term": NAME_CLASSES,
}


# Issue 24 decided that common words never leak, so that an honest rewrite in the same
# register passes: a shared run counts when it holds an uncommon word or is a long passage
# (privacy.distinct). These copies of ordinary wording now pass; they are listed so that any
# change to that is seen.
ORDINARY_COPIES = {
    "corpus": {"tw-01", "tw-02", "vi-01", "vi-02", "en-01", "en-02"},
    "corpus_b": {"tw-01", "tw-03", "cn-01", "cn-03", "vi-01", "en-01"},
    "corpus_c": {"tw-03", "cn-01", "cn-03", "vi-01", "vi-02", "en-01"},
}


def test_every_disguise_fails_verification_with_its_class(corpus: Corpus) -> None:
    originals = {s: original_of(corpus, s) for s in {v["source"] for v in corpus.variants}}
    missed, copies = [], set()
    for variant in corpus.variants:
        if variant["kind"] == "honest":
            continue
        classes = {f.cls for f in originals[variant["source"]].findings([("t", variant["text"])])}
        if classes & EXPECTED[variant["kind"]]:
            continue
        if variant["kind"] in ("copied_run", "broken_run"):
            if not classes:  # one holding an uncommon word may be caught by it alone
                copies.add(variant["source"])
        else:
            missed.append((variant["source"], variant["kind"], sorted(classes)))
    disguised = sum(v["kind"] != "honest" for v in corpus.variants)
    print(f"{corpus.name}: disguises caught {disguised - len(missed) - len(copies)}/{disguised}")
    assert missed == []
    assert copies == ORDINARY_COPIES[corpus.name]


def test_honest_variants_pass_and_the_false_reject_rate_is_reported(corpus: Corpus) -> None:
    honest = [v for v in corpus.variants if v["kind"] == "honest"]
    rejected = []
    for variant in honest:
        original = original_of(corpus, variant["source"])
        findings = original.findings([("t", variant["text"])])
        if findings:
            rejected.append((variant["source"], [f.cls for f in findings]))
    rate = len(rejected) / len(honest)
    print(f"{corpus.name}: false-reject rate {len(rejected)}/{len(honest)} = {rate:.1%}")
    assert len(honest) == 24 and rejected == []


@pytest.mark.parametrize("name", ["corpus", "corpus_b"])
def test_redaction_marks_every_family_and_no_near_miss(name: str) -> None:
    masks = CORPORA[name].masks
    assert masks is not None
    missed = [m for m in masks["masked"] if not redaction_marks(m)]
    flagged = [c for c in masks["clean"] if redaction_marks(c)]
    print(
        f"{name}: masked {len(masks['masked']) - len(missed)}/{len(masks['masked'])}, "
        f"near-misses flagged {len(flagged)}/{len(masks['clean'])}"
    )
    assert missed == [] and flagged == []


def test_spans_map_back_to_the_original_text_through_folds() -> None:
    text = "電話 ０９１２－３４５－６７８，身分證 Ａ１２３４５６７８９，聯絡 林\u200b佩萱"
    spans = IdentifierDetector(Glossary.from_mapping({"person": ["林佩萱"]})).scan(text)
    assert [(s.cls, s.text) for s in spans] == [
        ("phone", "０９１２－３４５－６７８"),
        ("national_id", "Ａ１２３４５６７８９"),
        ("person", "林\u200b佩萱"),
    ]
    for span in spans:
        assert text[span.start : span.end] == span.text
