"""The dataset and measuring commands as library functions: validate a suite, render a run's
report, write a baseline, compare two runs, gate a run.

Each does what its command does, without printing, and returns the typed model the
command prints as JSON. A run is named by a :class:`~caseforge.report.model.RunReport`, a
run id in the store, ``"latest"``, or a path to a ``report.json``. Mistakes raise the same
:class:`~caseforge.errors.CaseforgeError` subclasses, with the same exit codes, as the
commands. Each function's ``*_OPTIONS`` table maps its command's options to its parameters
(a test holds each table to the command).
"""

from __future__ import annotations

from pathlib import Path

from caseforge.case.load import load_config, load_suite, require_suite_folder
from caseforge.case.validate import ValidationReport
from caseforge.case.validate import validate_suite as _validate
from caseforge.compare.annotate import newly_failing
from caseforge.compare.baseline import Baseline, load_baseline, write_baseline
from caseforge.compare.gate import GateResult, check_rules, gate, refuse_selection
from caseforge.compare.outcomes import outcomes_from_report, refuse_other_suite
from caseforge.compare.pairing import CompareResult
from caseforge.compare.pairing import compare_runs as _pair
from caseforge.errors import CaseforgeError, UsageError
from caseforge.files import output_file, write_atomic
from caseforge.report.build import load_report, require_finished
from caseforge.report.model import RunReport
from caseforge.report.render import FORMATS
from caseforge.store.db import store_url

RunRef = RunReport | str | Path

VALIDATE_OPTIONS = {"--threshold": "threshold", "--fix": "fix", "--no-cache": "cache"}
VALIDATE_LEFT_OUT = {
    "--json": "the function returns the report; its to_json() is what --json prints",
    "--strict": "report.ok(strict=True) says whether warnings fail too",
}
REPORT_OPTIONS = {
    "--format": "format",
    "--out": "out",
    "--raw": "raw",
    "--suite": "suite",
    "--store": "store",
}
BASELINE_OPTIONS = {"--write": "write", "--suite": "suite", "--store": "store"}
COMPARE_OPTIONS = {"--force": "force", "--suite": "suite", "--store": "store"}
COMPARE_LEFT_OUT = {"--json": "the function returns the CompareResult --json prints"}
GATE_OPTIONS = {
    "--baseline": "baseline",
    "--suite": "suite",
    "--force": "force",
    "--store": "store",
}
GATE_LEFT_OUT = {
    "--json": "the function returns the GateResult --json prints",
    "--format": "rendering: caseforge.compare.gate's gate_markdown and gate_junit, "
    "caseforge.compare.annotate's github_annotations, github_summary and gitlab_code_quality",
    "--out": "rendering, as --format",
}


def validate_suite(
    suite: str | Path, *, threshold: float | None = None, fix: bool = False, cache: bool = True
) -> ValidationReport:
    """Check every case file and the suite as a whole, as ``caseforge validate`` does.

    Args:
        suite: The suite folder.
        threshold: The near-duplicate Jaccard threshold (default: the suite's, 0.8).
        fix: First rewrite outcome values still using ``alt_<key>`` as value + any_of.
        cache: Reuse the oracle answers of an unchanged suite (``False``: ``--no-cache``).

    Returns:
        The report: ``report.ok()`` is what the exit code says (``ok(strict=True)`` for
        ``--strict``), ``errors`` and ``warnings`` each pinned to ``path:line:col``.

    Raises:
        UsageError: ``threshold`` out of range, or ``suite`` is not a folder.
    """
    if threshold is not None and not 0 < threshold <= 1:
        raise UsageError(f"--threshold must be above 0 and at most 1, not {threshold:g}")
    suite_dir = Path(suite)
    require_suite_folder(suite_dir)
    if fix:
        from caseforge.case.fix import fix_suite

        fix_suite(suite_dir)
    return _validate(suite_dir, threshold=threshold, cache=cache)


def build_report(
    run: RunRef,
    *,
    raw: bool = False,
    format: str | None = None,
    out: str | Path | None = None,
    suite: str | Path | None = None,
    store: str | None = None,
) -> RunReport:
    """A run's report, as ``caseforge report`` renders it.

    Args:
        run: A run id, ``"latest"``, a ``report.json`` path, or a report.
        raw: Include each agent output and tool-call result.
        format: With ``out``: text, json, md, junit or html (default json).
        out: Also write the report there, rendered in ``format``.
        suite: Read runs from this suite's store.
        store: The run store URL.

    Returns:
        The report.

    Raises:
        UsageError: An unknown run or format, or a report file this caseforge cannot read.
    """
    fmt = format or "json"
    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    target = output_file(Path(out), "--out") if out is not None else None
    report = run if isinstance(run, RunReport) else load_report(str(run), _url(store, suite), raw)
    if target is not None:
        write_atomic(target, FORMATS[fmt](report))
    return report


def make_baseline(
    run: RunRef,
    write: str | Path,
    *,
    suite: str | Path | None = None,
    store: str | None = None,
) -> Baseline:
    """Write a small, reviewable JSON baseline of a finished run, as ``caseforge baseline``
    does.

    Args:
        run: A run id, ``"latest"``, a ``report.json`` path, or a report.
        write: The baseline file to write.
        suite: Read runs from this suite's store.
        store: The run store URL.

    Returns:
        The baseline written.

    Raises:
        UsageError: An unknown or unfinished run, or ``write`` names a folder.
    """
    target = output_file(Path(write), "--write")
    assert target is not None
    report = require_finished(_report(run, store, suite), "writing a baseline")
    return write_baseline(report, target)


def compare_runs(
    a: RunRef,
    b: RunRef,
    *,
    force: bool = False,
    suite: str | Path | None = None,
    store: str | None = None,
) -> CompareResult:
    """Pair two runs case by case, as ``caseforge compare A B --json`` does.

    Args:
        a: The earlier run.
        b: The later run.
        force: Compare runs of two different suites anyway.
        suite: Read runs from this suite's store.
        store: The run store URL.

    Returns:
        The comparison: newly passing and failing cases, the paired test, the MDE.

    Raises:
        UsageError: Two runs of different suites (unless ``force``), or an unknown run.
    """
    first = outcomes_from_report(_report(a, store, suite))
    second = outcomes_from_report(_report(b, store, suite))
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
    ``caseforge gate`` does.

    Args:
        run: The run to gate (finished, and not a selection the baseline does not match).
        baseline: The committed baseline file.
        suite: The suite folder for the rules (default: where the run was made).
        store: The run store URL.
        force: Gate against another suite's baseline anyway.

    Returns:
        The gate's result: ``result.verdict`` and ``result.exit_code`` say how it went;
        ``result.newly_failing`` the cases that passed in the baseline and fail now, each
        with its case file and the line of its first failing check.

    Raises:
        UsageError: A baseline of another suite (unless ``force``), an unfinished run, no
            gate rules, or an unreadable baseline.
        DatasetError: A gate rule naming an unknown metric or tag.
    """
    if suite is not None:
        require_suite_folder(Path(suite))
    report = require_finished(_report(run, store, suite), "gating")
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
    suite_tags: set[str] = set()
    if report.split != "all":  # the other split's cases are the suite's too
        try:
            suite_tags = {tag for case in load_suite(suite_dir).cases for tag in case.case.tags}
        except CaseforgeError:  # a suite that does not load today: the run's own tags
            suite_tags = set()
    check_rules(rules, outcomes, config_path, suite_tags)
    warnings = refuse_other_suite(base, outcomes, force)
    result = gate(outcomes, base, rules)
    result.notes[:0] = warnings
    result.newly_failing = newly_failing(report, outcomes, base, suite_dir)
    return result


def _url(store: str | None, suite: str | Path | None) -> str | None:
    return store_url(store, Path(suite) if suite is not None else None)


def _report(run: RunRef, store: str | None, suite: str | Path | None = None) -> RunReport:
    return run if isinstance(run, RunReport) else load_report(str(run), _url(store, suite))
