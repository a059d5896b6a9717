"""Running a suite: plans, the session that drives an executor, trials, replay for rescore."""

from caseforge.run.executor import Executor, LocalExecutor, TrialOutcome, TrialTask
from caseforge.run.runner import Runner, RunOptions, RunOutcome

__all__ = [
    "Executor",
    "LocalExecutor",
    "RunOptions",
    "RunOutcome",
    "Runner",
    "TrialOutcome",
    "TrialTask",
]
