"""``caseforge rescore``: re-grade a stored run with today's expectations, without re-running
the agent. The stored raw responses (and what the outcome probe read) are graded again
against the current case files and judge (its calls cached), and stored as a new run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caseforge import __version__
from caseforge.agent.protocol import AgentResult
from caseforge.case.load import load_suite
from caseforge.errors import CaseforgeError
from caseforge.grade.judge import judge_record, make_judge
from caseforge.grade.trial import GradeOptions, grade_trial
from caseforge.paths import suite_paths
from caseforge.results import NO_JUDGE_REASON, TrialRecord, TrialStatus, needs_judge
from caseforge.run.executor import TrialOutcome, TrialTask
from caseforge.run.runner import store_row
from caseforge.store.db import RunStore, new_run_id
from caseforge.vcs import dataset_state

if TYPE_CHECKING:
    from caseforge.grade.judge import Judge
    from caseforge.llm.client import ModelClient


@dataclass(frozen=True)
class Rescored:
    run_id: str
    source_run_id: str
    graded: int
    skipped_cases: list[str]


async def rescore(
    store: RunStore,
    run_id: str,
    judge_mode: str = "auto",
    judge_client: ModelClient | None = None,
    suite_dir: Path | None = None,
) -> Rescored:
    """Grade the stored responses of ``run_id`` again and store the result as a new run."""
    info = store.get_run(run_id)
    if info.status != "finished":
        raise CaseforgeError(
            f"run {run_id} is {info.status}: finish it (--resume) before rescoring"
        )
    suite = load_suite(suite_dir or Path(info.suite_path))
    current = {c.case.id: c.case for c in suite.cases}
    judge: Judge | None = None
    if judge_mode != "off":
        judge = make_judge(
            suite.config.judge, suite.config.prices, suite_paths(suite.root).cache, judge_client
        )
    options = GradeOptions(
        judge="skip" if judge_mode == "off" else "not_judged", judge_reason=NO_JUDGE_REASON
    )
    commit, dirty = dataset_state(suite.root)
    new_id = new_run_id()
    store.create_run(
        id=new_id,
        suite=info.suite,
        suite_path=str(suite.root.resolve()),
        group_id=new_id,
        dataset_commit=commit,
        dataset_dirty=dirty,
        agent=info.agent,
        config_name=info.config_name,
        config=info.config,
        trials=info.trials,
        split=info.split,
        caseforge_version=__version__,
        options={**info.options, "rescored_from": run_id, "judge": None},
    )
    old_ids = set(store.cases(run_id))
    skipped = sorted(old_ids - set(current))
    store.save_cases(
        new_id,
        [
            (cid, current[cid].model_dump_json(exclude_unset=True))
            for cid in sorted(old_ids & set(current))
        ],
    )
    rows = []
    graded = 0
    for row in store.results(run_id):
        case = current.get(row["case_id"])
        if case is None:
            continue
        task = TrialTask(new_id, info.config_name, info.config, case, row["trial"], 0, "")
        outcome = TrialOutcome(task=task, error=row["error"], latency_s=row["latency_s"])
        if row["response_json"]:
            outcome.result = AgentResult.model_validate_json(row["response_json"])
            outcome.outcomes = (
                json.loads(row["outcomes_json"]) if row.get("outcomes_json") else None
            )
            status, checks = grade_trial(case, outcome.result, outcome.outcomes, options)
        else:
            status, checks = TrialStatus.ERROR, []
        record = TrialRecord(
            case.id,
            row["trial"],
            status,
            checks,
            error=row["error"],
            latency_s=row["latency_s"],
            cost_usd=row["cost_usd"],
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
        )
        if judge is not None and needs_judge(record):
            await judge_record(judge, case, outcome.result, record)
        rows.append(store_row(outcome, record))
        graded += 1
    store.write_results(rows)
    if judge is not None:
        store.update_options(
            new_id, {"judge": {**judge.description, **judge.client.stats.to_json()}}
        )
        await judge.aclose()
    store.set_status(new_id, "finished")
    return Rescored(new_id, run_id, graded, skipped)
