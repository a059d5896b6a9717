"""What is left to label in a run: each stored output of a judge check with facts that no
one has labeled yet. ``caseforge label`` and the web app's label screen both read it, and
both save through :func:`save_label`, so they write the same files."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from caseforge.calibrate.labels import (
    VERDICTS,
    LabeledOutput,
    LabelVerdict,
    is_label_verdict,
    load_labels,
    save_item,
)
from caseforge.case.load import load_suite
from caseforge.checks import JudgeCheck
from caseforge.errors import UsageError
from caseforge.store.db import RunStore


@dataclass(frozen=True)
class LabelTask:
    """One agent output to label fact by fact."""

    run_id: str
    config: str | None
    case_id: str
    trial: int
    check: str
    facts: list[str]
    output: str
    input: dict[str, object]

    @property
    def digest(self) -> str:
        return LabeledOutput(check=self.check, output=self.output, labels={}).digest()


def label_tasks(
    store: RunStore,
    run_id: str,
    suite_dir: Path | None = None,
    problems: list[str] | None = None,
) -> list[LabelTask]:
    """The run's outputs still to label, in stored order (one per case, check and output).
    With ``problems``, a labels file that cannot be read is named there (its outputs are
    offered again) instead of stopping the queue."""
    info = store.get_run(run_id)
    folder = suite_dir or Path(info.suite_path)
    cases = {c.case.id: c.case for c in load_suite(folder).cases}
    labels = load_labels(folder, problems)
    done = {(cl.case, item.digest()) for cl in labels for item in cl.items}
    tasks: list[LabelTask] = []
    for row in store.results(run_id):
        case = cases.get(row["case_id"])
        if case is None or not row["response_json"]:
            continue
        response = json.loads(row["response_json"])
        for name, check in case.expect.items():
            if not isinstance(check, JudgeCheck) or not check.values:
                continue
            field = check.field or "reply"
            value = (
                response.get("reply") if field == "reply" else response.get("output", {}).get(field)
            )
            if not isinstance(value, str) or not value.strip():
                continue
            task = LabelTask(
                run_id, info.config_name, case.id, row["trial"], name, list(check.values),
                value, case.input,
            )  # fmt: skip
            if (case.id, task.digest) in done:
                continue
            done.add((case.id, task.digest))  # the same output twice is labeled once
            tasks.append(task)
    return tasks


def save_label(suite_dir: Path, task: LabelTask, labels: dict[str, str], labeler: str) -> Path:
    """Save a person's verdict on each fact of ``task`` into ``SUITE/labels/``."""
    unknown = set(labels) - set(task.facts)
    if unknown:
        raise UsageError(f"not a fact of {task.case_id}.{task.check}: {sorted(unknown)[0]!r}")
    verdicts: dict[str, LabelVerdict] = {}
    for fact, label in labels.items():
        if not is_label_verdict(label):
            bad = sorted(v for v in labels.values() if not is_label_verdict(v))[0]
            raise UsageError(f"a label is one of {', '.join(VERDICTS)}, not {bad!r}")
        verdicts[fact] = label
    if not labels:
        raise UsageError("label at least one fact")
    item = LabeledOutput(
        check=task.check,
        output=task.output,
        source={"run": task.run_id, "trial": task.trial, "config": task.config},
        labeler=labeler,
        labeled_at=dt.date.today(),
        labels=verdicts,
    )
    return save_item(suite_dir, task.case_id, item)
