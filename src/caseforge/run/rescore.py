"""``caseforge rescore``: re-grade a stored run with today's expectations, without re-running
the agent. It is a :class:`~caseforge.run.runner.Runner` whose plan is the stored run and
whose executor replays its outcomes (raw responses and what the outcome probe read); the
judge, the store writes and the teardown are the same as a run's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore

if TYPE_CHECKING:
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
    options = RunOptions(suite_dir=suite_dir, rescore=run_id, judge=judge_mode)
    outcome = await Runner(options, store, judge_client=judge_client).run()
    return Rescored(outcome.runs[0].run_id, run_id, outcome.executed, outcome.left_out)
