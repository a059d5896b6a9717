"""``caseforge export table``: a run as a table, for pandas and spreadsheets.

One row per case-trial (:data:`TRIAL_COLUMNS`), or with ``--checks`` one row per check of
each case-trial (:data:`CHECK_COLUMNS`). Numbers stay numbers; a structure (the input, the
output, the tool calls, a check's expected and actual value) is one cell of JSON. The
format follows the file's suffix: ``.csv`` (the standard library) or ``.parquet``
(pyarrow, the ``tables`` extra). The file appears whole or not at all. In a CSV, a text a
spreadsheet would run as a formula (an agent's reply ``=HYPERLINK(…)``) starts with ``'``;
Parquet keeps every text as it is.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from pathlib import Path

from caseforge.errors import EnvError, UsageError
from caseforge.files import write_atomic
from caseforge.interop.records import optional
from caseforge.report.model import RunReport
from caseforge.results import CheckStatus

Row = dict[str, object]

RUN_COLUMNS = ("run_id", "suite", "config", "agent", "dataset_commit")
TRIAL_COLUMNS = (
    *RUN_COLUMNS, "case_id", "trial", "status", "category", "split", "source", "tags",
    "checks_passed", "checks_failed", "checks", "latency_s", "cost_usd", "input_tokens",
    "output_tokens", "error", "reply", "input", "output", "tool_calls",
)  # fmt: skip
CHECK_COLUMNS = (
    *RUN_COLUMNS, "case_id", "trial", "trial_status", "check", "mode", "status", "expected",
    "actual", "reason",
)  # fmt: skip
INTEGER = {"trial", "checks_passed", "checks_failed", "checks", "input_tokens", "output_tokens"}
FLOAT = {"latency_s", "cost_usd"}


# A text cell a spreadsheet would read as a formula (OWASP's CSV injection): = + @, a tab or
# a carriage return first, or a - not followed by white space (a Markdown list stays as is).
_FORMULA = re.compile(r"[=+@\t\r]|-(?!\s)")


def _cell(value: object) -> object:
    """A CSV cell: nothing for None, and a text a spreadsheet would run as a formula
    behind a ``'`` (which spreadsheets show as text and do not run)."""
    if value is None:
        return ""
    if isinstance(value, str) and _FORMULA.match(value):
        return "'" + value
    return value


def _json(value: object) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def trial_rows(report: RunReport) -> list[Row]:
    """One row per case-trial."""
    run = _run(report)
    rows: list[Row] = []
    for case in report.cases:
        for trial in case.trials:
            passed = sum(1 for c in trial.checks if c.status is CheckStatus.PASS)
            failed = sum(
                1 for c in trial.checks if c.status in (CheckStatus.FAIL, CheckStatus.ERROR)
            )
            calls = [{"name": c.name, "args": c.args, "result": c.result} for c in trial.tool_calls]
            rows.append(
                {
                    **run,
                    "case_id": case.id,
                    "trial": trial.trial,
                    "status": trial.status.value,
                    "category": case.category,
                    "split": case.split,
                    "source": case.source,
                    "tags": ";".join(case.tags),
                    "checks_passed": passed,
                    "checks_failed": failed,
                    "checks": len(trial.checks),
                    "latency_s": trial.latency_s,
                    "cost_usd": trial.cost_usd,
                    "input_tokens": trial.input_tokens,
                    "output_tokens": trial.output_tokens,
                    "error": trial.error,
                    "reply": trial.reply,
                    "input": _json(case.input),
                    "output": _json(trial.output),
                    "tool_calls": _json(calls),
                }
            )
    return rows


def check_rows(report: RunReport) -> list[Row]:
    """One row per check of each case-trial."""
    run = _run(report)
    return [
        {
            **run,
            "case_id": case.id,
            "trial": trial.trial,
            "trial_status": trial.status.value,
            "check": check.name,
            "mode": check.mode,
            "status": check.status.value,
            "expected": _json(check.expected),
            "actual": _json(check.actual),
            "reason": check.reason,
        }
        for case in report.cases
        for trial in case.trials
        for check in trial.checks
    ]


def _run(report: RunReport) -> Row:
    return {
        "run_id": report.run_id,
        "suite": report.suite,
        "config": report.config,
        "agent": report.agent,
        "dataset_commit": report.dataset_commit,
    }


def export_table(report: RunReport, out: Path, checks: bool = False) -> int:
    """Write the run's table to ``out`` (``.csv`` or ``.parquet``); returns its rows.

    Raises:
        UsageError: another suffix.
        EnvError: ``.parquet`` without pyarrow (the ``tables`` extra), or a write that fails.
    """
    suffix = out.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise UsageError(f"--out {out}: a table is a .csv or a .parquet file")
    rows = check_rows(report) if checks else trial_rows(report)
    columns = CHECK_COLUMNS if checks else TRIAL_COLUMNS
    if suffix == ".csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
        write_atomic(out, buffer.getvalue())
        return len(rows)
    pa = optional("pyarrow", "tables", "writing Parquet")
    parquet = optional("pyarrow.parquet", "tables", "writing Parquet")
    fields = [
        pa.field(c, pa.int64() if c in INTEGER else pa.float64() if c in FLOAT else pa.string())
        for c in columns
    ]
    table = pa.Table.from_pylist(rows, schema=pa.schema(fields))
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.stem}.", suffix=".parquet", dir=out.parent)
    os.close(fd)
    try:
        parquet.write_table(table, tmp)
        os.replace(tmp, out)
    except OSError as exc:
        raise EnvError(f"{out}: cannot write: {exc.strerror or exc}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return len(rows)
