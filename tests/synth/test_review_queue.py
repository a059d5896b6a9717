"""Deciding on drafts: one locked read-modify-write per decision, shared by the CLI and the
web app, so neither loses the other's decisions."""

from __future__ import annotations

import multiprocessing
import shutil
import threading
from pathlib import Path

import pytest

from caseforge.case.load import load_suite
from caseforge.errors import CaseforgeError
from caseforge.synth import review
from caseforge.synth.review import Decision, decide, queue_lock, review_counts
from caseforge.synth.writer import load_queue

SUPPORT = Path(__file__).resolve().parents[2] / "examples" / "support-refund"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "support-refund"
    shutil.copytree(SUPPORT, root, ignore=shutil.ignore_patterns(".caseforge", "__pycache__"))
    return root


def test_accept_edit_reject_write_cases_and_count_by_reviewer(suite: Path) -> None:
    before = {c.case.id for c in load_suite(suite).cases}
    drafts = load_queue(suite)
    first = decide(suite, drafts[0].draft_id, Decision("accept"), "ana")
    assert first.path is not None and first.path.is_file()
    new_expect = {**drafts[1].expect, "category": {"mode": "exact", "value": "billing"}}
    second = decide(
        suite, drafts[1].draft_id, Decision("edit", text="改过的工单", expect=new_expect), "bo"
    )
    third = decide(suite, drafts[2].draft_id, Decision("reject", reason="too vague"), "ana")
    assert third.path is None
    cases = {c.case.id: c.case for c in load_suite(suite).cases}
    assert set(cases) - before == {first.draft.case_id, second.draft.case_id}
    edited = cases[second.draft.case_id or ""]
    assert edited.input["ticket"] == "改过的工单"
    assert edited.expect["category"].value == "billing"  # type: ignore[union-attr]
    assert edited.provenance["edited"] is True and edited.provenance["reviewed_by"] == "bo"
    counts = third.counts
    assert (counts["accepted"], counts["edited"], counts["rejected"], counts["pending"]) == (
        1, 1, 1, 9,
    )  # fmt: skip
    assert counts["by_reviewer"] == {
        "ana": {"accepted": 1, "edited": 0, "rejected": 1},
        "bo": {"accepted": 0, "edited": 1, "rejected": 0},
    }
    assert review_counts(load_queue(suite)) == counts  # what was returned is what was kept


def test_a_draft_decided_elsewhere_is_refused(suite: Path) -> None:
    draft = load_queue(suite)[0]
    decide(suite, draft.draft_id, Decision("reject", reason="duplicate"), "ana")
    with pytest.raises(CaseforgeError, match=r"already rejected by ana"):
        decide(suite, draft.draft_id, Decision("accept"), "bo")
    with pytest.raises(CaseforgeError, match="no draft 'nope'"):
        decide(suite, "nope", Decision("accept"), "bo")


def test_an_edit_that_breaks_the_case_writes_nothing(suite: Path) -> None:
    queue_file = suite / "synth" / "queue.jsonl"
    before = queue_file.read_bytes()
    cases_before = sorted(p.name for p in (suite / "cases").iterdir())
    draft = load_queue(suite)[0]
    bad = {"category": {"mode": "exactly", "value": "refund"}}
    with pytest.raises(CaseforgeError, match=r"^expect\.category"):
        decide(suite, draft.draft_id, Decision("edit", text="x", expect=bad), "ana")
    with pytest.raises(CaseforgeError, match="the ticket is empty"):
        decide(suite, draft.draft_id, Decision("edit", text="   "), "ana")
    with pytest.raises(CaseforgeError, match="needs a reason"):
        decide(suite, draft.draft_id, Decision("reject", reason=" "), "ana")
    assert queue_file.read_bytes() == before
    assert sorted(p.name for p in (suite / "cases").iterdir()) == cases_before


def test_a_held_lock_makes_a_decision_wait_then_fail(
    suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(review, "LOCK_WAIT_S", 0.3)
    draft = load_queue(suite)[0]
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with queue_lock(suite):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        with pytest.raises(CaseforgeError, match="another review is writing the queue"):
            decide(suite, draft.draft_id, Decision("accept"), "ana")
    finally:
        release.set()
        holder.join()
    assert decide(suite, draft.draft_id, Decision("accept"), "ana").path is not None
    locks = list(suite.rglob("*.lock"))  # in .caseforge/ (git-ignored), never among the cases
    assert len(locks) == 1 and locks[0].parent.parent.name == ".caseforge"


def _decide_every_other(suite: str, start: int, reviewer: str) -> None:
    for draft in load_queue(Path(suite))[start::2]:
        decide(Path(suite), draft.draft_id, Decision("reject", reason="probe"), reviewer)


def test_two_processes_deciding_at_once_lose_nothing(suite: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_decide_every_other, args=(str(suite), i, f"r{i}")) for i in (0, 1)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    queue = load_queue(suite)
    assert all(d.status == "rejected" for d in queue)
    assert review_counts(queue)["by_reviewer"] == {
        "r0": {"accepted": 0, "edited": 0, "rejected": 6},
        "r1": {"accepted": 0, "edited": 0, "rejected": 6},
    }
