"""Baselines and the gate: a real regression, noise, and a failing must-pass case."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from caseforge.cli import app
from caseforge.results import TrialStatus
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite

RULES = {
    "rules": [
        {"metric": "pass_rate", "no_significant_drop": True},
        {"metric": "cost_per_run", "max_increase": 0.10},
        {"tag": "must-pass"},
    ]
}
CONFIGS = {
    "base": {"fail": ["c29"]},  # the baseline: c29 fails
    "regress": {"fail": ["c29", "c10", "c11", "c12", "c13", "c14", "c15", "c16", "c17"]},
    "noise": {"fail": ["c10", "c11"]},  # 2 newly failing, c29 newly passing
    "mustpass": {"fail": ["c29", "c03"]},  # c03 carries the must-pass tag
}
runner = CliRunner()


@pytest.fixture
def suite(toy_suite: MakeToySuite) -> Path:
    cases: list[dict[str, Any]] = [
        {"id": f"c{i:02d}", "input": {}, "tags": ["must-pass"] if i == 3 else []} for i in range(30)
    ]
    return toy_suite(cases, configs=CONFIGS, gate=RULES, trials=1)


def run_config(suite: Path, url: str, config: str) -> str:
    store = RunStore(url)
    outcome = asyncio.run(Runner(RunOptions(suite_dir=suite, configs=[config]), store).run())
    store.close()
    return outcome.runs[0].run_id


def gate(run_id: str, baseline: Path, url: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(
        app, ["gate", run_id, "--baseline", str(baseline), "--json", "--store", url]
    )
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture
def baseline(suite: Path, tmp_path: Path) -> tuple[Path, str]:
    url = f"sqlite:///{tmp_path / 'gate.db'}"
    run_id = run_config(suite, url, "base")
    path = tmp_path / "baseline.json"
    result = runner.invoke(app, ["baseline", run_id, "--write", str(path), "--store", url])
    assert result.exit_code == 0, result.output
    return path, url


def test_baseline_is_small_and_reviewable(baseline: tuple[Path, str]) -> None:
    path, _ = baseline
    text = path.read_text()
    data = json.loads(text)
    assert data["caseforge_baseline"] == 1 and len(data["cases"]) == 30
    assert data["cases"]["c29"]["trials"] == "F" and data["cases"]["c00"]["trials"] == "P"
    assert data["metrics"]["pass_rate"] == pytest.approx(29 / 30)
    per_case = [line for line in text.splitlines() if '"trials": "' in line]
    assert len(per_case) == 30  # one line per case: a review diff shows one line per change


def test_real_regression_fails_the_gate(suite: Path, baseline: tuple[Path, str]) -> None:
    path, url = baseline
    code, data = gate(run_config(suite, url, "regress"), path, url)
    assert code == 1 and data["verdict"] == "regression"
    rule = data["rules"][0]
    assert rule["verdict"] == "regression"
    assert "8 newly failing, 0 newly passing" in rule["detail"]
    assert "mcnemar-exact p = 0.00781" in rule["detail"]


def test_noise_is_within_noise_and_passes_ci(suite: Path, baseline: tuple[Path, str]) -> None:
    path, url = baseline
    code, data = gate(run_config(suite, url, "noise"), path, url)
    assert code == 0 and data["verdict"] == "within-noise"
    assert data["rules"][0]["verdict"] == "within-noise"
    assert "2 newly failing, 1 newly passing" in data["rules"][0]["detail"]
    assert [r["verdict"] for r in data["rules"][1:]] == ["pass", "pass"]


def test_failing_must_pass_case_fails_the_gate(suite: Path, baseline: tuple[Path, str]) -> None:
    path, url = baseline
    code, data = gate(run_config(suite, url, "mustpass"), path, url)
    assert code == 1 and data["verdict"] == "regression"
    tag_rule = data["rules"][-1]
    assert tag_rule["verdict"] == "regression" and "c03 (F)" in tag_rule["detail"]
    assert data["rules"][0]["verdict"] in ("pass", "within-noise")


def test_gate_markdown_and_junit(suite: Path, baseline: tuple[Path, str]) -> None:
    path, url = baseline
    run_id = run_config(suite, url, "regress")
    md = runner.invoke(
        app, ["gate", run_id, "--baseline", str(path), "--format", "md", "--store", url]
    )
    assert md.exit_code == 1 and md.stdout.startswith("### caseforge gate: ❌ regression")
    junit = runner.invoke(
        app, ["gate", run_id, "--baseline", str(path), "--format", "junit", "--store", url]
    )
    assert junit.exit_code == 1 and '<failure message="' in junit.stdout


def test_bounds_rules() -> None:
    from caseforge.case.suite import GateRule
    from caseforge.compare.gate import gate as apply
    from caseforge.compare.outcomes import RunOutcomes

    def outcomes(**metrics: Any) -> RunOutcomes:
        return RunOutcomes("x", "r", "s", None, 1, None, metrics, {})

    base = outcomes(cost_per_run=0.010, false_positive_rate=0.0, pass_rate=0.9)
    rules = [
        GateRule(metric="cost_per_run", max_increase=0.10),
        GateRule(metric="false_positive_rate", max=0.05),
        GateRule(metric="pass_rate", max_drop=0.05, min=0.8),
    ]
    ok = apply(outcomes(cost_per_run=0.0109, false_positive_rate=0.05, pass_rate=0.86), base, rules)
    assert ok.verdict == "pass"
    bad = apply(
        outcomes(cost_per_run=0.0111, false_positive_rate=0.06, pass_rate=0.79), base, rules
    )
    assert [r.verdict for r in bad.rules] == ["regression"] * 3
    assert "+11.0% > +10%" in bad.rules[0].detail


def test_recall_rule_uses_a_paired_bootstrap(toy_suite: MakeToySuite, tmp_path: Path) -> None:
    cases = [
        {
            "id": f"k{i:02d}",
            "input": {"flags": ["a", "b"]},
            "expect": {"flags": {"mode": "exact_set", "values": ["a", "b"]}},
        }
        for i in range(20)
    ]
    configs = {"good": {}, "worse": {"fail": [f"k{i:02d}" for i in range(12)], "drop_flag": True}}
    rules = {"rules": [{"metric": "items.flags.recall", "no_significant_drop": True}]}
    root = toy_suite(cases, configs=configs, gate=rules)
    url = f"sqlite:///{tmp_path / 'recall.db'}"
    base_path = tmp_path / "b.json"
    runner.invoke(
        app, ["baseline", run_config(root, url, "good"), "--write", str(base_path), "--store", url]
    )
    code, data = gate(run_config(root, url, "worse"), base_path, url)
    assert code == 1 and data["rules"][0]["verdict"] == "regression"
    assert "bootstrap CI" in data["rules"][0]["detail"]


def test_gate_refuses_a_stopped_run_and_missing_trials_fail_must_pass(
    suite: Path, baseline: tuple[Path, str]
) -> None:
    path, url = baseline
    store = RunStore(url)
    outcome = asyncio.run(
        Runner(RunOptions(suite_dir=suite, configs=["base"], max_cost=0.0005), store).run()
    )
    assert outcome.status == "stopped"
    result = runner.invoke(
        app, ["gate", outcome.runs[0].run_id, "--baseline", str(path), "--store", url]
    )
    assert (
        result.exit_code == 2 and "is stopped" in result.output
    )  # a usage error, not a regression
    from caseforge.case.suite import GateRule
    from caseforge.compare.gate import gate as apply
    from caseforge.compare.outcomes import CaseOutcome, RunOutcomes

    partial = RunOutcomes(
        "x", "r", "s", None, 3, None, {}, {"m": CaseOutcome([TrialStatus.PASS], tags=["must-pass"])}
    )
    verdict = apply(partial, partial, [GateRule(tag="must-pass")])
    assert verdict.verdict == "regression" and "m (P)" in verdict.rules[0].detail


def test_a_run_of_one_split_is_gated_by_the_suites_tags(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    """The only must-pass case is in the test split: a dev run has none, which is the split's
    doing, not a rule naming a tag the suite lacks (that stays an error, exit 1)."""
    cases: list[dict[str, Any]] = [
        {"id": f"c{i:02d}", "input": {}, "split": "test" if i == 3 else "dev",
         "tags": ["must-pass"] if i == 3 else []}
        for i in range(8)
    ]  # fmt: skip
    root = toy_suite(cases, configs={"base": {"fail": []}}, gate=RULES, trials=1)
    url = f"sqlite:///{tmp_path / 'split.db'}"
    store = RunStore(url)
    options = RunOptions(suite_dir=root, configs=["base"], split="dev")
    run_id = asyncio.run(Runner(options, store).run()).runs[0].run_id
    store.close()
    path = tmp_path / "baseline.json"
    made = runner.invoke(app, ["baseline", run_id, "--write", str(path), "--store", url])
    assert made.exit_code == 0, made.output
    code, data = gate(run_id, path, url)
    assert code == 0, data
    assert data["rules"][2]["detail"] == "no case tagged 'must-pass' in this run"

    config = root / "caseforge.yaml"
    config.write_text(config.read_text().replace("must-pass", "must-pas"))
    wrong = runner.invoke(app, ["gate", run_id, "--baseline", str(path), "--store", url])
    assert wrong.exit_code == 1 and "no case is tagged 'must-pas'" in wrong.output


def test_a_run_whose_judge_never_ran_is_neither_gated_nor_a_baseline(
    toy_suite: MakeToySuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No model in CI leaves judge checks `not judged`: a setup to fix (exit 2), never a
    regression (exit 1) nor a level to hold later runs to."""
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CASEFORGE_MODEL"):
        monkeypatch.delenv(key, raising=False)
    judged = {"facts": {"mode": "judge", "values": ["the order is on its way"]}}
    root = toy_suite([{"id": "a", "input": {}, "expect": judged}], gate=RULES, trials=1)
    url = f"sqlite:///{tmp_path / 'judge.db'}"
    store = RunStore(url)
    run_id = asyncio.run(Runner(RunOptions(suite_dir=root), store).run()).runs[0].run_id
    store.close()
    made = runner.invoke(app, ["baseline", run_id, "--write", str(tmp_path / "b.json"),
                               "--store", url])  # fmt: skip
    assert made.exit_code == 2 and "incomplete" in made.output and "--no-judge" in made.output
    assert not (tmp_path / "b.json").exists()
    (tmp_path / "old.json").write_text("{}")
    gated = runner.invoke(app, ["gate", run_id, "--baseline", str(tmp_path / "old.json"),
                                "--store", url])  # fmt: skip
    assert gated.exit_code == 2 and "incomplete" in gated.output


def test_a_selection_is_refused_when_its_cases_differ_from_the_baselines() -> None:
    """Missing cases or extra ones: either way the rules would be held to other cases."""
    from caseforge.compare.gate import refuse_selection
    from caseforge.compare.outcomes import CaseOutcome, RunOutcomes
    from caseforge.errors import UsageError
    from caseforge.report.model import selection

    def outcomes(*ids: str) -> RunOutcomes:
        cases = {i: CaseOutcome([TrialStatus.PASS]) for i in ids}
        return RunOutcomes("x", "r", "s", None, 1, None, {}, cases)

    narrowed = {"case_ids": ["a", "c"], "tags": []}
    refuse_selection(outcomes("a", "c"), narrowed, outcomes("a", "c"))  # the same cases: fine
    refuse_selection(outcomes("a", "b", "z"), {}, outcomes("a", "c"))  # the whole suite: fine
    with pytest.raises(UsageError) as lacking:
        refuse_selection(outcomes("a", "c"), narrowed, outcomes("a", "b", "c"))
    assert "is a selection (--case a --case c): it lacks 1 case(s) of the baseline (b);" in str(
        lacking.value
    )
    with pytest.raises(UsageError) as extra:
        refuse_selection(outcomes("a", "c"), narrowed, outcomes("a"))
    assert "it has 1 case(s) the baseline has not (c)" in str(extra.value)
    many = {"case_ids": [f"k{i}" for i in range(40)]}
    assert selection(many) == "--case k0 --case k1 --case k2 … (40 cases)"
    assert selection({"case_ids": [], "tags": []}) is None


def test_gate_for_github_annotates_the_newly_failing_cases_and_writes_the_job_summary(
    suite: Path, baseline: tuple[Path, str], tmp_path: Path
) -> None:
    path, url = baseline
    run_id = run_config(suite, url, "regress")  # c10 … c17 newly failing (c29 failed before)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    done = runner.invoke(
        app,
        ["gate", run_id, "--baseline", str(path), "--format", "github", "--store", url,
         "--out", str(tmp_path / "gate.md")],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    assert done.exit_code == 1, done.output
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 8
    # The suite is in no repository here, nor below the current folder: its path is whole.
    assert errors[0] == (
        f"::error file={suite.resolve().as_posix()}/cases/c10.yaml,line=1,"
        "title=caseforge gate%3A c10 newly failing::c10 passed in the baseline (P) and fails "
        'now (F): category: expected "refund", got "other"'
    )
    assert "gate: regression" in done.stdout  # the log says why, after the annotations
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("earlier step\n### caseforge gate: ❌ regression")  # appended
    assert "#### 8 newly failing (passed in the baseline)" in written
    assert "| `c10` | `" in written and "/cases/c10.yaml:1` | P | F |" in written
    assert (tmp_path / "gate.md").read_text(encoding="utf-8") == written.removeprefix(
        "earlier step\n"
    )
    quality = runner.invoke(
        app, ["gate", run_id, "--baseline", str(path), "--format", "gitlab", "--store", url]
    )
    issues = json.loads(quality.stdout)
    assert len(issues) == 8 and {i["severity"] for i in issues} == {"major"}
    assert issues[0]["location"]["path"].endswith("cases/c10.yaml")
    assert issues[0]["location"]["lines"] == {"begin": 1}
    assert len({i["fingerprint"] for i in issues}) == 8
    passing = runner.invoke(
        app, ["gate", run_config(suite, url, "base"), "--baseline", str(path),
              "--format", "github", "--store", url],
    )  # fmt: skip
    assert passing.exit_code == 0 and "::error" not in passing.stdout


def test_github_annotations_stop_at_fifty_and_count_the_rest() -> None:
    from caseforge.compare.annotate import github_annotations
    from caseforge.compare.gate import GateDecision, GateResult, NewlyFailingCase

    cases = [
        NewlyFailingCase(case_id=f"c{i}", path=f"s/cases/c{i}.yaml", line=3, baseline="P",
                         now="F", reason="a: 50%, not\nall")
        for i in range(60)
    ]  # fmt: skip
    result = GateResult(
        verdict=GateDecision.REGRESSION, run_id="r", baseline_run_id="b", rules=[],
        newly_failing=cases,
    )  # fmt: skip
    lines = github_annotations(result).splitlines()
    assert len(lines) == 51 and all(line.startswith("::error ") for line in lines[:50])
    assert lines[0].endswith("fails now (F): a: 50%25, not%0Aall")  # GitHub's escaping
    assert lines[-1] == (
        "::notice title=caseforge gate::10 more newly failing case(s), not annotated "
        "(the job summary lists them all)"
    )
