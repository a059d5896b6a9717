"""A case's test item from its graded trials: passed, failed or skipped under the pass rule
(``--caseforge-pass``), and the failure message, which shows each trial that did not pass as
``caseforge show`` does: its checks' verdicts and reasons, the agent's error, the reply."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from caseforge.report.show import check_lines
from caseforge.results import CheckStatus, TrialRecord, TrialStatus

RULES = {
    "all": "a case passes when every trial passes",
    "majority": "a case passes when most of its trials pass",
    "any": "a case passes when one of its trials passes",
}
NOT_JUDGED = "not judged: no model configured"
NOT_PASSING = (CheckStatus.FAIL, CheckStatus.ERROR, CheckStatus.NOT_JUDGED)
REPLY_CHARS = 300  # of a reply, the excerpt a failure shows (`caseforge show` has it all)
ERROR_LINES = 3  # of an agent's error (a traceback), the last lines a failure shows


class Outcome(StrEnum):
    """What pytest is told about a case's item."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(slots=True)
class Trial:
    """One graded case-trial, and the reply the agent gave in it."""

    record: TrialRecord
    reply: str | None = None


@dataclass(frozen=True, slots=True)
class CaseKey:
    """One item: a case, under one configuration (None: the suite's only one)."""

    config: str | None
    case_id: str

    def __str__(self) -> str:
        return self.case_id + (f" [{self.config}]" if self.config else "")


def decide(trials: list[Trial], planned: int, rule: str) -> Outcome:
    """The item's outcome from its trials under ``rule`` (all, majority, any). A trial whose
    judge checks were not judged (no model) is neither passed nor failed: when the other
    trials cannot decide without it, the item is skipped."""
    statuses = [t.record.status for t in trials]
    passed = statuses.count(TrialStatus.PASS)
    failed = sum(s in (TrialStatus.FAIL, TrialStatus.ERROR) for s in statuses)
    if len(statuses) < planned:  # the run stopped before every trial was in
        failed += planned - len(statuses)
    if rule == "all":
        needed, fails_at = planned, 1
    elif rule == "majority":
        needed, fails_at = planned // 2 + 1, planned - planned // 2
    elif rule == "any":
        needed, fails_at = 1, planned
    else:
        raise ValueError(f"unknown pass rule {rule!r}")
    if passed >= needed:
        return Outcome.PASSED
    if failed >= fails_at:
        return Outcome.FAILED
    return Outcome.SKIPPED


def failure_text(
    key: CaseKey,
    trials: list[Trial],
    planned: int,
    rule: str,
    show: str | None,
    stopped: str | None = None,
) -> str:
    """Why the item failed: a headline naming the rule, then each trial that did not pass
    (trials that failed the same way are shown once), then how to see one whole: ``show``
    is the command that prints a case-trial of the run (``caseforge show RUN``)."""
    passed = sum(t.record.status is TrialStatus.PASS for t in trials)
    lines = [f"{key}: {passed} of {planned} trials passed; {RULES[rule]} (--caseforge-pass {rule})"]
    if len(trials) < planned:
        lines.append(
            f"{planned - len(trials)} trial(s) did not run: {stopped or 'the run stopped'}"
        )
    shown: dict[str, list[int]] = {}  # each body, and the trials that gave it
    for trial in sorted(trials, key=lambda t: t.record.trial):
        if trial.record.status is not TrialStatus.PASS:
            shown.setdefault(_body(trial), []).append(trial.record.trial)
    for body, numbers in shown.items():
        status = next(t.record.status for t in trials if t.record.trial == numbers[0])
        which = "trial" if len(numbers) == 1 else "trials"
        lines.append(f"{which} {', '.join(map(str, numbers))}: {status.value}")
        lines.append(body)
    first = next((t.record.trial for t in trials if t.record.status is not TrialStatus.PASS), None)
    if show is not None and first is not None:
        lines.append(f"the whole case-trial: {show} {key.case_id} --trial {first}")
    return "\n".join(line for line in lines if line)


def _body(trial: Trial) -> str:
    """A trial that did not pass: its agent error, its checks that did not pass (as
    ``caseforge show`` prints them), how many others passed, and the reply's start."""
    record = trial.record
    lines = []
    if record.error:
        kept = [line for line in record.error.splitlines() if line.strip()][-ERROR_LINES:]
        lines.append("  error:")
        lines += [f"    {line}" for line in kept]
    bad = [
        replace(c, reason=NOT_JUDGED) if c.status is CheckStatus.NOT_JUDGED else c
        for c in record.checks
        if c.status in NOT_PASSING
    ]
    lines += check_lines(bad)
    others = len(record.checks) - len(bad)
    if others:
        lines.append(f"  ({others} other check{'s' if others != 1 else ''} passed or skipped)")
    if trial.reply:
        excerpt = trial.reply.strip()
        if len(excerpt) > REPLY_CHARS:
            excerpt = excerpt[: REPLY_CHARS - 1] + "…"
        lines.append("  reply:")
        lines += [f"    {line}" for line in excerpt.splitlines()]
    return "\n".join(lines)


def skip_text(trials: list[Trial]) -> str:
    """Why an item is skipped: its judge checks were not judged (no model configured)."""
    judged = [c for t in trials for c in t.record.checks if c.status is CheckStatus.NOT_JUDGED]
    names = sorted({c.name for c in judged})
    which = f" ({', '.join(names)})" if names else ""
    return (
        f"{NOT_JUDGED}{which}: give the suite's judge a model and an endpoint, or pass "
        "--caseforge-no-judge to skip judge checks on purpose"
    )
