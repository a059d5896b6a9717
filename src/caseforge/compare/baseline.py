"""Baselines: a small, reviewable JSON summary of a run, fit to commit next to the suite.

It keeps the run's summary metrics and, per case, the trials' outcomes as letters
(``P`` pass, ``F`` fail, ``E`` error, ``I`` incomplete), the expectations' digest and the
item counts per ``exact_set`` field — what the gate needs to pair a new run against it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from caseforge.compare.outcomes import (
    LETTER_STATUS,
    STATUS_LETTERS,
    CaseOutcome,
    RunOutcomes,
    outcomes_from_report,
)
from caseforge.errors import CaseforgeError
from caseforge.files import write_atomic
from caseforge.stats import ItemCounts

BASELINE_VERSION = 1
METRICS = (
    "cases",
    "case_trials",
    "pass_rate",
    "pass_rate_ci",
    "pass_rate_se",
    "pass_hat_k",
    "pass_at_k",
    "errors",
    "false_positive_rate",
    "items",
    "cost_usd",
    "cost_per_run",
    "cost_per_true_finding",
    "latency_p50_s",
    "latency_p95_s",
)


def baseline_from_report(report: dict[str, Any]) -> dict[str, Any]:
    """The baseline document of a run."""
    outcomes = outcomes_from_report(report)
    cases = {}
    for cid in sorted(outcomes.cases):
        outcome = outcomes.cases[cid]
        entry: dict[str, Any] = {
            "trials": "".join(STATUS_LETTERS[s] for s in outcome.statuses),
            "digest": outcome.digest,
        }
        if outcome.items:
            entry["items"] = {k: [v.tp, v.fp, v.fn] for k, v in sorted(outcome.items.items())}
        cases[cid] = entry
    summary = report["summary"]
    return {
        "caseforge_baseline": BASELINE_VERSION,
        "suite": report["suite"],
        "run_id": report["run_id"],
        "config": report.get("config"),
        "agent": report.get("agent"),
        "dataset_commit": report.get("dataset_commit"),
        "dataset_dirty": report.get("dataset_dirty"),
        "trials": report["trials"],
        "metrics": {k: summary[k] for k in METRICS if k in summary},
        "cases": cases,
    }


def format_baseline(data: dict[str, Any]) -> str:
    """Pretty JSON with one line per case, so a review diff shows one line per changed case."""
    head = {k: v for k, v in data.items() if k != "cases"}
    text = json.dumps(head, ensure_ascii=False, indent=1)[:-2]  # drop the closing "\n}"
    lines = [
        f" {json.dumps(cid, ensure_ascii=False)}: {json.dumps(entry, ensure_ascii=False)}"
        for cid, entry in data["cases"].items()
    ]
    return text + ',\n "cases": {\n' + ",\n".join(lines) + "\n }\n}\n"


def write_baseline(report: dict[str, Any], path: Path) -> dict[str, Any]:
    """Write the baseline of ``report`` to ``path`` (atomically) and return it."""
    data = baseline_from_report(report)
    write_atomic(path, format_baseline(data))
    return data


def load_baseline(path: Path) -> RunOutcomes:
    """Read a committed baseline as per-case outcomes."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaseforgeError(
            f"{path}: baseline not found (make one with `caseforge baseline RUN --write {path}`)"
        ) from None
    except ValueError as exc:
        raise CaseforgeError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("caseforge_baseline") != BASELINE_VERSION:
        raise CaseforgeError(f"{path}: not a caseforge baseline (version {BASELINE_VERSION})")
    cases = {}
    for cid, entry in data["cases"].items():
        try:
            statuses = [LETTER_STATUS[letter] for letter in entry["trials"]]
        except KeyError as exc:
            raise CaseforgeError(f"{path}: case {cid}: unknown trial letter {exc}") from None
        items = {k: ItemCounts(*v) for k, v in entry.get("items", {}).items()}
        cases[cid] = CaseOutcome(statuses=statuses, digest=entry.get("digest"), items=items)
    return RunOutcomes(
        label=f"baseline {data.get('config') or data['run_id']}",
        run_id=data.get("run_id"),
        suite=data["suite"],
        config=data.get("config"),
        trials=int(data["trials"]),
        dataset_commit=data.get("dataset_commit"),
        metrics=data["metrics"],
        cases=cases,
    )
