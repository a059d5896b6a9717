"""The review queue: accept, edit or reject each draft; accepted drafts become case files.

The queue keeps every decision, so the counts (accepted / edited / rejected, and why, and by
whom) are a record of how much of the synthesis needed fixing. ``caseforge review`` and the
web app's review screen both decide through :func:`decide`: a locked read-modify-write of
``synth/queue.jsonl`` per decision, so neither overwrites the other's.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict

from filelock import FileLock, Timeout
from pydantic import ValidationError

from caseforge.case.load import case_files, load_suite
from caseforge.case.model import Case
from caseforge.case.retire import retired_ids
from caseforge.errors import CaseforgeError
from caseforge.files import write_yaml
from caseforge.paths import ensure_state_dir, suite_paths
from caseforge.synth.writer import QUEUE_FILE, Draft, load_queue, save_queue, synth_dir

LOCK_WAIT_S = 10.0


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
    try:
        Case.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "case"
        raise CaseforgeError(f"{where}: {first['msg']}") from None
    return data


def accept(
    suite_dir: Path,
    draft: Draft,
    reviewer: str,
    edited_text: str | None = None,
    edited_expect: dict[str, object] | None = None,
) -> Path:
    """Write the draft as a case file. ``edited_text`` replaces the ticket and
    ``edited_expect`` the expectations; either, when it changes them, makes it "edited".
    An edit that would make an invalid case is refused before anything is written."""
    today = dt.date.today()
    text = edited_text.strip() if edited_text is not None else draft.text
    expect = edited_expect if edited_expect is not None else draft.expect
    if not text:
        raise CaseforgeError(f"{draft.text_field}: the ticket is empty")
    changed = text != draft.text or expect != draft.expect
    candidate = Draft(**{**draft.__dict__, "text": text, "expect": expect})
    candidate.input = {**draft.input, draft.text_field: text}
    candidate.status = "edited" if changed else "accepted"
    case_id = next_case_id(suite_dir, draft.tuple["scenario"], taken_ids(suite_dir))
    data = case_from_draft(candidate, case_id, reviewer, today)
    draft.text, draft.expect, draft.input = candidate.text, candidate.expect, candidate.input
    draft.status = candidate.status
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
    by_reviewer: dict[str, dict[str, int]]  # reviewer -> accepted / edited / rejected


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
        "by_reviewer": _by_reviewer(drafts),
    }


def _by_reviewer(drafts: list[Draft]) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for draft in drafts:
        if draft.status == "pending":
            continue
        counts = found.setdefault(
            draft.reviewed_by or "(unnamed)", {"accepted": 0, "edited": 0, "rejected": 0}
        )
        counts[draft.status] += 1
    return dict(sorted(found.items()))


@contextmanager
def queue_lock(suite_dir: Path) -> Iterator[None]:
    """Hold the suite's review-queue lock (a file under ``.caseforge/locks/``, so it never
    shows in git); another holder makes this wait, then fail with a one-line error."""
    queue = (synth_dir(suite_dir) / QUEUE_FILE).resolve()
    folder = suite_paths(suite_dir).state
    ensure_state_dir(folder)
    (folder / "locks").mkdir(exist_ok=True)
    name = hashlib.sha256(str(queue).encode("utf-8")).hexdigest()[:16]
    lock = FileLock(folder / "locks" / f"review-{name}.lock", timeout=LOCK_WAIT_S)
    try:
        with lock:
            yield
    except Timeout:
        raise CaseforgeError(
            f"{queue}: another review is writing the queue (waited {LOCK_WAIT_S:.0f} s); try again"
        ) from None


@dataclass
class Decision:
    """One reviewer's decision on one draft."""

    action: Literal["accept", "edit", "reject"]
    reason: str = ""
    text: str | None = None  # edit: the ticket as the reviewer left it
    expect: dict[str, object] | None = None  # edit: the expectations as they left them


@dataclass
class Decided:
    draft: Draft
    path: Path | None  # the case file written, for accept and edit
    counts: ReviewCounts


def decide(suite_dir: Path, draft_id: str, decision: Decision, reviewer: str) -> Decided:
    """Apply one decision: read the queue, change one draft, write the case file and the
    queue, all under the queue lock. A draft someone else decided meanwhile is refused."""
    with queue_lock(suite_dir):
        drafts = load_queue(suite_dir)
        draft = next((d for d in drafts if d.draft_id == draft_id), None)
        if draft is None:
            raise CaseforgeError(f"{synth_dir(suite_dir) / QUEUE_FILE}: no draft {draft_id!r}")
        if draft.status != "pending":
            who = f" by {draft.reviewed_by}" if draft.reviewed_by else ""
            raise CaseforgeError(f"draft {draft_id} was already {draft.status}{who}")
        path: Path | None = None
        if decision.action == "reject":
            reject(draft, decision.reason, reviewer)
        else:
            edit = decision.action == "edit"
            path = accept(
                suite_dir,
                draft,
                reviewer,
                decision.text if edit else None,
                decision.expect if edit else None,
            )
        try:
            save_queue(suite_dir, drafts)
        except BaseException:
            if path is not None:
                path.unlink(missing_ok=True)  # no case file for a decision the queue lacks
            raise
        return Decided(draft, path, review_counts(drafts))
