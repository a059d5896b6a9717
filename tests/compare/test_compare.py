"""compare (JSON keys, pairing rules, tests chosen by trial count), history, holdout, plan."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from caseforge.case.model import Case
from caseforge.cli import app
from caseforge.compare import compare_runs
from caseforge.compare.outcomes import CaseOutcome, RunOutcomes
from caseforge.report.summary import summarize
from caseforge.results import TrialRecord, TrialStatus
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite

runner = CliRunner()


def outcomes(cases: dict[str, tuple[str, str]]) -> RunOutcomes:
    """cases: id -> (trial letters like "PPF", digest)."""
    return RunOutcomes(
        "x",
        "run",
        "suite",
        None,
        1,
        None,
        {},
        {
            cid: CaseOutcome([TrialStatus.from_letter(x) for x in letters], digest)
            for cid, (letters, digest) in cases.items()
        },
    )


def test_pairing_leaves_out_added_removed_and_changed_cases() -> None:
    a = outcomes(
        {"same": ("P", "d1"), "flip": ("P", "d2"), "edited": ("P", "d3"), "gone": ("F", "d4")}
    )
    b = outcomes(
        {"same": ("P", "d1"), "flip": ("F", "d2"), "edited": ("F", "CHANGED"), "new": ("P", "d5")}
    )
    c = compare_runs(a, b)
    data = c.to_result().model_dump(mode="json")
    assert data["paired_cases"] == 2
    assert (data["cases_added"], data["cases_removed"], data["cases_changed"]) == (
        ["new"],
        ["gone"],
        ["edited"],
    )
    assert data["newly_failing"] == ["flip"] and data["newly_passing"] == []
    assert data["discordant"] == {"b": 1, "c": 0}
    for key in ("mcnemar_p", "pass_rate_a", "pass_rate_b", "difference", "difference_ci"):
        assert key in data
    assert data["test"] == "mcnemar-exact" and data["mcnemar_p"] == 1.0
    assert data["pass_rate_a"] == 1.0 and data["pass_rate_b"] == 0.5


def test_majority_of_trials_decides_passing_and_several_trials_use_paired_t() -> None:
    a = outcomes({f"c{i}": ("PPF", "d") for i in range(10)})
    b = outcomes({f"c{i}": ("PFF", "d") for i in range(10)})
    c = compare_runs(a, b)
    assert c.test == "paired-t"
    assert len(c.newly_failing) == 10  # 2 of 3 → 1 of 3: from passing to failing
    assert c.difference == pytest.approx(-1 / 3)
    assert c.significant  # the same drop on all 10 cases: the sign test gives p = 2/2^10
    few = compare_runs(
        outcomes({f"c{i}": ("PPF", "d") for i in range(2)}),
        outcomes({f"c{i}": ("PFF", "d") for i in range(2)}),
    )
    assert few.p_value == 0.5 and not few.significant  # two cases prove nothing


def test_no_significant_difference_prints_the_mde() -> None:
    from caseforge.compare.pairing import comparison_text

    a = outcomes({f"c{i}": ("P" if i % 2 else "F", "d") for i in range(20)})
    b = outcomes(
        {f"c{i}": ("P" if i in (0, 1, 2, 5) or (i % 2 and i > 6) else "F", "d") for i in range(20)}
    )
    c = compare_runs(a, b)
    assert not c.significant and c.mde is not None
    assert "smallest detectable difference" in comparison_text(c)


def test_cli_compare_json(toy_suite: MakeToySuite, tmp_path: Path) -> None:
    cases: list[dict[str, Any]] = [{"id": f"c{i}", "input": {}} for i in range(6)]
    root = toy_suite(cases, configs={"a": {}, "b": {"fail": ["c1", "c2"]}})
    url = f"sqlite:///{tmp_path / 'c.db'}"
    store = RunStore(url)
    outcome = asyncio.run(Runner(RunOptions(suite_dir=root, configs=["a", "b"]), store).run())
    ids = [h.run_id for h in outcome.runs]
    result = runner.invoke(app, ["compare", *ids, "--json", "--store", url])
    data = json.loads(result.stdout)
    assert data["newly_failing"] == ["c1", "c2"] and data["newly_passing"] == []
    assert data["changed_checks"] == {"c1": ["category"], "c2": ["category"]}
    assert data["mcnemar_p"] == 0.5
    text = runner.invoke(app, ["compare", *ids, "--store", url]).stdout
    assert "newly failing: c1 — category" in text and "exact McNemar: p = 0.5" in text


def test_history_finds_flaky_cases(toy_suite: MakeToySuite, tmp_path: Path) -> None:
    cases = [{"id": "steady", "input": {}}, {"id": "coin", "input": {"behaviour": "flip"}}]
    root = toy_suite(cases, trials=6)
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store = RunStore(url)
    for _ in range(2):
        asyncio.run(Runner(RunOptions(suite_dir=root), store).run())
    result = runner.invoke(app, ["history", str(root), "--json", "--store", url])
    data = json.loads(result.stdout)
    assert len(data["runs"]) == 2
    assert set(data["cases"]["steady"].values()) == {"PPPPPP"}
    flaky = {f["case"]: f for f in data["flaky"]}
    assert set(flaky) == {"coin"} and 0 < flaky["coin"]["flip_rate"] <= 1
    letters = next(iter(data["cases"]["coin"].values()))
    flips = sum(x != y for x, y in itertools.pairwise(letters))
    assert flaky["coin"]["flips"] == 2 * flips  # two identical runs (same seeds)
    one = runner.invoke(app, ["history", str(root), "coin", "--store", url])
    assert "coin" in one.stdout and "steady" not in one.stdout
    # a run narrowed to some cases, and one stopped before its end, say so in their column
    asyncio.run(Runner(RunOptions(suite_dir=root, case_ids=["coin"]), store).run())
    store.set_status(store.list_runs(limit=1)[0].id, "stopped")
    text = runner.invoke(app, ["history", str(root), "--store", url]).stdout
    [newest] = [line for line in text.splitlines() if line.startswith("  [1] ")]
    assert newest.endswith("(stopped; a selection: --case coin)"), newest
    assert all("(" not in line for line in text.splitlines() if line.startswith(("  [2]", "  [3]")))


def test_holdout_alarm() -> None:
    def case(cid: str, split: str) -> Case:
        return Case.model_validate(
            {"id": cid, "input": {}, "expect": {"x": {"mode": "exact", "value": 1}}, "split": split}
        )

    cases = {f"d{i}": case(f"d{i}", "dev") for i in range(20)} | {
        f"t{i}": case(f"t{i}", "test") for i in range(10)
    }
    records = [
        TrialRecord(
            cid,
            1,
            TrialStatus.PASS
            if (cid.startswith("d") and cid != "d0") or cid in ("t0", "t1", "t2")
            else TrialStatus.FAIL,
        )
        for cid in cases
    ]
    hold = summarize(records, cases, 1).holdout
    assert hold is not None
    assert hold.dev_pass_rate == pytest.approx(0.95) and hold.test_pass_rate == pytest.approx(0.3)
    assert hold.alarm is True
    fair = [
        TrialRecord(cid, 1, TrialStatus.PASS if int(cid[1:]) % 2 else TrialStatus.FAIL)
        for cid in cases
    ]
    assert summarize(fair, cases, 1).holdout.alarm is False  # type: ignore[union-attr]


def test_plan_prints_sample_sizes_and_the_mde() -> None:
    paired = runner.invoke(
        app,
        [
            "plan",
            "--p",
            "0.85",
            "--delta",
            "0.05",
            "--paired",
            "--discordance",
            "0.15",
            "--n",
            "50",
        ],
    )
    assert paired.exit_code == 0
    assert "469 cases by Connor's formula" in paired.stdout
    assert "with 50 cases: smallest detectable difference ≈ 15.0%" in paired.stdout
    unpaired = runner.invoke(app, ["plan", "--p", "0.85", "--delta", "0.1", "--n", "50"])
    assert "cases per run" in unpaired.stdout and "±9.9%" in unpaired.stdout
    bad = runner.invoke(app, ["plan", "--p", "1.5", "--delta", "0.1"])
    assert bad.exit_code != 0


def test_too_few_cases_give_no_mde_and_never_nan() -> None:
    """One case, one trial: the MDE is not defined, and was printed as `≈nan points`."""
    from caseforge.compare.pairing import comparison_text

    a = outcomes({"x": ("P", "d")})
    b = outcomes({"x": ("P", "d")})
    b.run_id = "other"
    c = compare_runs(a, b)
    assert c.mde is None
    assert "nan" not in comparison_text(c).lower()
    assert "NaN" not in c.to_result().model_dump_json()
    assert not any("the MDE assumes" in n for n in c.notes)


def test_a_run_compared_with_itself_is_no_difference() -> None:
    from caseforge.compare.pairing import comparison_text

    a = outcomes({"x": ("P", "d"), "y": ("F", "e")})
    c = compare_runs(a, a)
    text = comparison_text(c)
    assert "no difference: both sides are run run, the same run (nothing to test)" in text
    assert "nan" not in text.lower() and "detectable" not in text
    assert c.to_result().notes == [
        "both sides are run run: the same run, so there is no difference"
    ]
