"""``caseforge history``: each case's outcomes across the suite's runs, and flaky cases.

A case is flaky when trials of one run disagree (with one configuration, one dataset). Its
flip rate is the share of adjacent trials within a run whose outcome differs, pooled over
runs; a case that passes under one configuration and fails under another is not flaky.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

from caseforge.store.db import RunStore

LETTER = {"pass": "P", "fail": "F", "error": "E", "incomplete": "I"}


def history(
    store: RunStore, suite: str, case_id: str | None = None, limit: int = 10
) -> dict[str, Any]:
    """Outcomes per case per run (newest first) and the flaky cases."""
    runs = [r for r in store.list_runs(suite, limit=limit)]
    table: dict[str, dict[str, str]] = defaultdict(dict)
    for run in runs:
        per_case: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for row in store.results(run.id):
            if case_id is None or row["case_id"] == case_id:
                per_case[row["case_id"]].append((row["trial"], row["status"]))
        for cid, trials in per_case.items():
            table[cid][run.id] = "".join(LETTER[s] for _, s in sorted(trials))
    flaky: list[dict[str, Any]] = []
    for cid, by_run in table.items():
        flips = pairs = 0
        for letters in by_run.values():
            for x, y in itertools.pairwise(letters):
                pairs += 1
                flips += (x == "P") != (y == "P")
        if flips:
            flaky.append({"case": cid, "flip_rate": flips / pairs, "flips": flips, "pairs": pairs})
    flaky.sort(key=lambda f: (-f["flip_rate"], f["case"]))
    return {
        "suite": suite,
        "runs": [
            {"id": r.id, "config": r.config_name, "created_at": r.created_at, "status": r.status}
            for r in runs
        ],
        "cases": {cid: table[cid] for cid in sorted(table)},
        "flaky": flaky,
    }


def history_text(data: dict[str, Any]) -> str:
    runs = data["runs"]
    if not runs:
        return f"no runs of suite {data['suite']!r} in the store"
    lines = [
        f"history of {data['suite']}: {len(runs)} runs, newest first "
        "(P pass, F fail, E error, I incomplete)"
    ]
    for index, run in enumerate(runs, start=1):
        lines.append(f"  [{index}] {run['id']} {run['config'] or ''} {run['created_at'][:16]}")
    width = max((len(cid) for cid in data["cases"]), default=4)
    for cid, by_run in data["cases"].items():
        cells = [
            by_run.get(run["id"], "-").ljust(max(3, len(by_run.get(run["id"], "")))) for run in runs
        ]
        lines.append(f"  {cid.ljust(width)}  " + "  ".join(cells))
    if data["flaky"]:
        lines.append("flaky (trials of one run disagree):")
        for f in data["flaky"]:
            lines.append(
                f"  {f['case']}: flip rate {f['flip_rate']:.0%} "
                f"({f['flips']} of {f['pairs']} adjacent trials)"
            )
    else:
        lines.append("no flaky case: every run's trials agree")
    return "\n".join(lines)
