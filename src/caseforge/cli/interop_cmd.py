"""``caseforge import FORMAT …`` and ``caseforge export FORMAT …``: other tools' tests in,
caseforge runs out.

Each format is a command of its own, whose module under ``caseforge.interop`` is imported
only when it runs (so ``import inspect`` never loads pyarrow, nor ``export table`` inspect-ai).
Every importer prints its report (``interop/report.py``) and writes it as ``SUITE/IMPORT.md``;
``--dry-run`` prints it and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from caseforge.cli.command import App
from caseforge.cli.options import StoreOpt, StoreSuiteOpt, output_file, store_url

if TYPE_CHECKING:
    from caseforge.interop.report import ImportReport
    from caseforge.report.model import RunReport

import_app = App(
    help="Bring tests in from another tool: promptfoo configs, Inspect AI datasets, tables "
    "(CSV, JSONL, Parquet, Hugging Face), tau-bench domains.",
    no_args_is_help=True,
)
export_app = App(
    help="Write a suite or a run for another tool: a promptfoo config or results file, an "
    "Inspect AI log, a table (CSV or Parquet).",
    no_args_is_help=True,
)

OutSuite = Annotated[
    Path, typer.Option("--out", help="The suite folder to write (new, or one to add to).")
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Print the import report; write nothing.")]
Prefix = Annotated[
    str | None,
    typer.Option(
        "--prefix", help="Put before each case id (default: the source file's name; '' for none)."
    ),
]


def _finish(report: ImportReport) -> None:
    """Print the report; an imported case that does not validate is the command's error."""
    print("\n".join(report.lines()))
    if not report.dry_run:
        print(f"wrote {Path(report.suite) / 'IMPORT.md'}")
    error = report.error()
    if error is not None:
        raise error


@import_app.command("promptfoo")
def import_promptfoo(
    config: Annotated[
        Path,
        typer.Argument(
            metavar="CONFIG",
            help="A promptfoo config (promptfooconfig.yaml, or the folder holding it).",
        ),
    ],
    out: OutSuite,
    prefix: Annotated[
        str | None, typer.Option("--prefix", help="Put before each case id (default: nothing).")
    ] = None,
    dry_run: DryRun = False,
) -> None:
    """A promptfoo config as a suite: providers as configurations, tests (inline, CSV, JSONL,
    YAML) as cases, assertions as checks."""
    from caseforge.interop.promptfoo import PromptfooImport
    from caseforge.interop.promptfoo import import_promptfoo as run_import

    _finish(run_import(PromptfooImport(config, out, prefix), dry_run))


@import_app.command("inspect")
def import_inspect(
    dataset: Annotated[
        Path,
        typer.Argument(metavar="DATASET", help="An Inspect sample dataset: .json, .jsonl, .csv."),
    ],
    out: OutSuite,
    scorer: Annotated[
        str,
        typer.Option(
            "--scorer",
            help="How the task scores the target: includes (must_include), match (regex at the "
            "end), exact, judge.",
        ),
    ] = "includes",
    prefix: Prefix = None,
    dry_run: DryRun = False,
) -> None:
    """An Inspect AI sample dataset as cases: input, target (by --scorer), choices, id,
    metadata."""
    from caseforge.interop.inspect_dataset import InspectImport, import_inspect

    request = InspectImport(dataset, out, scorer, prefix)  # type: ignore[arg-type]
    _finish(import_inspect(request, dry_run))


@import_app.command("table")
def import_table(
    table: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="CSV, JSONL, JSON, Parquet, or a Hugging Face dataset saved to disk (a folder).",
        ),
    ],
    out: OutSuite,
    maps: Annotated[
        list[str],
        typer.Option(
            "--map",
            metavar="TARGET=COLUMN",
            help="input.NAME=COLUMN (repeat; a dotted NAME nests), or tags, note, group, split.",
        ),
    ],
    expects: Annotated[
        list[str] | None,
        typer.Option(
            "--expect",
            metavar="FIELD=MODE:COLUMN",
            help="A check on FIELD with MODE, its expected value from COLUMN, or "
            "FIELD=MODE:oracle=NAME (the suite's oracle computes it). Repeat.",
        ),
    ] = None,
    id_column: Annotated[
        str | None,
        typer.Option("--id", metavar="COLUMN", help="The ids' column (default: `id`, if any)."),
    ] = None,
    prefix: Prefix = None,
    dry_run: DryRun = False,
) -> None:
    """A table of examples as cases, one per row: --map says the input, --expect the
    checks."""
    from caseforge.interop.table_import import TableImport
    from caseforge.interop.table_import import import_table as run_import

    request = TableImport.from_options(table, out, maps, expects or [], id_column, prefix)
    _finish(run_import(request, dry_run))


@import_app.command("tau-bench")
def import_tau_bench(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="PATH", help="A tau-bench checkout, or a folder holding envs/DOMAIN/."
        ),
    ],
    domain: Annotated[str, typer.Option("--domain", help="The domain to import (retail…).")],
    out: OutSuite,
    tasks: Annotated[
        str | None,
        typer.Option(
            "--tasks",
            help="Which tasks: test, train, dev (tasks_NAME.py) or a file of the domain "
            "(default: tasks.json, else tasks_test.py).",
        ),
    ] = None,
    dry_run: DryRun = False,
) -> None:
    """A tau-bench-style domain as a suite: its database per trial, its tools, a case per
    task."""
    from caseforge.interop.tau_bench import TauImport
    from caseforge.interop.tau_bench import import_tau_bench as run_import

    _finish(run_import(TauImport(path, domain, out, tasks), dry_run))


RunArg = Annotated[str, typer.Argument(metavar="RUN", help="Run id, `latest`, or report.json.")]


@export_app.command("promptfoo")
def export_promptfoo(
    suite: Annotated[Path, typer.Argument(metavar="SUITE", help="The suite folder.")],
    out: Annotated[
        Path, typer.Option("--out", help="The promptfoo config to write: promptfooconfig.yaml.")
    ],
) -> None:
    """A suite as a promptfoo config: configurations as providers, cases as tests, checks as
    assertions; lists what promptfoo cannot express."""
    from caseforge.interop.promptfoo_export import export_promptfoo as write_config

    output_file(out, "--out")
    done = write_config(suite, out)
    lost = f"; {len(done.lost)} not expressed:" if done.lost else ""
    print(f"wrote {out}: {done.tests} tests, {done.assertions} assertions{lost}")
    for line in done.lost:
        print(f"  {line}")
    for note in done.notes:
        print(f"note: {note}")


@export_app.command("promptfoo-results")
def export_promptfoo_results(
    run_refs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN",
            help="Run ids, `latest`, or report.json files: one column (provider × prompt) each.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="The results file to write: results.json.")],
    suite: StoreSuiteOpt = None,
    store: StoreOpt = None,
) -> None:
    """Runs as promptfoo's results file (version 3): one result per case × run × trial, with
    results.stats, for a promptfoo CI step."""
    from caseforge.interop.promptfoo_results import export_results
    from caseforge.report.build import load_report

    output_file(out, "--out")
    url = store_url(store, suite)
    reports = [load_report(ref, url, raw=True) for ref in run_refs]
    stored = [r for ref, r in zip(run_refs, reports, strict=True) if not _is_file(ref)]
    stats = export_results(reports, out, _descriptions(stored, url) if stored else {})
    runs = ("runs " if len(reports) > 1 else "run ") + ", ".join(r.run_id for r in reports)
    print(
        f"wrote {out}: {runs}: {stats['successes']} successes, {stats['failures']} failures, "
        f"{stats['errors']} errors"
    )


def _is_file(ref: str) -> bool:
    path = Path(ref)
    return path.suffix == ".json" or path.is_file()


def _descriptions(reports: list[RunReport], url: str | None) -> dict[str, str]:
    """The stored runs' cases' own descriptions (``provenance.description``, as an import
    keeps a promptfoo test's), by case id; none for a run read from a report.json."""
    from caseforge.store.db import RunStore

    found: dict[str, str] = {}
    store = RunStore(url, read_only=True)
    try:
        for report in reports:
            if not store.has_run(report.run_id):
                continue
            for case_id, case in store.cases(report.run_id).items():
                provenance = case.get("provenance")
                described = provenance.get("description") if isinstance(provenance, dict) else None
                if isinstance(described, str) and described.strip():
                    found.setdefault(case_id, described.strip())
    finally:
        store.close()
    return found


@export_app.command("inspect")
def export_inspect(
    run_ref: RunArg,
    out: Annotated[Path, typer.Option("--out", help="The Inspect log to write: FILE.eval.")],
    suite: StoreSuiteOpt = None,
    store: StoreOpt = None,
) -> None:
    """A run as an Inspect AI log: a sample per case-trial, a score per check (needs
    caseforge[inspect])."""
    from caseforge.interop.inspect_log import export_inspect as write_log
    from caseforge.interop.inspect_log import imported_sample_ids
    from caseforge.report.build import load_report
    from caseforge.store.db import RunStore

    output_file(out, "--out")
    url = store_url(store, suite)
    report = load_report(run_ref, url, raw=True)
    imported: dict[str, object] = {}
    if not (Path(run_ref).suffix == ".json" or Path(run_ref).is_file()):  # a stored run
        runs = RunStore(url, read_only=True)
        try:
            imported = imported_sample_ids(runs.cases(report.run_id))
        finally:
            runs.close()
    samples = write_log(report, out, imported)
    print(f"wrote {out}: run {report.run_id}, {samples} samples (case-trials)")


@export_app.command("table")
def export_table(
    run_ref: RunArg,
    out: Annotated[
        Path,
        typer.Option("--out", help="FILE.csv or FILE.parquet (Parquet needs caseforge[tables])."),
    ],
    checks: Annotated[
        bool, typer.Option("--checks", help="One row per check instead of per case-trial.")
    ] = False,
    suite: StoreSuiteOpt = None,
    store: StoreOpt = None,
) -> None:
    """A run as a table: one row per case-trial (--checks: per check), CSV or Parquet."""
    from caseforge.interop.table_export import export_table as write_table
    from caseforge.report.build import load_report

    output_file(out, "--out")
    report = load_report(run_ref, store_url(store, suite), raw=True)
    rows = write_table(report, out, checks)
    kind = "checks" if checks else "case-trials"
    print(f"wrote {out}: run {report.run_id}, {rows} rows ({kind})")
