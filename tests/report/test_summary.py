"""Every summary metric against a small run worked out by hand."""

from __future__ import annotations

import pytest

from caseforge.agent.protocol import AgentResult
from caseforge.case.model import Case
from caseforge.grade import grade_trial
from caseforge.report.model import FailingCheck, SliceCell, Summary
from caseforge.report.summary import check_counts, summarize
from caseforge.results import TrialRecord, TrialStatus

# Four cases × three trials. Each trial reports these flags (None = the agent errored).
PLAN: dict[str, tuple[list[str], list[list[str] | None]]] = {
    "a": (["x", "y"], [["x", "y"], ["y", "x"], ["x", "y"]]),  # all pass: tp 6
    "b": (["x"], [["x"], ["x"], ["z"]]),  # tp 2, fp 1, fn 1
    "c": ([], [["z"], ["z"], ["z"]]),  # clean, every trial reports something: fp 3
    "d": ([], [[], ["w"], ["w"]]),  # clean, two of three report something: fp 2
}


def make_cases() -> dict[str, Case]:
    return {
        cid: Case.model_validate(
            {
                "id": cid,
                "input": {},
                "expect": {"flags": {"mode": "exact_set", "values": want}},
                "tags": ["clean" if not want else "planted", "all"],
                "source": "manual" if cid in "ab" else "synthetic",
                "split": "dev" if cid in "ac" else "test",
            }
        )
        for cid, (want, _) in PLAN.items()
    }


def make_records(cases: dict[str, Case]) -> list[TrialRecord]:
    records = []
    latency = 0.0
    for cid, (_, trials) in PLAN.items():
        for trial, flags in enumerate(trials, start=1):
            latency += 1.0
            assert flags is not None
            status, checks = grade_trial(cases[cid], AgentResult(output={"flags": flags}))
            records.append(
                TrialRecord(cid, trial, status, checks, latency_s=latency, cost_usd=0.01)
            )
    return records


@pytest.fixture
def summary() -> Summary:
    cases = make_cases()
    return summarize(make_records(cases), cases, trials=3)


def test_pass_rate_interval_and_clustered_se(summary: Summary) -> None:
    # passes per case: a 3, b 2, c 0, d 1 -> 6 of 12
    assert (summary.case_trials, summary.passed, summary.failed) == (12, 6, 6)
    assert summary.pass_rate == 0.5
    lo, hi = summary.pass_rate_ci
    assert lo == pytest.approx(0.2538, abs=1e-4) and hi == pytest.approx(0.7462, abs=1e-4)
    assert summary.pass_rate_se == pytest.approx(0.2152, abs=1e-4)
    assert summary.fully_passing_cases == 1


def test_pass_hat_k_and_pass_at_k(summary: Summary) -> None:
    # pass^2 = mean(C(c,2)/C(3,2)) = (1 + 1/3 + 0 + 0) / 4; pass^3 = 1/4
    assert summary.pass_hat_k == pytest.approx({"1": 0.5, "2": 1 / 3, "3": 0.25})
    # pass@2 = mean(1, 1, 0, 2/3); pass@3 = 3/4
    assert summary.pass_at_k == pytest.approx({"1": 0.5, "2": (2 + 2 / 3) / 4, "3": 0.75})


def test_items_and_false_positive_rate(summary: Summary) -> None:
    flags = summary.items["flags"]
    assert (flags.tp, flags.fp, flags.fn) == (8, 6, 1)
    assert flags.precision == pytest.approx(8 / 14)
    assert flags.recall == pytest.approx(8 / 9)
    assert summary.clean_case_trials == 6
    assert summary.false_positive_rate == pytest.approx(5 / 6)


def test_cost_and_latency(summary: Summary) -> None:
    assert summary.cost_usd == pytest.approx(0.12)
    assert summary.cost_per_run == pytest.approx(0.01)
    assert summary.cost_per_true_finding == pytest.approx(0.12 / 8)
    assert summary.latency_p50_s == pytest.approx(6.5)  # latencies 1..12
    assert summary.latency_p95_s == pytest.approx(11.45)


def test_checks_slices_and_most_failing(summary: Summary) -> None:
    cases = make_cases()
    counts = check_counts(make_records(cases))["flags"]
    assert counts.passed == 6 and counts.fail == 6 and counts.error == 0
    assert counts.model_dump()["pass"] == 6  # the JSON key is the status
    assert summary.most_failing_checks == [FailingCheck(check="flags", fail=6, graded=12)]
    tags = summary.slices["tag"]
    assert tags["planted"] == SliceCell(case_trials=6, passed=5, pass_rate=5 / 6)
    assert tags["clean"] == SliceCell(case_trials=6, passed=1, pass_rate=1 / 6)
    assert summary.slices["split"]["dev"].passed == 3
    assert summary.slices["source"]["synthetic"].case_trials == 6


def test_errors_count_against_the_pass_rate_and_not_in_items() -> None:
    cases = make_cases()
    records = make_records(cases)
    records[0] = TrialRecord("a", 1, TrialStatus.ERROR, [], error="timed out", cost_usd=0.0)
    summary = summarize(records, cases, trials=3)
    assert summary.errors == 1 and summary.passed == 5
    assert summary.pass_rate == pytest.approx(5 / 12)
    assert summary.items["flags"].tp == 6  # the errored trial contributes nothing
