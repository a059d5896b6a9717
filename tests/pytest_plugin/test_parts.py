"""The plugin's parts, in this process: the pass rules, the failure message, and how the
xdist workers share the items out."""

from __future__ import annotations

import pytest

from caseforge.pytest_plugin.verdict import (
    CaseKey,
    Outcome,
    Trial,
    decide,
    failure_text,
    skip_text,
)
from caseforge.pytest_plugin.workers import ShardScheduling, case_of, shard_of, share
from caseforge.results import NO_JUDGE_REASON, CheckResult, CheckStatus, TrialRecord, TrialStatus

P, F, E, U = TrialStatus.PASS, TrialStatus.FAIL, TrialStatus.ERROR, TrialStatus.INCOMPLETE


def trials(*statuses: TrialStatus) -> list[Trial]:
    return [Trial(TrialRecord("c", n, s)) for n, s in enumerate(statuses, 1)]


@pytest.mark.parametrize(
    ("statuses", "rule", "outcome"),
    [
        ((P, P, P), "all", Outcome.PASSED),
        ((P, P, F), "all", Outcome.FAILED),
        ((P, P, U), "all", Outcome.SKIPPED),  # the judge could still fail it
        ((P, E, U), "all", Outcome.FAILED),  # whatever the judge says
        ((P, P, F), "majority", Outcome.PASSED),
        ((P, F, F), "majority", Outcome.FAILED),
        ((P, F, U), "majority", Outcome.SKIPPED),  # the unjudged trial decides
        ((P, P, F, F), "majority", Outcome.FAILED),  # a tie is no majority
        ((F, F, P), "any", Outcome.PASSED),
        ((F, E, F), "any", Outcome.FAILED),
        ((F, F, U), "any", Outcome.SKIPPED),
        ((P, P), "all", Outcome.FAILED),  # a third trial never ran (the run stopped)
    ],
)
def test_the_pass_rules(statuses: tuple[TrialStatus, ...], rule: str, outcome: Outcome) -> None:
    planned = 4 if len(statuses) == 4 else 3
    assert decide(trials(*statuses), planned, rule) is outcome


def test_the_failure_shows_each_failing_trial_once_per_way_it_failed() -> None:
    failed = CheckResult("category", "exact", CheckStatus.FAIL, "refund", "other", "expected x")
    fine = CheckResult("amount", "number", CheckStatus.PASS)
    unjudged = CheckResult("facts", "judge", CheckStatus.NOT_JUDGED, reason=NO_JUDGE_REASON)
    found = [
        Trial(TrialRecord("c", 1, F, [failed, fine]), "the same reply"),
        Trial(TrialRecord("c", 2, P, [fine])),
        Trial(TrialRecord("c", 3, F, [failed, fine]), "the same reply"),
        Trial(TrialRecord("c", 4, E, error="Traceback\n  line\nRuntimeError: boom")),
        Trial(TrialRecord("c", 5, U, [fine, unjudged]), "x" * 500),
    ]
    text = failure_text(CaseKey("v1", "c"), found, 5, "all", "caseforge show RUN")
    assert text.splitlines()[0] == (
        "c [v1]: 1 of 5 trials passed; a case passes when every trial passes (--caseforge-pass all)"
    )
    assert "trials 1, 3: fail\n  [fail] category (exact) — expected x\n" in text
    assert "  (1 other check passed or skipped)\n  reply:\n    the same reply" in text
    assert "trial 4: error\n  error:\n    Traceback\n      line\n    RuntimeError: boom" in text
    assert "[not_judged] facts (judge) — not judged: no model configured" in text
    assert "x" * 299 + "…" in text and "x" * 300 not in text  # the reply's excerpt
    assert text.splitlines()[-1] == "the whole case-trial: caseforge show RUN c --trial 1"
    assert skip_text(found).startswith("not judged: no model configured (facts)")


def test_a_stopped_run_names_the_trials_that_never_ran() -> None:
    text = failure_text(CaseKey(None, "c"), trials(P), 3, "all", None, "the run was stopped")
    assert "2 trial(s) did not run: the run was stopped" in text


def test_the_workers_share_cases_whole_and_the_other_tests_in_turn() -> None:
    ids = [
        "tests/test_a.py::test_one",
        "s/caseforge.yaml::v1::test[c1]",
        "s/caseforge.yaml::v1::test[c2]",
        "s/caseforge.yaml::v1::test[c3]",
        "s/caseforge.yaml::v2::test[c1]",  # with c1's other configuration
        "tests/test_a.py::test_two[x]",
    ]
    assert [case_of(i) for i in ids] == [None, "c1", "c2", "c3", "c1", None]
    owners, shards = share(ids, 2)
    assert owners == [0, 0, 1, 0, 0, 1]
    assert shards == 2
    assert shard_of(ids, 2, 0).cases == {"c1", "c3"}
    assert shard_of(ids, 2, 1).cases == {"c2"}
    assert (shard_of(ids, 2, 1).index, shard_of(ids, 2, 1).count) == (2, 2)
    assert share(ids, 8)[1] == 3  # a shard per worker that has a case: 3 of 8


class Node:
    """A worker as the scheduler sees it: its gateway id, and what it was sent."""

    def __init__(self, number: int) -> None:
        self.gateway = type("Gateway", (), {"id": f"gw{number}"})()
        self.sent: list[list[int]] = []
        self.down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(list(indices))

    def shutdown(self) -> None:
        self.down = True


def test_the_scheduler_sends_each_worker_its_share_at_once_and_a_replacement_the_rest() -> None:
    ids = [f"s/caseforge.yaml::test[c{i}]" for i in range(5)]
    scheduler = ShardScheduling(2)
    first, second = Node(0), Node(1)
    for node in (first, second):
        scheduler.add_node(node)
        scheduler.add_node_collection(node, ids)
    assert scheduler.collection_is_completed
    scheduler.schedule()
    assert (first.sent, second.sent) == ([[0, 2, 4]], [[1, 3]])
    assert first.down and second.down
    scheduler.mark_test_complete(first, 0)
    assert scheduler.remove_node(first) == ids[2]  # it died running c2
    replacement = Node(2)
    scheduler.add_node(replacement)
    scheduler.add_node_collection(replacement, ids)
    scheduler.schedule()
    assert replacement.sent == [[4]]  # what was left of the first worker's share
