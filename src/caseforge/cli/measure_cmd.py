"""``caseforge compare``, ``baseline``, ``gate``, ``history`` and ``plan``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from caseforge.api import gate_run
from caseforge.case.load import load_config, require_suite_folder
from caseforge.cli.options import StoreOpt, StoreSuiteOpt, output_file, store_url
from caseforge.compare.annotate import github_annotations, github_summary, gitlab_code_quality
from caseforge.compare.baseline import write_baseline
from caseforge.compare.gate import GateResult, gate_junit, gate_markdown, gate_text
from caseforge.compare.history import history, history_text
from caseforge.compare.outcomes import outcomes_from_report, refuse_other_suite
from caseforge.compare.pairing import compare_runs, comparison_text
from caseforge.errors import UsageError
from caseforge.files import write_atomic
from caseforge.report.build import load_report, require_finished
from caseforge.stats import (
    half_width,
    mde_paired,
    mde_unpaired,
    sample_size_mcnemar_exact,
    sample_size_paired,
    sample_size_unpaired,
)
from caseforge.store.db import RunStore, default_store_url
from caseforge.values import pct

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
RunArg = Annotated[str, typer.Argument(help="Run id, `latest`, or a report.json path.")]


def compare(
    run_a: Annotated[str, typer.Argument(metavar="RUN_A", help="The earlier run.")],
    run_b: Annotated[str, typer.Argument(metavar="RUN_B", help="The later run.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Compare runs of two different suites anyway.")
    ] = False,
    suite: StoreSuiteOpt = None,
    store: StoreOpt = None,
) -> None:
    """Pair two runs case by case: newly passing/failing, McNemar or paired t, the MDE."""
    url = store_url(store, suite)
    a = outcomes_from_report(load_report(run_a, url))
    b = outcomes_from_report(load_report(run_b, url))
    for warning in refuse_other_suite(a, b, force):
        err.print(warning, markup=False)
    result = compare_runs(a, b)
    if a.run_id is not None and a.run_id == b.run_id:
        why = (
            ": nothing can differ"
            if result.same_run
            else ", read at two moments (a report.json from before a --resume?)"
        )
        err.print(f"warning: both sides are run {a.run_id}{why}", markup=False)
    if as_json:
        print(result.to_result().model_dump_json(indent=2))
    else:
        out.print(comparison_text(result), markup=False)


def baseline(
    run: RunArg,
    write: Annotated[Path, typer.Option("--write", help="The baseline file to write.")],
    suite: StoreSuiteOpt = None,
    store: StoreOpt = None,
) -> None:
    """Write a small, reviewable JSON baseline of a run, fit to commit."""
    output_file(write, "--write")
    report = require_finished(load_report(run, store_url(store, suite)), "writing a baseline")
    data = write_baseline(report, write)
    out.print(
        f"wrote {write}: {len(data.cases)} cases × {data.trials} trials, "
        f"pass rate {pct(report.summary.pass_rate)} (run {data.run_id})",
        markup=False,
    )


def gate(
    run: RunArg,
    baseline_file: Annotated[Path, typer.Option("--baseline", help="A committed baseline.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="text, md, junit, github (annotations at the newly failing cases, and the "
            "job summary to $GITHUB_STEP_SUMMARY and --out) or gitlab (Code Quality JSON).",
        ),
    ] = "text",
    suite: Annotated[
        Path | None,
        typer.Option(help="Suite folder for the rules and the store (default: the run's)."),
    ] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write to FILE.")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Gate against another suite's baseline anyway.")
    ] = False,
    store: StoreOpt = None,
) -> None:
    """Apply the suite's gate rules to a run against a baseline; exit 1 only on regression."""
    report = load_report(run, store_url(store, suite))  # gate_run refuses an unfinished one
    renderers: dict[str, Callable[[GateResult], str]] = {
        "text": lambda r: gate_text(r) + "\n",
        "md": gate_markdown,
        "junit": gate_junit,
        # The log shows the annotations (GitHub reads them there) and the verdict.
        "github": lambda r: github_annotations(r) + gate_text(r) + "\n",
        "gitlab": gitlab_code_quality,
    }
    if fmt not in renderers:
        raise UsageError(f"--format must be one of {', '.join(renderers)}, not {fmt!r}")
    if as_json and fmt != "text":
        raise UsageError(f"give --json or --format {fmt}, not both")
    output_file(out_file, "--out")
    result = gate_run(report, baseline_file, suite=suite, force=force)
    text = result.model_dump_json(indent=2) + "\n" if as_json else renderers[fmt](result)
    sys.stdout.write(text)
    written = text
    if fmt == "github":  # the job summary: GitHub's file for it, and --out (a PR comment)
        written = github_summary(result)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as step_summary:
                step_summary.write(written)
    if out_file is not None:
        write_atomic(out_file, written)
    raise typer.Exit(result.exit_code)


def history_cmd(
    suite: Annotated[Path, typer.Argument(help="The suite folder.")],
    case_id: Annotated[str | None, typer.Argument(metavar="[CASE]", help="One case.")] = None,
    limit: Annotated[int, typer.Option(help="How many recent runs.")] = 10,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    store_url: StoreOpt = None,
) -> None:
    """Each case's outcomes across runs and trials, and the flaky cases with their flip rate."""
    name = load_config(suite).name
    store = RunStore(store_url or default_store_url(suite))
    try:
        result = history(store, name, case_id, limit)
    finally:
        store.close()
    if as_json:
        print(result.model_dump_json(indent=2))
    else:
        out.print(history_text(result), markup=False)


def plan(
    p: Annotated[float, typer.Option("--p", help="The pass rate you expect (0–1).")],
    delta: Annotated[float, typer.Option("--delta", help="The difference to detect (0–1).")],
    paired: Annotated[bool, typer.Option("--paired", help="Two agents on the same cases.")] = False,
    discordance: Annotated[
        float, typer.Option(help="Paired: share of cases whose outcome differs (ψ).")
    ] = 0.15,
    alpha: Annotated[float, typer.Option(help="Two-sided significance level.")] = 0.05,
    power: Annotated[float, typer.Option(help="Power.")] = 0.8,
    suite: Annotated[
        Path | None, typer.Option(help="Also print the MDE for this suite's size.")
    ] = None,
    n: Annotated[int | None, typer.Option("--n", help="Also print the MDE for N cases.")] = None,
) -> None:
    """How many cases a difference needs, and what the suite's size can detect."""
    if not (0 < p < 1 and 0 < delta < 1):
        raise UsageError("--p and --delta must be between 0 and 1")
    if n is not None and n < 2:
        raise UsageError(f"--n must be 2 or more cases, not {n}")
    if n is not None and suite is not None:
        raise UsageError("give --n or --suite, not both (the suite's size is its N)")
    if not paired and discordance != 0.15:
        raise UsageError("--discordance is for --paired; an unpaired plan does not use it")
    for name, value in (("--alpha", alpha), ("--power", power), ("--discordance", discordance)):
        if not 0 < value < 1:
            raise UsageError(f"{name} must be between 0 and 1, not {value:g}")
    if suite is not None:
        require_suite_folder(suite)  # before anything is printed
    try:
        if paired:
            need = sample_size_paired(delta, discordance, alpha, power)
            exact = sample_size_mcnemar_exact(delta, discordance, alpha, power)
            out.print(
                f"paired (same cases, ψ = {discordance:.0%}): {need} cases by Connor's formula; "
                f"the exact McNemar test is conservative and first reaches {power:.0%} power "
                f"at {exact} cases",
                markup=False,
            )
        else:
            need = sample_size_unpaired(p, delta, alpha, power)
            out.print(
                f"unpaired (two runs on different cases): {need} cases per run to tell "
                f"{p:.0%} from {p - delta:.0%} (α = {alpha:g}, power {power:.0%})",
                markup=False,
            )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    size = n
    if suite is not None:
        from caseforge.case.load import load_suite

        size = len(load_suite(suite).cases)
    if size:
        mde = (
            mde_paired(size, discordance, alpha, power)
            if paired
            else mde_unpaired(p, size, alpha, power)
        )
        detect = "n/a (too few cases)" if mde != mde else f"{mde:.1%}"
        out.print(
            f"with {size} cases: smallest detectable difference ≈ {detect}; "
            f"95% half-width of a {p:.0%} pass rate ±{half_width(p, size):.1%}",
            markup=False,
        )
