"""caseforge as a library: run a suite, compare two runs, gate a run on a baseline.

Each function does what its command does, without printing, and returns the typed model
the command would print as JSON (:class:`~caseforge.report.model.RunReport`,
:class:`~caseforge.compare.pairing.CompareResult`, :class:`~caseforge.compare.gate.GateResult`).
A run is named by a :class:`RunReport`, a run id in the store, ``"latest"``, or a path to a
``report.json``. Mistakes raise :class:`~caseforge.errors.CaseforgeError` subclasses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict, Unpack

from caseforge.case.load import load_config, require_suite_folder
from caseforge.compare.baseline import load_baseline
from caseforge.compare.gate import GateResult, check_rules, gate, refuse_selection
from caseforge.compare.outcomes import outcomes_from_report, refuse_other_suite
from caseforge.compare.pairing import CompareResult
from caseforge.compare.pairing import compare_runs as _pair
from caseforge.errors import UsageError
from caseforge.report.build import build_report, load_report, require_finished
from caseforge.report.model import RunReport
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore, default_store_url

RunRef = RunReport | str | Path


class RunSettings(TypedDict, total=False):
    """What :func:`run_suite` may be told, as ``caseforge run`` options."""

    agent: str  # override the suite's agent: module:callable, cmd:COMMAND or a URL
    configs: Sequence[str]  # configuration names (several: a matrix)
    trials: int
    concurrency: int
    split: str  # dev, test or all
    cases: Sequence[str]  # only these case ids
    judge: bool  # False skips judge checks on purpose (--no-judge)
    max_cost: float  # stop, resumably, past this many USD
    store: str  # run store URL (default: CASEFORGE_STORE or .caseforge/)
    executor: str  # local, or ray: on a Ray cluster's workers (RAY_ADDRESS, or a local one)
    workers: int  # executor="ray": how many (default: the cluster's CPUs)


def run_suite(suite: str | Path, **settings: Unpack[RunSettings]) -> list[RunReport]:
    """Run ``suite`` (every selected case × trial × configuration) and return one report per
    configuration, as ``caseforge run`` stores and prints them. Call :func:`arun_suite` from
    async code."""
    return asyncio.run(arun_suite(suite, **settings))


async def arun_suite(suite: str | Path, **settings: Unpack[RunSettings]) -> list[RunReport]:
    """:func:`run_suite` on the running event loop."""
    options = RunOptions(
        suite_dir=Path(suite),
        agent=settings.get("agent"),
        configs=list(settings.get("configs", ())),
        trials=settings.get("trials"),
        concurrency=settings.get("concurrency"),
        split=settings.get("split", "all"),
        case_ids=list(settings.get("cases", ())),
        judge="auto" if settings.get("judge", True) else "off",
        max_cost=settings.get("max_cost"),
        executor=settings.get("executor", "local"),
        workers=settings.get("workers"),
    )
    run_store = RunStore(settings.get("store") or default_store_url(Path(suite)))
    try:
        outcome = await Runner(options, run_store).run()
        return [build_report(run_store, handle.run_id) for handle in outcome.runs]
    finally:
        run_store.close()


def compare_runs(
    a: RunRef, b: RunRef, *, store: str | None = None, force: bool = False
) -> CompareResult:
    """Pair two runs case by case, as ``caseforge compare A B --json`` does. Two runs of
    different suites are refused (``UsageError``) unless ``force``."""
    first = outcomes_from_report(_report(a, store))
    second = outcomes_from_report(_report(b, store))
    warnings = refuse_other_suite(first, second, force)
    result = _pair(first, second).to_result()
    result.notes[:0] = warnings
    return result


def gate_run(
    run: RunRef,
    baseline: str | Path,
    *,
    suite: str | Path | None = None,
    store: str | None = None,
    force: bool = False,
) -> GateResult:
    """Apply the suite's gate rules to ``run`` against a committed baseline, as
    ``caseforge gate`` does; ``result.verdict`` and ``result.exit_code`` say how it went.
    A baseline of another suite is refused (``UsageError``) unless ``force``."""
    if suite is not None:
        require_suite_folder(Path(suite))
    report = require_finished(_report(run, store), "gating")
    suite_dir = Path(suite) if suite is not None else Path(report.suite_path)
    config_path = suite_dir / "caseforge.yaml"
    if not config_path.is_file():
        raise UsageError(
            f"cannot find the suite of run {report.run_id} at {suite_dir}: pass --suite"
        )
    rules = load_config(suite_dir).gate.rules
    if not rules:
        raise UsageError(f"{config_path}: no gate.rules to apply (add some under `gate:`)")
    outcomes = outcomes_from_report(report)
    base = load_baseline(Path(baseline))
    refuse_selection(outcomes, report.options, base)
    check_rules(rules, outcomes, config_path)
    warnings = refuse_other_suite(base, outcomes, force)
    result = gate(outcomes, base, rules)
    result.notes[:0] = warnings
    return result


def _report(run: RunRef, store: str | None) -> RunReport:
    return run if isinstance(run, RunReport) else load_report(str(run), store)


__all__ = ["RunRef", "RunSettings", "arun_suite", "compare_runs", "gate_run", "run_suite"]
