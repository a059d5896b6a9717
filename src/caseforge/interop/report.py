"""The import report: per source item, what it became or why it was not imported.

Every importer fills one :class:`ImportReport`: an :class:`Item` per item of the source (a
sample, a row, a task), each with the case it became (or the reason it became none) and a
note for everything of the item that the case does not hold as the source meant it. The
report is printed and written as ``SUITE/IMPORT.md``; nothing an importer reads is dropped
without a line here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

from caseforge.errors import DatasetError

REPORT_FILE = "IMPORT.md"


class ItemStatus(StrEnum):
    """What became of one source item."""

    NEW = "new"  # a new case file
    UPDATED = "updated"  # a case this importer made before, rewritten
    UNCHANGED = "unchanged"  # a case this importer made before, already as it would write it
    SKIPPED = "skipped"  # no case: ``reason`` says why
    INVALID = "invalid"  # a case was written, but it does not validate: ``reason`` says why


@dataclass
class Item:
    """One item of the source: where it is, its own id, the case it became, and notes.

    ``notes`` are what the case does not hold as the source meant it (a field kept only in
    ``provenance``, a scorer whose semantics differ); ``mapped`` says how each part of it
    was mapped (``target: a list of 2 -> must_include, match: any``)."""

    where: str
    original_id: str | None = None
    case_id: str | None = None
    path: str | None = None
    status: ItemStatus | None = None
    reason: str = ""
    mapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def map(self, text: str) -> None:
        """Record how part of the item was mapped."""
        self.mapped.append(text)

    def note(self, text: str) -> None:
        """Record something of the item the case does not hold as the source meant it."""
        self.notes.append(text)

    def skip(self, reason: str) -> None:
        """The item becomes no case, for ``reason``."""
        self.status = ItemStatus.SKIPPED
        self.reason = reason

    @property
    def label(self) -> str:
        """``line 3 (id 7)``: how the report names the item."""
        return (
            f"{self.where} (id {self.original_id})" if self.original_id is not None else self.where
        )


@dataclass
class ImportReport:
    """What one import did: the source, the suite, an :class:`Item` per source item, notes
    that hold for every item, and the cases this importer made before that the source no
    longer has (left as they are)."""

    format: str
    source: str
    suite: str
    dry_run: bool = False
    items: list[Item] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    validation: str = ""

    def item(self, where: str, original_id: object = None) -> Item:
        """A new item of the source, in source order."""
        entry = Item(where, None if original_id is None else str(original_id))
        self.items.append(entry)
        return entry

    def counts(self) -> Counter[str]:
        """How many items ended in each status."""
        return Counter(str(i.status) for i in self.items if i.status is not None)

    def summary(self) -> str:
        """``4 items: 3 new, 1 skipped``."""
        counts = self.counts()
        parts = [f"{counts[s]} {s}" for s in ItemStatus if counts[s]]
        noted = sum(1 for i in self.items if i.notes)
        tail = f"; {noted} with notes" if noted else ""
        return f"{len(self.items)} items: {', '.join(parts) or 'none'}{tail}"

    def error(self) -> DatasetError | None:
        """The import's error when a case it wrote does not validate (exit 1), else None."""
        invalid = [i for i in self.items if i.status is ItemStatus.INVALID]
        if not invalid:
            return None
        return DatasetError(
            f"{len(invalid)} imported case(s) do not validate (see {self.suite}/{REPORT_FILE}); "
            f"the first: {invalid[0].path}: {invalid[0].reason}"
        )

    def lines(self) -> list[str]:
        """The report as plain lines: the header, then each item with what it became."""
        verb = "would import" if self.dry_run else "imported"
        out = [f"{self.format} {self.source} -> {self.suite} ({verb}): {self.summary()}"]
        out += [f"note: {note}" for note in self.notes]
        for item in self.items:
            if item.status is ItemStatus.SKIPPED:
                out.append(f"  {item.label}: skipped: {item.reason}")
            else:
                became = item.path or item.case_id or "?"
                out.append(f"  {item.label} -> {became} ({item.status})")
                if item.status is ItemStatus.INVALID:
                    out.append(f"    does not validate: {item.reason}")
            out += [f"    {text}" for text in item.mapped]
            out += [f"    not held: {text}" for text in item.notes]
        for orphan in self.orphans:
            out.append(
                f"  {orphan}: made by an earlier import of this source, no longer in it: "
                "left as it is (`caseforge retire` it if it should go)"
            )
        if self.validation:
            out.append(self.validation)
        return out

    def markdown(self) -> str:
        """``SUITE/IMPORT.md``: the same report, for people reading the suite."""
        out = [
            f"# Import report: {self.format}",
            "",
            f"- source: `{self.source}`",
            f"- suite: `{self.suite}`",
            f"- {self.summary()}",
        ]
        if self.validation:
            out.append(f"- {self.validation}")
        if self.notes:
            out += ["", "## For every item", ""]
            out += [f"- {note}" for note in self.notes]
        out += ["", "## Items", ""]
        for item in self.items:
            if item.status is ItemStatus.SKIPPED:
                out.append(f"- {item.label}: **skipped**: {item.reason}")
            else:
                became = f"`{item.path or item.case_id}`"
                out.append(f"- {item.label} → {became} ({item.status})")
                if item.status is ItemStatus.INVALID:
                    out.append(f"    - **does not validate**: {item.reason}")
            out += [f"    - {text}" for text in item.mapped]
            out += [f"    - not held: {text}" for text in item.notes]
        if self.orphans:
            out += ["", "## Made by an earlier import, no longer in the source", ""]
            out += [f"- `{orphan}`: left as it is" for orphan in self.orphans]
        return "\n".join(out) + "\n"
