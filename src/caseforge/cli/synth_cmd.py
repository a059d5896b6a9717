"""``caseforge synth tuples|write`` and ``caseforge review``."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from caseforge.cli.command import App
from caseforge.errors import UsageError

out = Console(highlight=False, soft_wrap=True)
synth_app = App(help="Two-step synthesis: dimension tuples, then one model call each.")
SuiteArg = Annotated[Path, typer.Argument(help="The suite folder.")]
MAX_TUPLES = 100_000  # each becomes a model call and a draft someone reads


@synth_app.command("tuples")
def tuples(
    suite: SuiteArg,
    n: Annotated[int, typer.Option("-n", help="How many tuples (at least).")] = 20,
    seed: Annotated[int, typer.Option(help="Seed for the draw.")] = 7,
    pairwise: Annotated[
        bool, typer.Option(help="Cover every pair of dimension values (may need more than n).")
    ] = False,
) -> None:
    """Draw tuples from dimensions.yaml and compute their expectations with the oracles."""
    from caseforge.synth.tuples import all_pairs, draw_tuples, load_dimensions, pairs_of
    from caseforge.synth.writer import TUPLES_FILE, synth_dir, write_jsonl

    if not 1 <= n <= MAX_TUPLES:
        raise UsageError(f"-n must be from 1 to {MAX_TUPLES:,}, not {n}")
    drawn = draw_tuples(suite, n, seed, pairwise)
    path = synth_dir(suite) / TUPLES_FILE
    write_jsonl(path, drawn)
    wanted = all_pairs(load_dimensions(suite).axes())
    covered = set().union(*(pairs_of(t["tuple"]) for t in drawn)) & wanted
    with_oracle = sum(
        1 for t in drawn if any(isinstance(c, dict) and "oracle" in c for c in t["expect"].values())
    )
    out.print(
        f"wrote {len(drawn)} tuples to {path}: {len(covered)} of {len(wanted)} value pairs "
        f"covered; {with_oracle} with oracle-computed expectations",
        markup=False,
    )


@synth_app.command("write")
def write(
    suite: SuiteArg,
    limit: Annotated[int | None, typer.Option(help="At most this many new drafts.")] = None,
    record: Annotated[
        bool,
        typer.Option("--record", help="Call the model and keep its answers in synth/recordings."),
    ] = False,
    live: Annotated[
        bool, typer.Option("--live", help="Call the model even when recordings exist.")
    ] = False,
) -> None:
    """One model call per tuple writes the ticket; drafts go to the review queue.

    A suite with ``synth/recordings/`` replays them (offline, no key needed) unless --live."""
    from caseforge.synth.client import synth_session
    from caseforge.synth.writer import write_drafts

    if record and live:
        raise UsageError("--record and --live exclude each other")
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    session = synth_session(suite, "synth write", record=record, live=live)
    try:
        drafts = asyncio.run(write_drafts(suite, session.client, limit))
    finally:
        session.finish()
    client = session.client
    flagged = sum(1 for d in drafts if d.near_duplicates)
    spent = (
        "replayed, nothing spent"
        if session.mode == "replay"
        else f"{session.mode}; {client.stats.cost_usd:.4f} USD, "
        f"{client.stats.cache_hits} cache hits"
    )
    out.print(
        f"wrote {len(drafts)} drafts ({spent}); {flagged} flagged as near-duplicates; "
        f"review them with `caseforge review {suite}` or `caseforge serve {suite}`",
        markup=False,
    )


def _edit(text: str) -> str:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.NamedTemporaryFile("w+", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(text)
        name = f.name
    try:
        subprocess.run([*shlex.split(editor), name], check=False)
        return Path(name).read_text(encoding="utf-8")
    finally:
        Path(name).unlink(missing_ok=True)


def review(
    suite: SuiteArg,
    reviewer: Annotated[
        str, typer.Option(help="Your name, kept in the provenance (default: git's user.name).")
    ] = "",
    stats: Annotated[bool, typer.Option("--stats", help="Only print the counts.")] = False,
) -> None:
    """Accept (a), edit in $EDITOR (e), reject with a reason (r), skip (s) or quit (q).

    Each decision is written at once, under the same lock the web app's review screen uses."""
    from caseforge.case.load import require_suite_folder
    from caseforge.errors import CaseforgeError
    from caseforge.synth.review import Decision, decide, review_counts
    from caseforge.synth.writer import load_queue
    from caseforge.vcs import user_name

    require_suite_folder(suite)
    name = reviewer or user_name(suite)
    drafts = load_queue(suite)
    if not stats:
        for draft in [d for d in drafts if d.status == "pending"]:
            out.rule(f"{draft.draft_id} · {draft.tuple}")
            out.print(f"expect: {json.dumps(draft.expect, ensure_ascii=False)}", markup=False)
            if draft.near_duplicates:
                out.print(f"near-duplicate of: {', '.join(draft.near_duplicates)}", markup=False)
            out.print(draft.text, markup=False)
            while True:
                key = str(typer.prompt("[a]ccept [e]dit [r]eject [s]kip [q]uit")).strip().lower()
                if key in ("a", "e", "r", "s", "q"):
                    break
            if key == "q":
                break
            if key == "s":
                continue
            if key == "r":
                decision = Decision("reject", reason=str(typer.prompt("reason")))
            elif key == "e":
                decision = Decision("edit", text=_edit(draft.text))
            else:
                decision = Decision("accept")
            try:
                decided = decide(suite, draft.draft_id, decision, name)
            except CaseforgeError as exc:  # decided in the browser meanwhile, or a bad edit
                out.print(f"not written: {exc.text}", markup=False)
                continue
            if decided.path is not None:
                out.print(f"wrote {decided.path}", markup=False)
        drafts = load_queue(suite)
    counts = review_counts(drafts)
    fixing = counts["needed_fixing"]
    out.print(
        f"{counts['drafts']} drafts: {counts['accepted']} accepted, {counts['edited']} edited, "
        f"{counts['rejected']} rejected, {counts['pending']} pending"
        + (f"; {fixing:.0%} of reviewed drafts needed fixing" if fixing is not None else ""),
        markup=False,
    )
    for reason, count in counts["rejection_reasons"].items():
        out.print(f"  rejected {count}×: {reason}", markup=False)
    for who, by in counts["by_reviewer"].items():
        out.print(
            f"  {who}: {by['accepted']} accepted, {by['edited']} edited, {by['rejected']} rejected",
            markup=False,
        )
