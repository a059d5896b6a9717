"""Building ``report.json`` for a stored run, and loading a run from an id or a file."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from caseforge.case.model import Case
from caseforge.errors import CaseforgeError
from caseforge.report.summary import summarize
from caseforge.results import TrialRecord, iter_records
from caseforge.store.db import RunStore

SCHEMA_VERSION = 1


def expect_digest(case: Case) -> str:
    """A short hash of a case's expectations: tells two runs whether the case changed."""
    data = {k: v.model_dump(mode="json", exclude_defaults=True) for k, v in case.expect.items()}
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def build_report(store: RunStore, run_id: str) -> dict[str, Any]:
    """The full report of a run: metadata, ``summary``, ``checks`` and ``cases``."""
    info = store.get_run(run_id)
    cases = {cid: Case.model_validate(data) for cid, data in store.cases(run_id).items()}
    responses = {(r["case_id"], r["trial"]): r for r in store.results(run_id)}
    records = list(iter_records(store, run_id))
    summary = summarize(records, cases, info.trials)
    checks = summary.pop("checks")
    per_case: dict[str, list[TrialRecord]] = defaultdict(list)
    for record in records:
        per_case[record.case_id].append(record)
    case_entries = []
    for case_id in sorted(cases):
        case = cases[case_id]
        trials = []
        for record in per_case.get(case_id, []):
            raw = responses[(case_id, record.trial)].get("response_json")
            response = json.loads(raw) if raw else None
            trials.append(
                {
                    "trial": record.trial,
                    "status": record.status.value,
                    "error": record.error,
                    "latency_s": record.latency_s,
                    "cost_usd": record.cost_usd,
                    "reply": response.get("reply") if response else None,
                    "paused_for_approval": bool(response and response.get("paused_for_approval")),
                    "checks": [c.to_json() for c in record.checks],
                }
            )
        case_entries.append(
            {
                "id": case_id,
                "expect_digest": expect_digest(case),
                "category": case.category(),
                "split": case.split,
                "source": case.source,
                "tags": case.tags,
                "input": case.input,
                "passed": sum(1 for t in trials if t["status"] == "pass"),
                "trials": trials,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": info.id,
        "group_id": info.group_id,
        "suite": info.suite,
        "suite_path": info.suite_path,
        "status": info.status,
        "created_at": info.created_at,
        "finished_at": info.finished_at,
        "dataset_commit": info.dataset_commit,
        "dataset_dirty": info.dataset_dirty,
        "agent": info.agent,
        "config": info.config_name,
        "config_values": info.config,
        "trials": info.trials,
        "split": info.split,
        "caseforge_version": info.caseforge_version,
        "options": info.options,
        "summary": summary,
        "checks": checks,
        "cases": case_entries,
    }


def load_report(run: str, store_url: str | None = None) -> dict[str, Any]:
    """A report from a run id in the store, or from a path to a ``report.json``."""
    path = Path(run)
    if path.suffix == ".json" or path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CaseforgeError(f"{path}: file not found") from None
        except ValueError as exc:
            raise CaseforgeError(f"{path}: not a JSON report: {exc}") from None
        if not isinstance(data, dict) or "schema_version" not in data:
            raise CaseforgeError(f"{path}: not a caseforge report (no schema_version)")
        return data
    store = RunStore(store_url)
    try:
        if run == "latest":
            latest = store.list_runs(limit=1)
            if not latest:
                raise CaseforgeError(f"no runs in the store {store.url}")
            run = latest[0].id
        return build_report(store, run)
    finally:
        store.close()


def report_schema() -> dict[str, Any]:
    """The JSON Schema of report.json (shipped with the package)."""
    from importlib.resources import files

    text = files("caseforge.report").joinpath("report.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
