"""``caseforge label`` and ``caseforge calibrate``."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from caseforge.calibrate.labels import LabeledOutput, load_labels, save_item
from caseforge.case.load import load_suite
from caseforge.checks import JudgeCheck
from caseforge.cli.options import StoreOpt, store_url
from caseforge.errors import UsageError
from caseforge.store.db import RunStore

out = Console(highlight=False, soft_wrap=True)
KEYS = {"c": "conveyed", "m": "missing", "x": "contradicted"}


def _ask(question: str) -> str:
    while True:
        key = str(typer.prompt(question)).strip().lower()
        if key in ("c", "m", "x", "s", "q"):
            return key
        out.print("  answer c, m, x, s or q")


def label(
    run_ref: Annotated[
        str, typer.Argument(metavar="RUN", help="The run whose outputs to label (or `latest`).")
    ],
    suite: Annotated[
        Path | None, typer.Option(help="Suite folder and its store (default: the run's).")
    ] = None,
    labeler: Annotated[str, typer.Option(help="Your name, kept with each label.")] = "",
    store: StoreOpt = None,
) -> None:
    """Label agent outputs fact by fact, saved to SUITE/labels/ as you go (resumable).

    Keys: c conveyed, m missing, x contradicted, s skip the output, q quit.
    """
    runs = RunStore(store_url(store, suite), create=False)
    try:
        run_id = runs.resolve_run(run_ref)
        info = runs.get_run(run_id)
        rows = list(runs.results(run_id))
    finally:
        runs.close()
    suite_dir = suite or Path(info.suite_path)
    cases = {c.case.id: c.case for c in load_suite(suite_dir).cases}
    done = {(cl.case, item.digest()) for cl in load_labels(suite_dir) for item in cl.items}
    labeled = skipped = 0
    for row in rows:
        case = cases.get(row["case_id"])
        if case is None or not row["response_json"]:
            continue
        response = json.loads(row["response_json"])
        for name, check in case.expect.items():
            if not isinstance(check, JudgeCheck) or not check.values:
                continue
            value = (
                response.get("reply")
                if (check.field or "reply") == "reply"
                else response.get("output", {}).get(check.field)
            )
            if not isinstance(value, str) or not value.strip():
                continue
            item_digest = LabeledOutput(check=name, output=value, labels={}).digest()
            if (case.id, item_digest) in done:
                continue
            out.rule(f"{case.id} · trial {row['trial']} · {name}")
            out.print(f"input: {json.dumps(case.input, ensure_ascii=False)}", markup=False)
            out.print(f"output:\n{value}", markup=False)
            labels: dict[str, Any] = {}
            for fact in check.values:
                key = _ask(f"  {fact} [c/m/x, s skip, q quit]")
                if key == "q":
                    out.print(f"saved {labeled} labeled output(s); run again to go on")
                    return
                if key == "s":
                    labels = {}
                    break
                labels[fact] = KEYS[key]
            if not labels:
                skipped += 1
                continue
            item = LabeledOutput(
                check=name,
                output=value,
                source={"run": run_id, "trial": row["trial"], "config": info.config_name},
                labeler=labeler,
                labeled_at=dt.date.today(),
                labels=labels,
            )
            path = save_item(suite_dir, case.id, item)
            done.add((case.id, item_digest))
            labeled += 1
            out.print(f"  saved to {path}", markup=False)
    out.print(f"done: {labeled} labeled, {skipped} skipped; nothing left to label in {run_id}")


def calibrate_cmd(
    suite: Annotated[Path, typer.Argument(help="The suite folder.")],
    record: Annotated[
        bool, typer.Option("--record", help="Call the endpoint and record its answers.")
    ] = False,
    live: Annotated[
        bool, typer.Option("--live", help="Call the endpoint, record nothing.")
    ] = False,
    no_probes: Annotated[bool, typer.Option("--no-probes", help="Skip the bias probes.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Judge–human agreement, Cohen's κ, the confusion matrix, disagreements, bias probes."""
    if record and live:
        raise UsageError("--record and --live exclude each other")
    from caseforge.calibrate.calibrate import calibrate, calibration_text

    result = asyncio.run(calibrate(suite, record=record, live=live, probes=not no_probes))
    if as_json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        out.print(calibration_text(result), markup=False)
