"""Running a suite: plans, the session that drives an executor, trials, replay for rescore.

Names are imported on first use, so importing one module of the package does not
load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.run.executor import BaseExecutor as BaseExecutor
    from caseforge.run.executor import Executor as Executor
    from caseforge.run.executor import ExecutorFactory as ExecutorFactory
    from caseforge.run.executor import ExecutorSettings as ExecutorSettings
    from caseforge.run.executor import LocalExecutor as LocalExecutor
    from caseforge.run.executor import TrialOutcome as TrialOutcome
    from caseforge.run.executor import TrialTask as TrialTask
    from caseforge.run.executor import WorkerPool as WorkerPool
    from caseforge.run.ray_executor import RayExecutor as RayExecutor
    from caseforge.run.runner import Runner as Runner
    from caseforge.run.runner import RunOptions as RunOptions
    from caseforge.run.runner import RunOutcome as RunOutcome

_WHERE = {
    "BaseExecutor": "caseforge.run.executor",
    "Executor": "caseforge.run.executor",
    "ExecutorFactory": "caseforge.run.executor",
    "ExecutorSettings": "caseforge.run.executor",
    "LocalExecutor": "caseforge.run.executor",
    "TrialOutcome": "caseforge.run.executor",
    "TrialTask": "caseforge.run.executor",
    "WorkerPool": "caseforge.run.executor",
    "RayExecutor": "caseforge.run.ray_executor",
    "Runner": "caseforge.run.runner",
    "RunOptions": "caseforge.run.runner",
    "RunOutcome": "caseforge.run.runner",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.run", _WHERE)
