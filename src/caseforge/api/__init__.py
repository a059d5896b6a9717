"""caseforge as a library: run a suite, validate it, render a report, write a baseline,
compare two runs, gate a run.

Each function does what its command does, without printing, and returns the typed model
the command would print as JSON; the CLI's commands call these same functions
(``api/run.py`` owns a run from start to finish, end-of-run policy included). Mistakes
raise :class:`~caseforge.errors.CaseforgeError` subclasses carrying the CLI's exit codes.
Nothing here installs a signal handler: stop a run with a
:class:`~caseforge.run.cancel.Cancellation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.api.measure import RunRef as RunRef
    from caseforge.api.measure import build_report as build_report
    from caseforge.api.measure import compare_runs as compare_runs
    from caseforge.api.measure import gate_run as gate_run
    from caseforge.api.measure import make_baseline as make_baseline
    from caseforge.api.measure import validate_suite as validate_suite
    from caseforge.api.run import RunResult as RunResult
    from caseforge.api.run import RunSettings as RunSettings
    from caseforge.api.run import arun_suite as arun_suite
    from caseforge.api.run import execute_run as execute_run
    from caseforge.api.run import run_suite as run_suite

_WHERE = {
    "RunRef": "caseforge.api.measure",
    "build_report": "caseforge.api.measure",
    "compare_runs": "caseforge.api.measure",
    "gate_run": "caseforge.api.measure",
    "make_baseline": "caseforge.api.measure",
    "validate_suite": "caseforge.api.measure",
    "RunResult": "caseforge.api.run",
    "RunSettings": "caseforge.api.run",
    "arun_suite": "caseforge.api.run",
    "execute_run": "caseforge.api.run",
    "run_suite": "caseforge.api.run",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.api", _WHERE)
