"""Verifying a re-synthesised variant, cell by cell, before it may enter the suite.

- structure: the remapped goal state has the same number of flags, the same
  multi-flagged item with the same kinds, and the same kinds overall;
- leaks: no original identifier survives — exactly, case- and separator-normalised, as a
  7+ character prefix of an original commit SHA — and the variant shares no word 8-gram
  (Latin script, Vietnamese) and no CJK character 8-gram with the original;
- redaction: no redaction marks (█, ■, [REDACTED], ***, <PERSON>-style tags), which would
  make the input unlike anything a person writes.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

FLAG = re.compile(r"^(\d+):(\w+)$")
REDACTION = re.compile(
    r"[█■▇▆]|\[(?:REDACTED|redacted|MASKED|removed)\]|\*{3,}|<(?:[A-Z_]{3,})>|＊{3,}"
)
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
SEPARATORS = re.compile(r"[\s\-_./:·,，。、|]+")
HEX = re.compile(r"[0-9a-f]{7,40}")


@dataclass
class Check:
    """One verification: its name, whether it passed, and what it found."""

    name: str
    passed: bool
    detail: str = ""
    findings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "detail": self.detail}


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def flag_structure(values: Iterable[str]) -> dict[int, list[str]]:
    """``{item number: sorted kinds}`` for flags written ``<n>:<kind>``."""
    by_item: dict[int, list[str]] = defaultdict(list)
    for value in values:
        match = FLAG.match(str(value))
        if match:
            by_item[int(match.group(1))].append(match.group(2))
    return {k: sorted(v) for k, v in by_item.items()}


def check_structure(original: list[str], variant: list[str], items: int | None = None) -> Check:
    """Same number of flags, same multi-flagged item shape, same kinds; items in range."""
    before, after = flag_structure(original), flag_structure(variant)
    problems = []
    if len(original) != len(variant):
        problems.append(f"{len(original)} flags became {len(variant)}")
    multi_before = sorted(tuple(k) for k in before.values() if len(k) > 1)
    multi_after = sorted(tuple(k) for k in after.values() if len(k) > 1)
    if multi_before != multi_after:
        problems.append(
            f"multi-flagged items {multi_before or 'none'} became {multi_after or 'none'}"
        )
    kinds_before = Counter(k for ks in before.values() for k in ks)
    kinds_after = Counter(k for ks in after.values() for k in ks)
    if kinds_before != kinds_after:
        problems.append(f"kinds {dict(kinds_before)} became {dict(kinds_after)}")
    if items is not None:
        outside = sorted(n for n in after if not 1 <= n <= items)
        if outside:
            problems.append(f"flags on items {outside} that the {items}-item variant lacks")
    if problems:
        return Check("structure", False, "; ".join(problems))
    return Check(
        "structure",
        True,
        f"{len(variant)} flags, multi-flagged {multi_after or 'none'}, kinds {dict(kinds_after)}",
    )


def _word_grams(text: str, n: int = 8) -> set[tuple[str, ...]]:
    words = re.findall(r"[^\W\d_]+|\d+", normalise(CJK.sub(" ", text)))
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _cjk_grams(text: str, n: int = 8) -> set[str]:
    grams: set[str] = set()
    for run in re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+", normalise(text)):
        grams.update(run[i : i + n] for i in range(len(run) - n + 1))
    return grams


def check_leaks(
    original_text: str, identifiers: Iterable[str], variant_text: str, everything_else: str = ""
) -> Check:
    """No original identifier or long shared n-gram in the variant.

    Identifiers are searched in ``variant_text`` and ``everything_else`` (the rest of the
    variant: other input fields, tags, expectations); n-grams only in the rewritten text.
    """
    variant = normalise(variant_text + "\n" + everything_else)
    squashed = SEPARATORS.sub("", variant)
    findings = []
    for ident in sorted({i for i in identifiers if i.strip()}):
        norm = normalise(ident)
        if norm in variant:
            findings.append(f"identifier {ident!r} appears as is")
            continue
        bare = SEPARATORS.sub("", norm)
        if len(bare) >= 3 and bare in squashed:
            findings.append(f"identifier {ident!r} appears with other separators")
            continue
        if HEX.fullmatch(norm):
            for start in range(0, len(norm) - 6):
                if norm[start : start + 7] in variant:
                    findings.append(f"7+ characters of commit {ident!r} appear")
                    break
    shared_words = _word_grams(original_text) & _word_grams(variant_text)
    if shared_words:
        sample = " ".join(sorted(shared_words)[0])
        findings.append(f"{len(shared_words)} word 8-gram(s) copied, e.g. {sample!r}")
    shared_cjk = _cjk_grams(original_text) & _cjk_grams(variant_text)
    if shared_cjk:
        findings.append(f"{len(shared_cjk)} CJK 8-gram(s) copied, e.g. {sorted(shared_cjk)[0]!r}")
    if findings:
        return Check("leaks", False, "; ".join(findings[:5]), findings)
    return Check("leaks", True, "no original identifier, word 8-gram or CJK 8-gram survives")


def check_redaction(variant_text: str) -> Check:
    marks = sorted(set(REDACTION.findall(variant_text)))
    if marks:
        return Check("redaction", False, f"redaction marks {marks}: write natural text instead")
    return Check("redaction", True, "no redaction marks")
