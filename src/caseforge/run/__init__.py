"""Running a suite: plans, the session that drives an executor, trials, replay for rescore."""

from caseforge.run.executor import Executor, LocalExecutor, TrialOutcome, TrialTask, WorkerPool
from caseforge.run.ray_executor import RayExecutor
from caseforge.run.runner import Runner, RunOptions, RunOutcome

__all__ = [
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "RunOptions",
    "RunOutcome",
    "Runner",
    "TrialOutcome",
    "TrialTask",
    "WorkerPool",
]
