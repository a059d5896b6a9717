"""The dataset commands: ``schema``, ``validate``, ``split``, ``retire`` and ``init``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from caseforge.case.fix import fix_suite
from caseforge.case.model import case_json_schema
from caseforge.case.retire import retire_case
from caseforge.case.split import split_changes, write_split
from caseforge.case.validate import ValidationReport, validate_suite
from caseforge.errors import UsageError

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

SuiteArg = Annotated[Path, typer.Argument(help="The suite folder (holds caseforge.yaml).")]


def schema(
    report: Annotated[
        bool, typer.Option("--report", help="The schema of report.json instead.")
    ] = False,
    config: Annotated[
        bool, typer.Option("--config", help="The schema of caseforge.yaml instead.")
    ] = False,
    suite: Annotated[
        Path | None,
        typer.Option(help="Include this suite's own check modes (its `checks:` module)."),
    ] = None,
) -> None:
    """Print the JSON Schema of a case file (point your editor's YAML plugin at it)."""
    from caseforge.case.load import load_config, suite_modes
    from caseforge.case.suite import config_json_schema
    from caseforge.checks import mode_table
    from caseforge.report.build import report_schema

    if report and config:
        raise UsageError("give --report or --config, not both")
    if (report or config) and suite is not None:
        which = "--report" if report else "--config"
        raise UsageError(f"--suite adds a suite's check modes to the case schema; not with {which}")
    if report:
        data = report_schema()
    elif config:
        data = config_json_schema()
    else:
        modes = mode_table() if suite is None else suite_modes(suite, load_config(suite))
        data = case_json_schema(modes)
    print(json.dumps(data, indent=2, ensure_ascii=False))


def _distribution_table(title: str, rows: dict[str, dict[str, int]]) -> Table:
    columns = ["dev", "test"] + (
        ["unassigned"] if any(r.get("unassigned") for r in rows.values()) else []
    )
    table = Table(title=title, title_justify="left")
    table.add_column("category")
    for column in columns:
        table.add_column(column, justify="right")
    table.add_column("total", justify="right")
    totals = dict.fromkeys(columns, 0)
    for category, row in rows.items():
        for column in columns:
            totals[column] += row.get(column, 0)
        table.add_row(
            category,
            *(str(row.get(c, 0)) for c in columns),
            str(sum(row.get(c, 0) for c in columns)),
        )
    table.add_section()
    table.add_row("all", *(str(totals[c]) for c in columns), str(sum(totals.values())))
    return table


def _print_validation(report: ValidationReport, strict: bool) -> None:
    for problem in report.errors:
        err.print(problem.format(), markup=False)
    for problem in report.shown_warnings():
        err.print(f"warning: {problem.format()}", markup=False)
    hidden = report.hidden_pairs()
    if hidden:
        err.print(
            f"warning: and {hidden:,} more near-duplicate pairs; `validate --json` lists them",
            markup=False,
        )
    out.print(f"suite [bold]{report.suite}[/bold]: {report.cases} cases ({report.suite_dir})")
    if report.distribution:
        out.print(_distribution_table("category × split", report.distribution))
    if report.sources:
        out.print("sources: " + " · ".join(f"{k} {v}" for k, v in report.sources.items()))
    if report.oracle_checks:
        drift = sum(1 for p in report.errors if "oracle drift" in p.message)
        fresh = report.oracle_checks - report.oracle_cached
        how = (
            f"{report.oracle_checks} recomputed"
            if not report.oracle_cached
            else f"{fresh} recomputed, {report.oracle_cached} unchanged (cached)"
        )
        out.print(f"oracle checks: {how}, {drift} drifted", markup=False)
    if report.ok(strict):
        note = f" ({len(report.warnings)} warning(s))" if report.warnings else ""
        out.print(f"[green]valid[/green]{note}")
    else:
        out.print(
            f"[red]invalid[/red]: {len(report.errors)} error(s), {len(report.warnings)} warning(s)"
            + (" (--strict)" if strict and not report.errors else "")
        )


def validate(
    suite: SuiteArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too.")] = False,
    threshold: Annotated[
        float | None,
        typer.Option(help="Near-duplicate Jaccard threshold (default: the suite's, 0.8)."),
    ] = None,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="First rewrite outcome values still using alt_<key>s as value + any_of.",
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Recompute every oracle (by default an unchanged suite's answers are reused).",
        ),
    ] = False,
) -> None:
    """Check every case file and the suite as a whole; exit 1 on any error."""
    if threshold is not None and not 0 < threshold <= 1:
        raise UsageError(f"--threshold must be above 0 and at most 1, not {threshold:g}")
    fixes = fix_suite(suite) if fix else []
    if fix and not as_json:
        for done in fixes:
            out.print(f"fixed {done.format()}", markup=False)
        out.print(f"{len(fixes)} outcome check(s) moved to any_of" if fixes else "nothing to fix")
    report = validate_suite(suite, threshold=threshold, cache=not no_cache)
    for printed in report.oracle_output:  # stdout carries only caseforge's own output
        for line in printed.lines():
            err.print(line, markup=False)
    if as_json:
        data = report.to_json()
        if fix:
            data["fixed"] = [
                {"path": str(f.path), "line": f.line, "check": f.check, "retired": list(f.retired),
                 "alternatives": f.alternatives, "oracle": f.oracle}
                for f in fixes
            ]  # fmt: skip
        data["ok"] = report.ok(strict)
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print_validation(report, strict)
    if not report.ok(strict):
        raise typer.Exit(1)


def split(
    suite: SuiteArg,
    write: Annotated[bool, typer.Option("--write", help="Edit the case files in place.")] = False,
    reassign: Annotated[
        bool,
        typer.Option(
            help="Recompute every split from the hashes (hand-set ones with a note stay)."
        ),
    ] = False,
) -> None:
    """Assign a stable dev/test split (≈70/30 by id hash, every category on both sides);
    cases that have a split keep it."""
    changes, table = split_changes(suite, reassign)
    for change in changes:
        out.print(
            f"{change.case_id}: {change.old or 'unassigned'} -> {change.new}"
            f"  ({change.path}:{change.line})",
            markup=False,
        )
    out.print(_distribution_table("category × split after this split", table))
    if not changes:
        out.print("every case already has its split")
    elif write:
        write_split(changes)
        out.print(f"wrote {len(changes)} change(s)")
    else:
        out.print(f"{len(changes)} change(s); run again with --write to apply them")


def retire(
    suite: SuiteArg,
    case_id: Annotated[str, typer.Argument(metavar="ID", help="The id of the case to retire.")],
    reason: Annotated[str, typer.Option("--reason", help="Why the case is retired.")],
) -> None:
    """Move a case to SUITE/retired.yaml with the reason and today's date."""
    done = retire_case(suite, case_id, reason, dt.date.today())
    out.print(
        f"retired {done.case_id}: removed from {done.source}, recorded in {done.retired_file}"
    )


def init(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="A new or empty folder.")],
    example: Annotated[
        str | None,
        typer.Option(
            help="Copy a shipped example suite instead: support-refund, test-agent, ac-clarifier."
        ),
    ] = None,
) -> None:
    """Write a working suite to start from: config, two cases, an agent stub, an oracle and
    a pin test (or, with --example, one of the shipped example suites)."""
    from caseforge.case.scaffold import STARTER, init_suite

    done = init_suite(folder, example or STARTER)
    what = "starter suite" if done.example == STARTER else f"example suite {done.example!r},"
    out.print(f"wrote {folder}/: {what} named {done.name!r}, {done.files} files", markup=False)
    if done.example == STARTER:
        out.print(
            f"next: caseforge run {folder}   (one case passes, one fails and says why; "
            "then replace my_agent.py with a call into your agent)",
            markup=False,
        )
    else:
        out.print(f"next: caseforge validate {folder}; see {folder}/README.md", markup=False)
