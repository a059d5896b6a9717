"""Running a suite as a library: one function owns a run from start to finish.

:func:`execute_run` is what ``caseforge run`` calls and what :func:`run_suite` calls: it
plans and drives the run (``run/runner.py``), builds each configuration's report, keeps
the digest ``caseforge serve`` opens the run with, writes ``report.json`` where ``out``
says, collects the warnings, and decides the exit-code error (``--max-cost`` reached,
too many agent errors). The CLI prints what it returns and raises its error; the library
raises it. Neither prints here, and nothing here installs a signal handler: a caller stops
a run with a :class:`~caseforge.run.cancel.Cancellation` (the CLI maps SIGINT and SIGTERM
onto one).

Every option of ``caseforge run`` is a key of :class:`RunSettings`; :data:`RUN_OPTIONS`
maps each to its key (a test holds the table to the command's options).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, Unpack

from caseforge.agent.fixtures import FixtureMode
from caseforge.case.load import load_config
from caseforge.compare.digest import save_digest
from caseforge.errors import BudgetExceeded, CaseforgeError, TooManyAgentErrors, UsageError
from caseforge.files import output_folder, write_all_atomic
from caseforge.report.build import build_report
from caseforge.report.model import RunReport
from caseforge.report.render import FORMATS
from caseforge.results import TrialRecord
from caseforge.run.cancel import Cancellation
from caseforge.run.executor import TrialOutcome
from caseforge.run.plan import Progress, RunHandle, Shard
from caseforge.run.runner import Runner, RunOptions, RunOutcome
from caseforge.store.db import RunStore, default_store_url


class RunSettings(TypedDict, total=False):
    """What :func:`run_suite` may be told: every option ``caseforge run`` has but
    ``--quiet`` (:data:`RUN_OPTIONS` maps them)."""

    agent: str  # override the suite's agent: module:callable, cmd:COMMAND or a URL
    configs: Sequence[str]  # configuration names (several: a matrix)
    trials: int
    concurrency: int
    split: str  # dev, test or all
    cases: Sequence[str]  # only these case ids
    tags: Sequence[str]  # only cases carrying any of these tags
    out: str | Path  # write OUT/report.json (OUT/<config>/report.json for a matrix)
    raw: bool  # out's report.json includes each output and tool-call result
    resume: str  # finish an unfinished run: its id, or "latest"
    max_cost: float  # stop, resumably, past this many USD
    fixtures: str  # record, replay or off (default: replay when fixtures exist)
    judge: bool  # False skips judge checks on purpose (--no-judge)
    timeout: float  # seconds per case-trial
    keep_workspaces: bool
    no_cache: bool  # bypass the disk cache of model calls
    reuse_trials: bool  # let trials share cached model answers (they stop being samples)
    max_error_rate: float  # TooManyAgentErrors above this share (default: the suite's)
    store: str  # run store URL (default: CASEFORGE_STORE or .caseforge/)
    shard: str | Shard  # "I/N": run shard I of N of the run `run_id` names
    run_id: str  # the new run's id (a matrix's group id)
    executor: str  # local, ray (a Ray cluster's workers), or an installed executor's name
    workers: int  # executor="ray": how many (default: the cluster's CPUs)


# `caseforge run`'s options, each to its RunSettings key; and those the library leaves out.
RUN_OPTIONS: dict[str, str] = {
    "--agent": "agent",
    "--config": "configs",
    "--trials": "trials",
    "--concurrency": "concurrency",
    "--split": "split",
    "--case": "cases",
    "--tag": "tags",
    "--out": "out",
    "--raw": "raw",
    "--resume": "resume",
    "--max-cost": "max_cost",
    "--fixtures": "fixtures",
    "--no-judge": "judge",
    "--timeout": "timeout",
    "--keep-workspaces": "keep_workspaces",
    "--no-cache": "no_cache",
    "--reuse-trials": "reuse_trials",
    "--max-error-rate": "max_error_rate",
    "--store": "store",
    "--shard": "shard",
    "--run-id": "run_id",
    "--executor": "executor",
    "--workers": "workers",
}
RUN_LEFT_OUT: dict[str, str] = {
    "--quiet": "progress and the printed report are the command's; the library prints nothing",
}


@dataclass
class RunResult:
    """What one invocation did, for whoever shows it: the reports (one per
    configuration), the outcome, what was written, the warnings, and the error that
    decides the exit code (None: 0)."""

    reports: list[RunReport]
    outcome: RunOutcome
    written: Path | None = None  # the `out` folder report.json went to
    warnings: list[str] = field(default_factory=list)
    shards: list[str] = field(default_factory=list)  # each sharded run's state, in a line
    error: CaseforgeError | None = None


def run_options(suite: Path, settings: RunSettings) -> RunOptions:
    """The runner's options from the settings; a wrong one is a UsageError naming its flag."""
    rate = settings.get("max_error_rate")
    if rate is not None and not 0 <= rate <= 1:
        raise UsageError(f"--max-error-rate must be from 0 to 1, not {rate:g}")
    fixtures = settings.get("fixtures")
    try:
        mode = FixtureMode(fixtures) if fixtures is not None else None
    except ValueError:
        known = ", ".join(m.value for m in FixtureMode)
        raise UsageError(f"--fixtures must be one of {known}, not {fixtures!r}") from None
    shard = settings.get("shard")
    return RunOptions(
        suite_dir=suite,
        agent=settings.get("agent"),
        configs=list(settings.get("configs", ())),
        trials=settings.get("trials"),
        concurrency=settings.get("concurrency"),
        split=settings.get("split", "all"),
        case_ids=list(settings.get("cases", ())),
        tags=list(settings.get("tags", ())),
        resume=settings.get("resume"),
        max_cost=settings.get("max_cost"),
        fixtures=mode,
        judge="auto" if settings.get("judge", True) else "off",
        timeout_s=settings.get("timeout"),
        keep_workspaces=settings.get("keep_workspaces", False),
        no_cache=settings.get("no_cache", False),
        reuse_trials=settings.get("reuse_trials", False),
        shard=Shard.parse(shard) if isinstance(shard, str) else shard,
        run_id=settings.get("run_id"),
        executor=settings.get("executor", "local"),
        workers=settings.get("workers"),
    )


async def execute_run(
    suite: str | Path,
    settings: RunSettings,
    *,
    cancellation: Cancellation | None = None,
    on_start: Callable[[list[RunHandle], Progress], None] | None = None,
    on_result: Callable[[Progress, TrialRecord], None] | None = None,
    on_trial: Callable[[TrialOutcome, TrialRecord], None] | None = None,
) -> RunResult:
    """One invocation of ``caseforge run``, start to finish, on the running event loop.

    A mistake is raised before anything is recorded; a stop (``cancellation``) raises
    :class:`~caseforge.errors.Interrupted` with the run saved as stopped. The exit-code
    error of a run that ran (budget, agent errors) is *returned* in ``error``, so the
    caller shows the reports first. ``on_result`` hears of each graded case-trial with the
    progress so far; ``on_trial`` with what the agent answered and which run it is of (a
    matrix runs each configuration as a run of its own)."""
    suite_dir = Path(suite)
    options = run_options(suite_dir, settings)
    load_config(suite_dir)  # not a suite: say so before a store is made beside it
    out = Path(settings["out"]) if settings.get("out") is not None else None
    output_folder(out, "--out")  # before anything runs or is recorded
    store = RunStore(settings.get("store") or default_store_url(suite_dir))
    try:
        runner = Runner(
            options,
            store,
            on_start=on_start,
            on_result=on_result,
            on_trial=on_trial,
            cancellation=cancellation,
        )
        outcome = await runner.run()
        result = _finish(store, outcome, options, settings, suite_dir)
    finally:
        store.close()
    if out is not None:
        reports = result.reports
        write_all_atomic(
            {
                (out if len(reports) == 1 else out / str(r.config)) / "report.json": (
                    FORMATS["json"](r)
                )
                for r in reports
            }
        )
        result.written = out
    return result


def _finish(
    store: RunStore,
    outcome: RunOutcome,
    options: RunOptions,
    settings: RunSettings,
    suite_dir: Path,
) -> RunResult:
    """The end-of-run policy: reports and digests, warnings, and the exit-code error."""
    reports = [build_report(store, h.run_id, settings.get("raw", False)) for h in outcome.runs]
    for report in reports:
        save_digest(store, report)  # what `caseforge serve` opens the run with
    result = RunResult(reports, outcome)
    if options.shard is not None:
        for handle in outcome.runs:
            ledger = store.shards(handle.run_id)
            finished = sum(1 for row in ledger if row["status"] == "finished")
            result.shards.append(
                f"shard {options.shard} of run {handle.run_id}: {outcome.status}; "
                f"{finished} of {options.shard.count} shard(s) finished, the run is "
                f"{store.get_run(handle.run_id).status}"
            )
    identity = reports[0].suite_identity if reports else None
    if identity is not None and identity.root_commit is None:
        result.warnings.append(
            f"{suite_dir} is not in a git repository (or one with no commit yet), so the run "
            f"knows its suite by the name {identity.name!r} alone; compare and gate cannot "
            "tell it from another suite of that name"
        )
    result.error = _exit_error(outcome, reports, settings.get("max_error_rate"))
    return result


def _exit_error(
    outcome: RunOutcome, reports: list[RunReport], max_error_rate: float | None
) -> CaseforgeError | None:
    if outcome.status == "stopped":
        return BudgetExceeded(f"stopped: {outcome.stop_reason}")
    limit = max_error_rate if max_error_rate is not None else outcome.suite.config.max_error_rate
    for report in reports:
        graded = [t for case in report.cases for t in case.trials]
        errors = sum(t.agent_error for t in graded)
        if graded and errors / len(graded) > limit:
            return TooManyAgentErrors(
                f"{errors} of {len(graded)} case-trials"
                f"{f' of config {report.config}' if report.config else ''} were agent errors "
                f"({errors / len(graded):.0%} > {limit:.0%}, --max-error-rate): "
                f"see `caseforge report {report.run_id}`"
            )
    return None


def run_suite(
    suite: str | Path, *, cancellation: Cancellation | None = None, **settings: Unpack[RunSettings]
) -> list[RunReport]:
    """Run ``suite`` as ``caseforge run`` does and return one report per configuration.

    Args:
        suite: The suite folder (it holds ``caseforge.yaml``).
        cancellation: Cancel it (from another thread, say) to stop the run; the run is
            saved as stopped and :class:`~caseforge.errors.Interrupted` is raised.
        **settings: Any option of ``caseforge run`` (:class:`RunSettings`), e.g.
            ``trials=3``, ``timeout=30``, ``max_error_rate=0.2``, ``out="reports/"``.

    Returns:
        The reports, one per configuration, as ``report.json`` holds them.

    Raises:
        UsageError: A wrong option (2). DatasetError: an invalid suite (1).
        BudgetExceeded: ``max_cost`` was reached (3). TooManyAgentErrors: more agent
        errors than ``max_error_rate`` allows (4). EnvError: the store or the machine (5).

    Call :func:`arun_suite` from async code."""
    return asyncio.run(arun_suite(suite, cancellation=cancellation, **settings))


async def arun_suite(
    suite: str | Path, *, cancellation: Cancellation | None = None, **settings: Unpack[RunSettings]
) -> list[RunReport]:
    """:func:`run_suite` on the running event loop.

    Args:
        suite: The suite folder.
        cancellation: Stops the run when cancelled.
        **settings: Any option of ``caseforge run`` (:class:`RunSettings`).

    Returns:
        The reports, one per configuration.

    Raises:
        CaseforgeError: As :func:`run_suite` says, with the same exit codes as the CLI.
    """
    result = await execute_run(suite, settings, cancellation=cancellation)
    if result.error is not None:
        raise result.error
    return result.reports
