"""The gate's newly failing cases where CI shows them: in the case files themselves.

A case that passed in the baseline and fails now (by a majority of its trials on each side,
as ``compare`` pairs them) is pinned to its case file, at the line of its first failing
check. ``caseforge gate --format github`` writes them as GitHub workflow commands
(``::error file=…,line=…::…``, at most :data:`ANNOTATIONS`, then one line counting the
rest) and the job summary's Markdown; ``--format gitlab`` as a GitLab Code Quality report.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from caseforge.case.load import load_suite
from caseforge.case.positions import locate_in_yaml
from caseforge.compare.gate import GateResult, NewlyFailingCase, gate_markdown
from caseforge.compare.outcomes import RunOutcomes
from caseforge.compare.pairing import compare_runs
from caseforge.errors import CaseforgeError
from caseforge.report.model import CaseResult, RunReport
from caseforge.results import CheckStatus, TrialStatus, trial_letters
from caseforge.vcs import git_toplevel

ANNOTATIONS = 50  # GitHub shows at most 50 annotations a job: the rest are counted
FAILING = (CheckStatus.FAIL, CheckStatus.ERROR)


def newly_failing(
    report: RunReport, run: RunOutcomes, base: RunOutcomes, suite_dir: Path
) -> list[NewlyFailingCase]:
    """The cases that passed in the baseline and fail in ``report``'s run, each with its
    file (relative to the repository's top) and the line of its first failing check."""
    comparison = compare_runs(base, run)
    if not comparison.newly_failing:
        return []
    files = _case_files(suite_dir)
    top = git_toplevel(suite_dir)
    cases = {case.id: case for case in report.cases}
    found = []
    for case_id in comparison.newly_failing:
        check, reason = _first_failure(cases.get(case_id))
        path, line = files.get(case_id, (None, 1))
        if path is not None and check is not None and path.suffix in (".yaml", ".yml"):
            line = locate_in_yaml(path, ("expect", check.split(".")[0]))[0] or line
        found.append(
            NewlyFailingCase(
                case_id=case_id,
                path=_shown(path, top),
                line=max(line, 1),
                baseline=trial_letters(base.cases[case_id].statuses),
                now=trial_letters(run.cases[case_id].statuses),
                checks=comparison.changed_checks.get(case_id, []),
                reason=reason,
            )
        )
    return found


def _case_files(suite_dir: Path) -> dict[str, tuple[Path, int]]:
    """Each case's file and line; none for a suite that no longer loads (the gate judged
    the stored run: an annotation then names no file)."""
    try:
        suite = load_suite(suite_dir)
    except CaseforgeError:
        return {}
    return {loaded.case.id: (loaded.path, loaded.line) for loaded in suite.cases}


def _first_failure(case: CaseResult | None) -> tuple[str | None, str]:
    """The first failing check's name and ``name: reason``, else the agent's error."""
    for trial in case.trials if case is not None else []:
        if trial.status is TrialStatus.PASS:
            continue
        for check in trial.checks:
            if check.status in FAILING:
                return check.name, f"{check.name}: {check.reason or check.status.value}"
        if trial.error:
            return None, f"error: {trial.error.strip().splitlines()[-1]}"
    return None, ""


def _shown(path: Path | None, top: Path | None) -> str | None:
    if path is None:
        return None
    resolved = path.resolve()
    for base in (top, Path.cwd()):
        if base is not None and resolved.is_relative_to(base.resolve()):
            return resolved.relative_to(base.resolve()).as_posix()
    return resolved.as_posix()


def _message(case: NewlyFailingCase) -> str:
    why = f": {case.reason}" if case.reason else ""
    return (
        f"{case.case_id} passed in the baseline ({case.baseline}) and fails now ({case.now}){why}"
    )


def _escape(text: str, property_value: bool = False) -> str:
    """GitHub's escaping of a workflow command's data (and, more strictly, a property's)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github_annotations(result: GateResult) -> str:
    """``::error`` workflow commands at the newly failing cases, at most ANNOTATIONS, then
    one ``::notice`` counting the rest; empty when none is newly failing."""
    lines = []
    for case in result.newly_failing[:ANNOTATIONS]:
        where = f"file={_escape(case.path, True)},line={case.line}," if case.path else ""
        title = _escape(f"caseforge gate: {case.case_id} newly failing", True)
        lines.append(f"::error {where}title={title}::{_escape(_message(case))}")
    rest = len(result.newly_failing) - ANNOTATIONS
    if rest > 0:
        lines.append(
            f"::notice title=caseforge gate::{rest} more newly failing case(s), not annotated "
            "(the job summary lists them all)"
        )
    return "\n".join(lines) + ("\n" if lines else "")


def github_summary(result: GateResult) -> str:
    """The job summary: the gate's Markdown, then a table of the newly failing cases."""
    text = gate_markdown(result)
    if not result.newly_failing:
        return text
    rows = [
        "",
        f"#### {len(result.newly_failing)} newly failing (passed in the baseline)",
        "",
        "| case | file | baseline | now | why |",
        "|---|---|---|---|---|",
    ]
    for case in result.newly_failing:
        where = f"`{_cell(case.path)}:{case.line}`" if case.path else ""
        rows.append(
            f"| `{_cell(case.case_id)}` | {where} | {case.baseline} | {case.now} "
            f"| {_cell(case.reason)} |"
        )
    return text + "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def gitlab_code_quality(result: GateResult) -> str:
    """A GitLab Code Quality report (JSON): one ``major`` issue per newly failing case, at
    its file and line, its fingerprint stable across runs (the suite's file and case)."""
    issues = [
        {
            "description": _message(case),
            "check_name": "caseforge-gate-newly-failing",
            "fingerprint": hashlib.sha256(
                f"caseforge gate\0{case.path}\0{case.case_id}".encode()
            ).hexdigest(),
            "severity": "major",
            "location": {"path": case.path or "", "lines": {"begin": case.line}},
        }
        for case in result.newly_failing
    ]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
