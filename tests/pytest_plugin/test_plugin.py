"""``pytest --caseforge SUITE``: a suite's cases as test items, run in a pytest of their own
(a subprocess), into a store of their own: an item per case, a failure that names its
checks, judge checks skipped without a model, -k, --lf, -x, --co, a matrix, the run in the
store as ``caseforge run`` would leave it (a selection when narrowed, which the gate
refuses), the case-trials run concurrently, and pytest-xdist's workers as shards of one run.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from caseforge.results import RunStatus, TrialStatus
from tests.gitrepo import git
from tests.helpers import REPO_ROOT
from tests.pytest_plugin.project import make_project, run_pytest


def test_an_item_per_case_a_failure_names_its_check_and_an_unjudged_case_is_skipped(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "p")
    done = project.pytest("-v", "-rs")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr  # a case failed
    assert "toy/caseforge.yaml::test[refund-a] PASSED" in out
    assert "toy/caseforge.yaml::test[refund-b] PASSED" in out
    assert "toy/caseforge.yaml::test[wrong-c] FAILED" in out
    assert "toy/caseforge.yaml::test[judged-d] SKIPPED" in out
    # The failure: which trials, the rule, each failing check as `caseforge show` prints it.
    assert (
        "wrong-c: 0 of 2 trials passed; a case passes when every trial passes "
        "(--caseforge-pass all)"
    ) in out
    assert "trial 1: fail" in out and "trial 2: fail" in out  # their replies differ
    assert '[fail] category (exact) — expected "refund", got "other"' in out
    assert "reply:" in out
    assert "the whole case-trial: caseforge show --store" in out
    assert "not judged: no model configured (facts)" in out
    assert "toy/cases/judged-d.yaml:1: not judged" in out  # located at the case's file
    assert "1 failed, 2 passed, 1 skipped" in out
    # The run is in the store as `caseforge run` leaves one: finished, whole, not a selection.
    [run] = project.runs()
    assert run.status is RunStatus.FINISHED
    assert run.selection is None
    assert {c.id: c.statuses for c in run.cases}["judged-d"] == [TrialStatus.INCOMPLETE] * 2
    assert sum(len(c.trials) for c in run.cases) == 8
    assert f"run {run.run_id} · toy · 4 cases × 2 trials · finished" in out


def test_k_runs_a_selection_the_store_marks_and_the_gate_refuses(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    git(project.root, "init", "-q")
    git(project.root, "add", ".")
    git(project.root, "commit", "-qm", "a suite")
    whole = project.caseforge(
        "run", "toy", "--no-judge", "--store", project.store_url, "--out", "whole", "-q"
    )
    assert whole.returncode == 0, whole.stderr
    made = project.caseforge("baseline", "whole/report.json", "--write", "baseline.json")
    assert made.returncode == 0, made.stderr

    done = project.pytest("-k", "refund-b", "--caseforge-no-judge")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 3 deselected" in done.stdout
    selected, full = project.runs()
    assert [c.id for c in selected.cases] == ["refund-b"]  # only what -k kept ran
    assert selected.options["case_ids"] == ["refund-b"]
    assert selected.selection == "--case refund-b"
    assert "a selection (--case refund-b)" in done.stdout
    assert selected.suite_identity == full.suite_identity  # the same suite as `caseforge run`
    shown = project.caseforge("report", selected.run_id, "--store", project.store_url)
    assert re.search(
        r"selection +--case refund-b: some of the suite's cases, not all", shown.stdout
    )

    gated = project.caseforge(
        "gate", selected.run_id, "--baseline", "baseline.json", "--store", project.store_url
    )
    assert gated.returncode == 2, gated.stdout + gated.stderr
    [line] = gated.stderr.strip().splitlines()
    assert f"run {selected.run_id} is a selection (--case refund-b): it lacks 3 case(s)" in line
    compared = project.caseforge(
        "compare", full.run_id, selected.run_id, "--store", project.store_url
    )
    assert compared.returncode == 0, compared.stderr  # compare pairs what both have


def test_lf_runs_again_only_the_case_that_failed(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    first = project.pytest()
    assert first.returncode == 1
    again = project.pytest("--lf")
    assert again.returncode == 1, again.stdout
    assert "1 failed, 3 deselected" in again.stdout
    latest = project.runs()[0]
    assert [c.id for c in latest.cases] == ["wrong-c"]
    assert latest.selection == "--case wrong-c"


def test_co_lists_the_items_and_runs_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    done = project.pytest("--co", "-q", "-m", "caseforge", "-k", "must-pass or wrong")
    assert done.returncode == 0, done.stdout + done.stderr
    listed = [line for line in done.stdout.splitlines() if "::" in line]
    assert listed == ["toy/caseforge.yaml::test[refund-b]", "toy/caseforge.yaml::test[wrong-c]"]
    assert not (project.root / "store.db").exists() or not project.runs()


def test_x_stops_at_the_first_failure_and_no_other_case_trial_starts(tmp_path: Path) -> None:
    """The first case fails at once while the others hang: -x reports it, cancels the run,
    and the hanging case-trials are abandoned, the ones not started never start."""
    cases = [{"id": "aa-wrong", "input": {"want": "other"}}]
    cases += [{"id": f"hang-{i}", "input": {"behaviour": "hang"}} for i in range(6)]
    project = make_project(tmp_path / "p", cases, trials=1, concurrency=2)
    done = project.pytest("-x")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout and "stopping after 1 failures" in done.stdout
    [run] = project.runs()
    assert run.status is RunStatus.STOPPED
    assert [c.id for c in run.cases if c.trials] == ["aa-wrong"]  # stored: the failure alone
    assert f"resume with --resume {run.run_id}" in done.stdout


def test_the_case_trials_run_concurrently(tmp_path: Path) -> None:
    """Each call waits until all four are in flight at once: run one at a time, each would
    time out (an error, so a failure) instead."""
    barrier = """
import asyncio

WAITING = []


async def run(input, ctx):
    arrived = asyncio.get_running_loop().create_future()
    WAITING.append(arrived)
    if len(WAITING) >= input["together"]:
        for waiting in WAITING:
            if not waiting.done():
                waiting.set_result(None)
    await asyncio.wait_for(arrived, 120)
    return {"output": {"category": "refund"}}
"""
    cases = [{"id": f"c{i}", "input": {"together": 4}} for i in range(4)]
    project = make_project(
        tmp_path / "p",
        cases,
        files={"barrier.py": barrier},
        agent={"callable": "barrier:run"},
        trials=1,
        concurrency=4,
    )
    done = project.pytest()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout


def test_a_matrix_is_an_item_per_case_and_configuration(tmp_path: Path) -> None:
    configs = {"good": {}, "bad": {"fail": ["refund-a"]}}
    project = make_project(tmp_path / "p", CASES_PASSING, configs=configs)
    done = project.pytest("-v", "--caseforge-config", "good", "--caseforge-config", "bad")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "toy/caseforge.yaml::good::test[refund-a] PASSED" in done.stdout
    assert "toy/caseforge.yaml::bad::test[refund-a] FAILED" in done.stdout
    assert "refund-a [bad]: 0 of 2 trials passed" in done.stdout
    runs = project.runs()
    assert sorted(r.config or "" for r in runs) == ["bad", "good"]
    assert len({r.group_id for r in runs}) == 1  # one invocation, as `--config a --config b`


CASES_PASSING = [{"id": "refund-a", "input": {}}, {"id": "refund-b", "input": {}}]


def test_majority_passes_a_case_most_of_whose_trials_pass(tmp_path: Path) -> None:
    cases = [{"id": "flip", "input": {"behaviour": "flip"}}]
    project = make_project(tmp_path / "p", cases, trials=9)
    every = project.pytest("-q")
    [run] = project.runs()
    passed = run.cases[0].passed
    assert 0 < passed < 9, "the seeds give both outcomes"  # flip: heads or tails per seed
    assert every.returncode == 1
    most = project.pytest("-q", "--caseforge-pass", "majority")
    assert most.returncode == (0 if passed >= 5 else 1), most.stdout
    one = project.pytest("-q", "--caseforge-pass", "any")
    assert one.returncode == 0, one.stdout
    assert "a case passes when one of its trials passes (--caseforge-pass any)" in one.stdout


def test_xdist_workers_fill_one_run_as_its_shards(tmp_path: Path) -> None:
    cases = [{"id": f"ok-{i}", "input": {}} for i in range(6)]
    cases.append({"id": "wrong-z", "input": {"want": "other"}})
    project = make_project(tmp_path / "p", cases)
    done = project.pytest("-n", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 6 passed" in done.stdout
    assert "wrong-z: 0 of 2 trials passed" in done.stdout
    [run] = project.runs()  # one run, whatever the number of workers
    assert run.status is RunStatus.FINISHED
    assert sorted((c.id, t.trial) for c in run.cases for t in c.trials) == sorted(
        (c["id"], t) for c in cases for t in (1, 2)
    )  # every case-trial once
    shards = project.shards(run.run_id)
    assert [(s["shard"], s["shards"], s["status"]) for s in shards] == [
        (1, 2, "finished"),
        (2, 2, "finished"),
    ]
    assert f"run {run.run_id} · toy · 7 cases × 2 trials · finished" in done.stdout


def test_the_support_example_runs_offline_and_a_failure_names_its_checks(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    shutil.copytree(
        REPO_ROOT / "examples" / "support-refund",
        root / "support-refund",
        ignore=shutil.ignore_patterns(".caseforge", "__pycache__"),
    )
    store = f"sqlite:///{root / 'store.db'}"
    done = run_pytest(
        root, "--caseforge", "support-refund", "--caseforge-config", "v1",
        "--caseforge-no-judge", "--caseforge-store", store, "-k", "ea-basic or ea-half",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ea-basic-yearly-009 [v1]: 0 of 3 trials passed" in done.stdout
    assert "[fail] needs_approval (exact) — expected false, got true" in done.stdout
    assert "[fail] tool_calls (tool_calls) — called but forbidden: create_refund_request" in (
        done.stdout
    )
    assert "1 failed, 2 passed, 83 deselected" in done.stdout


def test_mistakes_are_one_line_each(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    unknown = project.pytest("--caseforge-config", "nope")
    assert unknown.returncode == 4  # pytest's usage error
    assert "--caseforge-config: unknown config nope (the suite has: none)" in unknown.stderr
    broken = project.suite / "cases" / "refund-a.yaml"
    broken.write_text(json.dumps({"id": "refund-a", "input": {}, "expect": {"x": {"mode": "no"}}}))
    invalid = project.pytest()
    assert invalid.returncode == 2  # pytest's "errors during collection"
    assert "ERROR collecting toy/caseforge.yaml" in invalid.stdout
    assert "refund-a.yaml:1:" in invalid.stdout and "expect.x" in invalid.stdout
    nowhere = run_pytest(project.root, "--caseforge", "nowhere")
    assert nowhere.returncode == 4
    assert "nowhere: not a suite folder (it has no caseforge.yaml)" in nowhere.stderr


def test_the_pytest_configuration_can_name_the_suite_for_a_plain_pytest(tmp_path: Path) -> None:
    """What an IDE's test runner starts: `pytest`, no option; the cases run beside the
    tests `testpaths` names. `-p no:caseforge` leaves the plugin out."""
    project = make_project(tmp_path / "p", CASES_PASSING)
    (project.root / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\ncaseforge_suite = toy\n"
        f"addopts = --caseforge-store {project.store_url}\n",
        encoding="utf-8",
    )
    (project.root / "tests").mkdir()
    (project.root / "tests" / "test_own.py").write_text("def test_own():\n    pass\n")
    done = run_pytest(project.root, "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests/test_own.py::test_own PASSED" in done.stdout
    assert "toy/caseforge.yaml::test[refund-a] PASSED" in done.stdout
    assert "3 passed" in done.stdout
    without = run_pytest(project.root, "-v", "-p", "no:caseforge", "-o", "addopts=")
    assert without.returncode == 0, without.stdout + without.stderr
    assert "1 passed" in without.stdout and "toy/" not in without.stdout
