"""``caseforge run`` and ``caseforge rescore``: the commands that drive agents (or replay them)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn
from rich.table import Table

from caseforge.agent.fixtures import FixtureMode
from caseforge.api.run import RunResult, RunSettings, execute_run
from caseforge.cli.options import StoreOpt
from caseforge.cli.signals import STOP
from caseforge.compare.outcomes import outcomes_from_report
from caseforge.jsontypes import JSONObject
from caseforge.report.build import build_report
from caseforge.report.model import RunReport
from caseforge.report.render import to_text
from caseforge.results import TrialRecord
from caseforge.run.cancel import Cancellation
from caseforge.run.runner import Progress as RunProgress
from caseforge.run.runner import RunHandle
from caseforge.store.db import RunStore, default_store_url
from caseforge.values import pct

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class _Display:
    """Progress on stderr: a live bar on a terminal, a line every few seconds otherwise."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.live = sys.stderr.isatty() and not quiet
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.last_line = 0.0

    def start(self, handles: list[RunHandle], progress: RunProgress) -> None:
        for handle in handles:
            config = f" · config {handle.config_name}" if handle.config_name else ""
            out.print(f"run {handle.run_id}{config} · {len(handle.cases)} cases", markup=False)
        out.print(f"{progress.total_text} case-trials to run", markup=False)
        if self.live:
            self.bar = Progress(
                TextColumn("[progress.description]{task.description}"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TextColumn("{task.fields[status]}"),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("running", total=progress.total, status="")

    def update(self, progress: RunProgress, _record: TrialRecord) -> None:
        status = (
            f"pass {pct(progress.passed / progress.done)} · errors {progress.errors} "
            f"· ${progress.cost_usd:.4f}"
        )
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=progress.done, status=status)
            return
        now = time.monotonic()
        if self.quiet or (now - self.last_line < 5 and progress.done != progress.total):
            return
        self.last_line = now
        eta = progress.eta_s
        eta_text = f" · ETA {eta:.0f}s" if eta is not None else ""
        err.print(f"{progress.done}/{progress.total_text} · {status}{eta_text}", markup=False)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _matrix_table(reports: list[RunReport]) -> Table:
    names = sorted({name for r in reports for name in r.checks})
    table = Table(title="configurations", title_justify="left")
    table.add_column("check")
    for report in reports:
        table.add_column(str(report.config), justify="right")
    totals = [[0, 0] for _ in reports]
    for name in names:
        cells = []
        for index, report in enumerate(reports):
            counts = report.checks.get(name)
            graded = counts.passed + counts.fail if counts else 0
            cells.append(pct(counts.passed / graded) if counts and graded else "–")
            if counts and graded:
                totals[index][0] += counts.passed
                totals[index][1] += graded
        if any(cell != "–" for cell in cells):  # leave out checks nobody graded (ignore, judge)
            table.add_row(name, *cells)
    table.add_section()
    table.add_row("checks passed", *(pct(p / g) if g else "–" for p, g in totals))
    table.add_row("pass rate", *(pct(r.summary.pass_rate) for r in reports))
    table.add_row(
        "fully passing cases",
        *(f"{r.summary.fully_passing_cases}/{r.summary.cases}" for r in reports),
    )
    return table


def run(
    suite: Annotated[Path, typer.Argument(help="The suite folder.")],
    agent: Annotated[
        str | None, typer.Option(help="Override the agent: module:callable, cmd:COMMAND or a URL.")
    ] = None,
    config: Annotated[
        list[str] | None,
        typer.Option("--config", help="Configuration name; repeat for a matrix."),
    ] = None,
    trials: Annotated[int | None, typer.Option(help="Trials per case.")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Case-trials at a time.")] = None,
    split: Annotated[str, typer.Option(help="dev, test or all.")] = "all",
    case: Annotated[list[str] | None, typer.Option("--case", help="Only these case ids.")] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="Only cases with this tag; repeat it for any of several."),
    ] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Write DIR/report.json.")] = None,
    raw: Annotated[
        bool,
        typer.Option("--raw", help="--out's report.json includes each output and tool result."),
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option(
            help="Finish an unfinished run: RUN_ID or `latest` (with the judge setting it began "
            "with: a --no-judge run stays without one)."
        ),
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", help="Stop (resumably) past this many USD.")
    ] = None,
    fixtures: Annotated[
        FixtureMode | None,
        typer.Option(help="record, replay or off (default: replay when fixtures exist)."),
    ] = None,
    no_judge: Annotated[
        bool, typer.Option("--no-judge", help="Skip judge checks on purpose (reported as such).")
    ] = False,
    timeout: Annotated[float | None, typer.Option(help="Seconds per case-trial.")] = None,
    keep_workspaces: Annotated[bool, typer.Option(help="Keep each trial's workspace.")] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Bypass the disk cache of model calls.")
    ] = False,
    reuse_trials: Annotated[
        bool,
        typer.Option(help="Let trials share cached model answers (they stop being samples)."),
    ] = False,
    max_error_rate: Annotated[
        float | None,
        typer.Option(
            "--max-error-rate",
            help="Exit 4 when more than this share of a configuration's case-trials are "
            "agent errors (default: the suite's max_error_rate, 0.1).",
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="No progress and no summary: only the run id, its size and what was written.",
        ),
    ] = False,
    store_url: StoreOpt = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            metavar="I/N",
            help="Run shard I of N (a stable share of the case-trials) of the run --run-id.",
        ),
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id", help="The new run's id (a matrix's group id); every shard names it."
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            help="local; ray: the agent runs on a Ray cluster's workers (RAY_ADDRESS, "
            "or a local one); or an installed executor's name."
        ),
    ] = "local",
    workers: Annotated[
        int | None,
        typer.Option(help="--executor ray: how many workers (default: the cluster's CPUs)."),
    ] = None,
    otlp_listen: Annotated[
        str | None,
        typer.Option(
            "--otlp-listen",
            metavar="HOST:PORT",
            help="Where a command or HTTP agent exports its spans (OTLP/HTTP; default: "
            "loopback, a free port; 0.0.0.0:4318 for a remote agent).",
        ),
    ] = None,
) -> None:
    """Run the agent over the suite: trials, configurations, grading, the run store."""
    given: dict[str, object] = {
        "agent": agent, "configs": config, "trials": trials, "concurrency": concurrency,
        "split": split, "cases": case, "tags": tag, "out": out_dir, "raw": raw or None,
        "resume": resume, "max_cost": max_cost,
        "fixtures": fixtures.value if fixtures is not None else None,
        "judge": False if no_judge else None, "timeout": timeout,
        "keep_workspaces": keep_workspaces or None, "no_cache": no_cache or None,
        "reuse_trials": reuse_trials or None, "max_error_rate": max_error_rate,
        "store": store_url, "shard": shard, "run_id": run_id, "executor": executor,
        "workers": workers, "otlp_listen": otlp_listen,
    }  # fmt: skip
    settings = cast(RunSettings, {k: v for k, v in given.items() if v is not None})
    display = _Display(quiet)
    cancellation = Cancellation()
    try:
        # SIGINT and SIGTERM stop the run (cli/signals.py); Interrupted reaches the
        # command's guard, which prints it and exits 130 or 143.
        with STOP.cancelling(cancellation):
            result = asyncio.run(
                execute_run(
                    suite,
                    settings,
                    cancellation=cancellation,
                    on_start=display.start,
                    on_result=display.update,
                )
            )
    finally:
        display.stop()
    _show(result, quiet)
    if result.error is not None:
        raise result.error


def _show(result: RunResult, quiet: bool) -> None:
    """What `caseforge run` prints once the run is over (the library returned it)."""
    outcome, reports = result.outcome, result.reports
    if not quiet:
        for line in result.shards:
            out.print(line, markup=False)
    for warning in result.warnings:
        err.print(f"warning: {warning}", markup=False)
    if result.written is not None:
        what = "report.json" if len(reports) == 1 else "*/report.json"
        out.print(f"wrote {result.written}/{what}", markup=False)
    if not quiet:
        for report in reports:
            out.print(to_text(report), markup=False)
        if len(reports) > 1:  # a matrix: the configurations paired (NumPy and SciPy load)
            from caseforge.compare.pairing import compare_runs, comparison_text

            out.print(_matrix_table(reports))
            first = outcomes_from_report(reports[0])
            for other in reports[1:]:
                comparison = compare_runs(first, outcomes_from_report(other))
                out.print(comparison_text(comparison), markup=False)
    if outcome.pool is not None and not quiet:
        out.print(pool_line(outcome.pool), markup=False)
    if outcome.skipped:
        out.print(f"resumed: {outcome.skipped} case-trials were already stored", markup=False)


def pool_line(pool: JSONObject) -> str:
    """What the executor's workers did: how many, and what was lost with any that died (an
    executor of another package that reports other keys is shown as it reports them)."""
    if "workers" not in pool or "address" not in pool:
        return "executor: " + ", ".join(f"{key} {value}" for key, value in pool.items())
    line = f"ray: {pool['workers']} worker(s) at {pool['address']}"
    if pool.get("lost_workers"):
        line += (
            f"; {pool['lost_workers']} died: {pool['retried']} case-trial(s) in flight on them "
            f"ran again on another worker, {pool['lost_twice']} were lost twice (stored as "
            f"errors); the lost attempts spent ${pool['lost_usd']:.4f} through ctx.llm()"
        )
    else:
        line += "; none died"
    if pool.get("limited_calls"):
        line += (
            f"; rate_limit: let {pool['limited_calls']} model call(s) through, "
            f"waiting {pool['limit_waited_s']:.1f} s in all"
        )
    return line


def rescore_cmd(
    run_ref: Annotated[
        str, typer.Argument(metavar="RUN", help="The stored run to re-grade (or `latest`).")
    ],
    no_judge: Annotated[
        bool, typer.Option("--no-judge", help="Skip judge checks on purpose.")
    ] = False,
    suite: Annotated[
        Path | None, typer.Option(help="Suite folder (default: where the run was made).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
    store_url: StoreOpt = None,
) -> None:
    """Re-grade a run's stored outputs with today's expectations; store it as a new run."""
    from caseforge.run.rescore import rescore

    store = RunStore(
        store_url or (default_store_url(suite) if suite is not None else None), create=False
    )
    try:
        run_id = store.resolve_run(run_ref)
        done = asyncio.run(rescore(store, run_id, "off" if no_judge else "auto", suite_dir=suite))
        report = build_report(store, done.run_id)
    finally:
        store.close()
    out.print(
        f"run {done.run_id} · rescored from {done.source_run_id} · {done.graded} case-trials",
        markup=False,
    )
    if done.skipped_cases:
        out.print(
            f"left out (no longer in the suite): {', '.join(done.skipped_cases)}", markup=False
        )
    if not quiet:
        out.print(to_text(report), markup=False)
