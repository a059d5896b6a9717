"""``caseforge run``, ``caseforge report`` and ``caseforge runs``."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn
from rich.table import Table

from caseforge.agent.fixtures import FixtureMode
from caseforge.case.load import load_config, require_suite_folder
from caseforge.cli.options import StoreOpt, StoreSuiteOpt, output_file, output_folder, store_url
from caseforge.cli.signals import STOP
from caseforge.compare.digest import save_digest
from caseforge.compare.outcomes import outcomes_from_report
from caseforge.compare.pairing import compare_runs, comparison_text
from caseforge.errors import BudgetExceeded, TooManyAgentErrors, UsageError
from caseforge.files import write_all_atomic, write_atomic
from caseforge.jsontypes import JSONObject
from caseforge.report.build import build_report, load_report
from caseforge.report.model import RunReport
from caseforge.report.render import FORMATS, to_text
from caseforge.report.show import trial_text, trial_view
from caseforge.results import TrialRecord
from caseforge.run.cancel import Cancellation
from caseforge.run.plan import Shard
from caseforge.run.runner import Progress as RunProgress
from caseforge.run.runner import RunHandle, Runner, RunOptions
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
        str | None, typer.Option(help="Finish an unfinished run: RUN_ID or `latest`.")
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
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress, no report.")] = False,
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
            help="local, or ray: the agent runs on the workers of a Ray cluster (RAY_ADDRESS, "
            "or a local one)."
        ),
    ] = "local",
    workers: Annotated[
        int | None,
        typer.Option(help="--executor ray: how many workers (default: the cluster's CPUs)."),
    ] = None,
) -> None:
    """Run the agent over the suite: trials, configurations, grading, the run store."""
    if max_error_rate is not None and not 0 <= max_error_rate <= 1:
        raise UsageError(f"--max-error-rate must be from 0 to 1, not {max_error_rate:g}")
    options = RunOptions(
        suite_dir=suite,
        agent=agent,
        configs=list(config or []),
        trials=trials,
        concurrency=concurrency,
        split=split,
        case_ids=list(case or []),
        tags=list(tag or []),
        resume=resume,
        max_cost=max_cost,
        fixtures=fixtures,
        judge="off" if no_judge else "auto",
        timeout_s=timeout,
        keep_workspaces=keep_workspaces,
        no_cache=no_cache,
        reuse_trials=reuse_trials,
        shard=Shard.parse(shard) if shard is not None else None,
        run_id=run_id,
        executor=executor,
        workers=workers,
    )
    load_config(suite)  # not a suite: say so before a store is made beside it
    output_folder(out_dir, "--out")  # before anything runs or is recorded
    store = RunStore(store_url or default_store_url(suite))
    display = _Display(quiet)
    cancellation = Cancellation()
    runner = Runner(
        options,
        store,
        on_start=display.start,
        on_result=display.update,
        cancellation=cancellation,
    )
    try:
        # SIGINT and SIGTERM stop the run (cli/signals.py); Interrupted reaches the
        # command's guard, which prints it and exits 130 or 143.
        with STOP.cancelling(cancellation):
            outcome = asyncio.run(runner.run())
    finally:
        display.stop()
    reports = [build_report(store, h.run_id, raw) for h in outcome.runs]
    for report in reports:
        save_digest(store, report)  # what `caseforge serve` opens the run with
    if options.shard is not None and not quiet:
        for handle in outcome.runs:
            ledger = store.shards(handle.run_id)
            finished = sum(1 for row in ledger if row["status"] == "finished")
            out.print(
                f"shard {options.shard} of run {handle.run_id}: {outcome.status}; "
                f"{finished} of {options.shard.count} shard(s) finished, the run is "
                f"{store.get_run(handle.run_id).status}",
                markup=False,
            )
    store.close()
    identity = reports[0].suite_identity if reports else None
    if identity is not None and identity.root_commit is None:
        err.print(
            f"warning: {suite} is not in a git repository (or one with no commit yet), so the "
            f"run knows its suite by the name {identity.name!r} alone; compare and gate cannot "
            "tell it from another suite of that name",
            markup=False,
        )
    if out_dir is not None:
        write_all_atomic(
            {
                (out_dir if len(reports) == 1 else out_dir / str(r.config)) / "report.json": (
                    FORMATS["json"](r)
                )
                for r in reports
            }
        )
        out.print(f"wrote {out_dir}/" + ("report.json" if len(reports) == 1 else "*/report.json"))
    if not quiet:
        for report in reports:
            out.print(to_text(report), markup=False)
        if len(reports) > 1:
            out.print(_matrix_table(reports))
            first = outcomes_from_report(reports[0])
            for other in reports[1:]:
                comparison = compare_runs(first, outcomes_from_report(other))
                out.print(comparison_text(comparison), markup=False)
    if outcome.pool is not None and not quiet:
        out.print(pool_line(outcome.pool), markup=False)
    if outcome.skipped:
        out.print(f"resumed: {outcome.skipped} case-trials were already stored", markup=False)
    if outcome.status == "stopped":
        raise BudgetExceeded(f"stopped: {outcome.stop_reason}")
    limit = max_error_rate if max_error_rate is not None else outcome.suite.config.max_error_rate
    for report in reports:
        graded = [t for case in report.cases for t in case.trials]
        errors = sum(t.agent_error for t in graded)
        if graded and errors / len(graded) > limit:
            raise TooManyAgentErrors(
                f"{errors} of {len(graded)} case-trials"
                f"{f' of config {report.config}' if report.config else ''} were agent errors "
                f"({errors / len(graded):.0%} > {limit:.0%}, --max-error-rate): "
                f"see `caseforge report {report.run_id}`"
            )


def pool_line(pool: JSONObject) -> str:
    """What the Ray workers did: how many, and what was lost with any that died."""
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


def merge(
    reports: Annotated[
        list[Path], typer.Argument(metavar="REPORT...", help="Each shard's report.json.")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Write DIR/report.json.")],
    suite: Annotated[
        Path | None,
        typer.Option(
            "--suite", help="The suite the shards ran (default: the one the reports name)."
        ),
    ] = None,
) -> None:
    """Combine the reports of a run's shards (--shard I/N, each in its own store) into one."""
    from caseforge.report.merge import merge_reports

    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir}: is a file; name a folder for report.json")
    if suite is not None:
        require_suite_folder(suite)
    merged = merge_reports(reports, suite)
    target = out_dir / "report.json"
    write_all_atomic({target: FORMATS["json"](merged)})
    s = merged.summary
    out.print(
        f"merged {len(merged.shards)} shard(s) of run {merged.run_id}: {s.case_trials} "
        f"case-trials, pass rate {pct(s.pass_rate)}, {merged.status.value}; wrote {target}",
        markup=False,
    )


def report(
    run_ref: Annotated[
        str, typer.Argument(metavar="RUN", help="Run id, `latest`, or report.json.")
    ],
    fmt: Annotated[str, typer.Option("--format", help="text, json, md, junit or html.")] = "text",
    out_file: Annotated[Path | None, typer.Option("--out", help="Write to FILE.")] = None,
    raw: Annotated[
        bool,
        typer.Option("--raw", help="Include each agent output and tool-call result (JSON, HTML)."),
    ] = False,
    suite: StoreSuiteOpt = None,
    store: StoreOpt = None,
) -> None:
    """Render a stored run (or a report.json) as text, JSON, Markdown, JUnit XML or HTML."""
    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    output_file(out_file, "--out")
    text = FORMATS[fmt](load_report(run_ref, store_url(store, suite), raw))
    if out_file is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        write_atomic(out_file, text)
        out.print(f"wrote {out_file}", markup=False)


def show(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="Run id or `latest`.")],
    case_id: Annotated[
        str | None, typer.Argument(metavar="[CASE]", help="Case id (default: the first failing).")
    ] = None,
    trial: Annotated[
        int | None, typer.Option(help="Trial number (default: the first failing).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    suite: StoreSuiteOpt = None,
    store: StoreOpt = None,
) -> None:
    """Print one case-trial whole: input, output, reply, tool calls, every check, the error."""
    runs = RunStore(store_url(store, suite), read_only=True)
    try:
        view = trial_view(runs, runs.resolve_run(run_ref), case_id, trial)
    finally:
        runs.close()
    print(view.model_dump_json(indent=2) if as_json else trial_text(view))


def runs(
    suite_ref: Annotated[
        str | None, typer.Argument(metavar="[SUITE]", help="The suite folder (or its name).")
    ] = None,
    limit: Annotated[int, typer.Option(help="How many.")] = 20,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    store_url: StoreOpt = None,
) -> None:
    """List the newest runs in the store (a suite's, given its folder)."""
    suite_name, start = suite_ref, None
    if suite_ref is not None and (Path(suite_ref) / "caseforge.yaml").is_file():
        suite_name, start = load_config(Path(suite_ref)).name, Path(suite_ref)
    elif suite_ref is not None:
        err.print(
            f"warning: {suite_ref!r} is not a suite folder; reading it as a suite name "
            "(give the folder: `caseforge runs path/to/suite`)",
            markup=False,
        )
    try:
        store = RunStore(store_url or default_store_url(start), read_only=True)
    except UsageError as exc:  # no store file yet: nothing to list, and none is made
        if "there is no store file yet" not in exc.text:
            raise
        print("[]" if as_json else exc.text)
        return
    infos = store.list_runs(suite_name, limit)
    counts = {i.id: store.count(i.id) for i in infos}
    store.close()
    if as_json:
        listed = [
            {
                **i.__dict__,
                "suite_identity": i.suite_identity.model_dump() if i.suite_identity else None,
                "case_trials": counts[i.id],
            }
            for i in infos
        ]
        print(json.dumps(listed, indent=2))
        return
    rows = [("run", "suite", "config", "status", "case-trials", "created")]
    rows += [
        (i.id, i.suite, i.config_name or "-", i.status, str(counts[i.id]), i.created_at[:19])
        for i in infos
    ]
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    for row in rows:  # plain columns: greppable, and never cut short in a narrow terminal
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


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
