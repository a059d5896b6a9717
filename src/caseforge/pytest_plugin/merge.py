"""The end of a pytest session's run: one line per configuration's run for the terminal and,
under pytest-xdist, the controller's merge of the workers' shards.

The workers' shards fill one run in one store, and the last shard to finish marks it
finished and stores its digest (as ``caseforge run --shard`` does). What is left for the
controller, once every worker is gone: a shard whose worker died or was stopped is still
``running`` in the ledger, so it is marked ``stopped`` (the run then is too, and ``caseforge
run SUITE --resume ID`` finishes it); a finished run without its digest gets one.
"""

from __future__ import annotations

from caseforge.compare.digest import save_digest
from caseforge.report.build import build_report
from caseforge.report.model import RunReport
from caseforge.results import RunStatus
from caseforge.store.db import RunStore
from caseforge.values import pct


def report_line(report: RunReport) -> str:
    """``run ID · suite [config] · 86 cases × 3 trials · finished · pass rate 99.6%``."""
    config = f" [{report.config}]" if report.config else ""
    status = report.status.value
    if report.status is not RunStatus.FINISHED:
        status += f" (finish it with `caseforge run SUITE --resume {report.run_id}`)"
    narrowed = f" · a selection ({report.selection})" if report.selection else ""
    return (
        f"run {report.run_id} · {report.suite}{config} · {_count(len(report.cases), 'case')} × "
        f"{_count(report.trials, 'trial')}{narrowed} · {status} · pass rate "
        f"{pct(report.summary.pass_rate)} · caseforge report {report.run_id}"
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def merge_shards(store_url: str, group_id: str) -> list[str]:
    """Close the workers' shards of the run ``group_id`` names (each configuration's run of
    it), and say what each run is."""
    store = RunStore(store_url)
    try:
        runs = store.group(group_id)
        if not runs:
            return [f"run {group_id}: no worker ran a case (nothing was recorded)"]
        lines = []
        for info in runs:
            for row in store.shards(info.id):
                if row["status"] == "running":  # its worker is gone
                    store.end_shard(info.id, int(row["shard"]), "stopped")
            report = build_report(store, info.id)
            if report.status is RunStatus.FINISHED and store.digest(info.id) is None:
                save_digest(store, report)
            shards = len(report.shards)
            lines.append(f"{report_line(report)} · {shards} shard(s), one per worker with cases")
        return lines
    finally:
        store.close()
