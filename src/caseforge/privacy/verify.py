"""Verifying a re-synthesised variant, or any rewrite of a case, against its original, field
by field, before it may enter the suite:

- overlap: no field of the variant shares a distinctive unit with any field of the original
  (``overlap``: runs of text, numbers, dates, names and identifiers, in every fold) — safety
  that does not depend on what a scanner found;
- redaction: no field carries a redaction mark (``policy``), which would make the input
  unlike anything a person writes.

These hold whatever the goal state (``caseforge verify``). A re-synthesised variant is also
held to its structure contract: ``check_structure`` in ``synth/contract.py``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from caseforge.privacy.overlap import Original, Settings, fields_of
from caseforge.privacy.policy import redaction_marks

if TYPE_CHECKING:
    from caseforge.privacy.identifiers import Glossary, Span

# Case keys that say nothing about the ticket: compared neither way.
META_KEYS = ("id", "split", "added", "source", "clock", "seed")
# Provenance caseforge writes itself; every other provenance value is compared.
GENERATED_PROVENANCE = (
    "synth_run",
    "method",
    "sent",
    "model",
    "identifier_classes_replaced",
    "verification",
    "reproduction",
    "reviewed_on",
    "fictional_original",
)


@dataclass
class Verification:
    """One verification: its name, whether it passed, and what it found."""

    name: str
    passed: bool
    detail: str = ""
    findings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, bool | str]:
        return {"passed": self.passed, "detail": self.detail}


def content_fields(data: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    """The leaves of a case that carry content: everything but its id, dates, split and the
    provenance caseforge writes itself."""
    kept = {k: v for k, v in data.items() if k not in META_KEYS}
    provenance = kept.get("provenance")
    if isinstance(provenance, dict):
        kept["provenance"] = {k: v for k, v in provenance.items() if k not in GENERATED_PROVENANCE}
    return fields_of(kept)


@dataclass
class KnownOriginal:
    """An original case as verification sees it: the overlap check built from every field,
    and what the scanner and the glossary found in it, by class."""

    original: Original
    originals: dict[str, list[str]]
    spans: list[tuple[str, Span]]
    fields: list[tuple[str, str]]
    terms: list[tuple[str, str]]


def know_original(
    data: Mapping[str, object],
    glossary: Glossary | None = None,
    fixtures: Iterable[str] = (),
    safe: Iterable[str] = (),
    settings: Settings | None = None,
) -> KnownOriginal:
    """Everything distinctive about the original case ``data`` (a case as JSON), its recorded
    ``fixtures`` (texts) included; ``safe`` texts are already public (other committed cases)."""
    from caseforge.privacy.identifiers import IdentifierDetector

    fields = list(content_fields(data))
    fields += [(f"fixtures[{i}]", text) for i, text in enumerate(fixtures)]
    detector = IdentifierDetector(glossary)
    spans = [(path, span) for path, text in fields for span in detector.scan(text)]
    originals: dict[str, list[str]] = {}
    for _, span in spans:
        bucket = originals.setdefault(span.cls, [])
        if span.text not in bucket:
            bucket.append(span.text)
    for cls, values in glossary.items() if glossary else []:
        bucket = originals.setdefault(cls, [])
        bucket.extend(v for v in values if v not in bucket)
    terms = [(cls, v) for cls, values in originals.items() for v in values]
    today = case_day(data.get("clock"))
    original = Original(fields, terms, safe, settings, today)
    return KnownOriginal(original, originals, spans, fields, terms)


def case_day(clock: object) -> dt.date | None:
    """The calendar day of a case's ``clock`` (what its relative dates are relative to)."""
    if isinstance(clock, dt.datetime):
        return clock.date()
    if isinstance(clock, dt.date):
        return clock
    if isinstance(clock, str):
        try:
            return dt.datetime.fromisoformat(clock).date()
        except ValueError:
            return None
    return None


def verify_variant(original: Original, variant: Mapping[str, object]) -> list[Verification]:
    """The checks every variant passes, whatever its goal state: overlap and redaction."""
    fields = list(content_fields(variant))
    return [check_overlap(original, fields), check_redaction(fields)]


def check_overlap(original: Original, variant_fields: Iterable[tuple[str, str]]) -> Verification:
    """The variant shares nothing distinctive with the original (field and class named, the
    shared text never shown)."""
    findings = [f.message() for f in original.findings(variant_fields)]
    if findings:
        more = f" (and {len(findings) - 5} more)" if len(findings) > 5 else ""
        return Verification("overlap", False, "; ".join(findings[:5]) + more, findings)
    settings = original.settings
    return Verification(
        "overlap",
        True,
        f"no shared run ({settings.cjk_run} Han characters / {settings.word_run} words), "
        "number, date, name or identifier in any field",
    )


def check_redaction(fields: Iterable[tuple[str, str]]) -> Verification:
    """No redaction mark in any field."""
    found = []
    for path, text in fields:
        families = sorted({m.family for m in redaction_marks(text)})
        if families:
            found.append(f"{path}: {', '.join(families)}")
    if found:
        return Verification(
            "redaction",
            False,
            f"redaction marks in {'; '.join(found[:5])}: write natural text instead",
            found,
        )
    return Verification("redaction", True, "no redaction marks")
