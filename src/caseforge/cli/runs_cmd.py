"""``caseforge report``, ``show``, ``runs`` and ``merge``: reading what runs stored.

None of them runs an agent, so none imports the runner, the judge or the model client.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from caseforge.case.load import load_config, require_suite_folder
from caseforge.cli.options import StoreOpt, StoreSuiteOpt, output_file, store_url
from caseforge.errors import UsageError
from caseforge.files import write_all_atomic, write_atomic
from caseforge.report.build import load_report
from caseforge.report.render import FORMATS
from caseforge.report.show import trial_text, trial_view
from caseforge.store.db import RunStore, default_store_url
from caseforge.values import pct

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


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
