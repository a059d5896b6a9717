"""What an invocation will run: its runs (one per configuration), their cases and trials,
and the counts the progress display shows."""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field

from caseforge.case.load import Suite
from caseforge.case.model import Case
from caseforge.errors import UsageError

# Above this many case-trials, a shard's share is estimated, not counted (see RunPlan).
SHARD_COUNTED = 200_000

# What one invocation may ask for: a --trials above MAX_TRIALS, or more than
# MAX_CASE_TRIALS case-trials in all, is a usage error, said before anything is recorded.
MAX_TRIALS = 10_000
MAX_CASE_TRIALS = 10_000_000


@dataclass
class RunHandle:
    """One configuration's run within an invocation."""

    run_id: str
    config_name: str | None
    config: dict[str, object]
    # Kept out of repr: asyncio formats the task result, and 10,000 cases take seconds.
    cases: dict[str, Case] = field(repr=False)


@dataclass
class RunPlan:
    """The runs to drive and which of their case-trials are already stored."""

    suite: Suite = field(repr=False)
    handles: list[RunHandle]
    trials: int
    clock: str  # ISO time for cases without their own clock
    done: dict[str, set[tuple[str, int]]] = field(default_factory=dict)
    replay_from: str | None = None  # a rescore: the stored run whose outcomes are graded again
    left_out: list[str] = field(default_factory=list)  # a rescore: cases no longer in the suite
    shard: Shard | None = None  # --shard I/N: only this share of the case-trials

    @property
    def skipped(self) -> int:
        """The case-trials of this invocation's share that were stored already (a shard's
        count is an estimate when counting one by one would take long: see ``estimated``)."""
        stored = sum(len(done) for done in self.done.values())
        if self.shard is None:
            return stored
        if self.estimated:
            return round(stored / self.shard.count)
        return sum(
            1 for done in self.done.values() for case_id, trial in done if self.mine(case_id, trial)
        )

    @property
    def estimated(self) -> bool:
        """Whether :meth:`planned` and :attr:`skipped` estimate a shard's share rather than
        count it: a shard's share is a hash per case-trial, and counting stays O(cases)
        only up to SHARD_COUNTED case-trials."""
        if self.shard is None or self.shard.cases is not None:
            return False
        return sum(len(h.cases) for h in self.handles) * self.trials > SHARD_COUNTED

    def planned(self) -> int:
        """How many case-trials this invocation will run (its shard's, less those stored).

        O(cases + stored), never O(cases x trials), so the first case-trial starts at once
        whatever ``--trials`` is; a large shard's share is estimated (``estimated``)."""
        total = 0
        for handle in self.handles:
            done = self.done.get(handle.run_id, set())
            whole = len(handle.cases) * self.trials
            if self.shard is None:
                total += whole - len(done)
            elif self.estimated:
                total += round((whole - len(done)) / self.shard.count)
            else:
                for case_id in handle.cases:
                    for trial in range(1, self.trials + 1):
                        if (case_id, trial) not in done and self.mine(case_id, trial):
                            total += 1
        return max(total, 0)

    def mine(self, case_id: str, trial: int) -> bool:
        return self.shard is None or self.shard.holds(case_id, trial)


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``: a stable share of the case-trials by hash of
    (case id, trial), the same on every machine, so N shards cover a run exactly once.

    ``cases`` names the share instead, every trial of each case named: the pytest plugin's
    workers (``-n``) each run the cases of the test items they were given, a share that the
    callers of all N shards must agree on between them."""

    index: int
    count: int
    cases: frozenset[str] | None = None

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if match is None:
            raise UsageError(f"--shard {text!r}: expected I/N, like 1/4")
        index, count = int(match[1]), int(match[2])
        if not 1 <= index <= count:
            raise UsageError(f"--shard {text}: I must be from 1 to N ({count})")
        return cls(index, count)

    def holds(self, case_id: str, trial: int) -> bool:
        if self.cases is not None:
            return case_id in self.cases
        digest = hashlib.sha256(f"{case_id}/{trial}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass
class Progress:
    """Counts the progress display shows."""

    total: int
    estimated: bool = False  # a shard's share, estimated: shown as ~total
    done: int = 0
    passed: int = 0
    errors: int = 0
    cost_usd: float = 0.0
    started: float = field(default_factory=time.perf_counter)

    @property
    def total_text(self) -> str:
        """``1200``, or ``~1200`` for an estimate."""
        return f"~{self.total}" if self.estimated else str(self.total)

    @property
    def eta_s(self) -> float | None:
        if not self.done:
            return None
        elapsed = time.perf_counter() - self.started
        return elapsed / self.done * (self.total - self.done)
