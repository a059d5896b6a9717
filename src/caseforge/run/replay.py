"""An executor that calls no agent: it hands back the outcomes a stored run recorded, so
``caseforge rescore`` grades them again through the same session as ``caseforge run``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

from caseforge.agent.protocol import AgentResult
from caseforge.run.executor import BaseExecutor, TrialOutcome, TrialTask
from caseforge.store.db import RunStore
from caseforge.tracing.spans import from_stored, missing_of
from caseforge.values import FLOAT_KEY, unmark_floats

YIELD_EVERY = 200  # let the judge's tasks and the flusher run between replayed outcomes


class ReplayExecutor(BaseExecutor):
    """Yields, for each task, the outcome ``source_run`` stored for its case and trial."""

    def __init__(self, store: RunStore, source_run: str) -> None:
        self.store = store
        self.source_run = source_run

    async def run(
        self, tasks: Iterator[TrialTask], execute: Callable[[TrialTask], Awaitable[TrialOutcome]]
    ) -> AsyncIterator[TrialOutcome]:
        rows = {(row["case_id"], row["trial"]): row for row in self.store.results(self.source_run)}
        for count, task in enumerate(tasks, 1):
            if self._stopped:
                break
            row = rows.get((task.case.id, task.trial))
            if row is None:  # the plan only asks for stored case-trials
                continue
            outcome = TrialOutcome(task=task, error=row["error"], latency_s=row["latency_s"])
            stored, outcomes_json = row["response_json"], row["outcomes_json"]
            if stored:
                if FLOAT_KEY in stored:  # a NaN or Infinity the agent answered: a float again
                    outcome.result = AgentResult.model_validate(unmark_floats(json.loads(stored)))
                else:
                    outcome.result = AgentResult.model_validate_json(stored)
                if outcomes_json:
                    outcomes = unmark_floats(json.loads(outcomes_json))
                    outcome.outcomes = dict(outcomes) if isinstance(outcomes, dict) else None
            if log_json := row["log_json"]:  # what the agent wrote, kept with the rescored trial
                log = json.loads(log_json)
                outcome.log, outcome.log_dropped = str(log["text"]), int(log["dropped"])
            if fixtures_json := row["fixtures_json"]:
                outcome.fixtures = json.loads(fixtures_json)
            if spans_json := row.get("spans_json"):  # the agent's spans: graded again
                spans, outcome.spans_dropped = from_stored(spans_json)
                outcome.spans = spans or None
                outcome.spans_missing = missing_of(spans_json)
            yield outcome
            if count % YIELD_EVERY == 0:
                await asyncio.sleep(0)
