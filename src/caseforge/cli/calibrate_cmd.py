"""``caseforge label`` and ``caseforge calibrate``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from caseforge.calibrate.labels import AlreadyLabeledError
from caseforge.calibrate.queue import label_tasks, save_label
from caseforge.cli.options import StoreOpt, store_url
from caseforge.errors import UsageError
from caseforge.store.db import RunStore

out = Console(highlight=False, soft_wrap=True)
KEYS = {"c": "conveyed", "m": "missing", "x": "contradicted"}


def _ask(question: str) -> str:
    while True:
        try:
            key = str(typer.prompt(question)).strip().lower()
        except typer.Abort:  # stdin ended (not a terminal, or Ctrl-D)
            raise UsageError(
                "caseforge label reads answers from a terminal, and its input ended: what was "
                "saved is kept; run it in a terminal, or label in the browser (caseforge serve)"
            ) from None
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
    runs = RunStore(store_url(store, suite), read_only=True)
    try:
        run_id = runs.resolve_run(run_ref)
        suite_dir = suite or Path(runs.get_run(run_id).suite_path)
        tasks = label_tasks(runs, run_id, suite_dir)
    finally:
        runs.close()
    labeled = skipped = 0
    for task in tasks:
        out.rule(f"{task.case_id} · trial {task.trial} · {task.check}")
        out.print(f"input: {json.dumps(task.input, ensure_ascii=False)}", markup=False)
        out.print(f"output:\n{task.output}", markup=False)
        labels: dict[str, str] = {}
        for fact in task.facts:
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
        try:
            path = save_label(suite_dir, task, labels, labeler)
        except AlreadyLabeledError as exc:  # in the browser or another terminal, meanwhile
            skipped += 1
            out.print(f"  skipped: {exc.text}", markup=False)
            continue
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
