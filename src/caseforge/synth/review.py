"""The review queue: accept, edit or reject each draft; accepted drafts become case files.

The queue keeps every decision, so the counts (accepted / edited / rejected, and why) are a
record of how much of the synthesis needed fixing.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import TypedDict

from caseforge.case.load import case_files, load_suite
from caseforge.case.model import Case
from caseforge.case.retire import retired_ids
from caseforge.errors import CaseforgeError
from caseforge.files import write_yaml
from caseforge.synth.writer import Draft


def next_case_id(suite_dir: Path, scenario: str, taken: set[str]) -> str:
    """``syn-<scenario>-<nnn>``: the first number no case, retired case or draft has used."""
    stem = "syn-" + scenario.replace("_", "-")
    number = 1
    while f"{stem}-{number:03d}" in taken:
        number += 1
    return f"{stem}-{number:03d}"


def taken_ids(suite_dir: Path) -> set[str]:
    suite = load_suite(suite_dir)
    return {c.case.id for c in suite.cases} | retired_ids(suite_dir)


def case_from_draft(draft: Draft, case_id: str, reviewer: str, today: dt.date) -> dict[str, object]:
    """The case file written for an accepted draft (validated as a Case)."""
    data: dict[str, object] = {
        "id": case_id,
        "input": draft.input,
        "expect": draft.expect,
        "tags": [draft.tuple["scenario"], draft.tuple["persona"], draft.tuple["shape"]],
        "source": "synthetic",
        "added": today.isoformat(),
        "provenance": {
            "tuple": draft.tuple,
            "tuple_id": draft.tuple_id,
            "synth_run": draft.synth_run,
            "written_by": draft.model,
            "prompt_hash": draft.prompt_hash,
            "reviewed_by": reviewer,
            "reviewed_on": today.isoformat(),
            "edited": draft.status == "edited",
        },
    }
    Case.model_validate(data)
    return data


def accept(suite_dir: Path, draft: Draft, reviewer: str, edited_text: str | None = None) -> Path:
    """Write the draft as a case file; ``edited_text`` replaces the ticket when given."""
    today = dt.date.today()
    if edited_text is not None and edited_text.strip() != draft.text:
        draft.text = edited_text.strip()
        draft.input = {**draft.input, draft.text_field: draft.text}
        draft.status = "edited"
    else:
        draft.status = "accepted"
    case_id = next_case_id(suite_dir, draft.tuple["scenario"], taken_ids(suite_dir))
    data = case_from_draft(draft, case_id, reviewer, today)
    path = suite_dir / "cases" / f"{case_id}.yaml"
    if path.exists() or any(p.stem == case_id for p in case_files(suite_dir)):
        raise CaseforgeError(f"{path}: a case file with this id exists")
    write_yaml(path, data)
    draft.case_id = case_id
    draft.reviewed_by = reviewer
    draft.reviewed_on = today.isoformat()
    return path


class ReviewCounts(TypedDict):
    """What :func:`review_counts` returns."""

    drafts: int
    accepted: int
    edited: int
    rejected: int
    pending: int
    needed_fixing: float | None  # the share of reviewed drafts edited or rejected
    rejection_reasons: dict[str, int]


def reject(draft: Draft, reason: str, reviewer: str) -> None:
    if not reason.strip():
        raise CaseforgeError("a rejection needs a reason")
    draft.status = "rejected"
    draft.reason = reason.strip()
    draft.reviewed_by = reviewer
    draft.reviewed_on = dt.date.today().isoformat()


def review_counts(drafts: list[Draft]) -> ReviewCounts:
    """Accepted / edited / rejected (with reasons) / pending."""
    statuses = Counter(d.status for d in drafts)
    reasons = Counter(d.reason for d in drafts if d.status == "rejected")
    reviewed = statuses["accepted"] + statuses["edited"] + statuses["rejected"]
    return {
        "drafts": len(drafts),
        "accepted": statuses["accepted"],
        "edited": statuses["edited"],
        "rejected": statuses["rejected"],
        "pending": statuses["pending"],
        "needed_fixing": (statuses["edited"] + statuses["rejected"]) / reviewed
        if reviewed
        else None,
        "rejection_reasons": dict(reasons.most_common()),
    }
