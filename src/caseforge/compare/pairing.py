"""``caseforge compare``: two runs on the same cases, paired case by case.

Cases added, removed, or whose expectations changed between the runs are listed apart and
left out of the pairing. With one trial per case the test is exact McNemar on the
discordant cases (b = newly failing, c = newly passing); with several it is the paired t
on per-case means. Beside a "no significant difference" the minimum detectable effect says
how large a difference this many cases could have seen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Literal

from pydantic import BaseModel

from caseforge.compare.outcomes import RunOutcomes
from caseforge.results import RunStatus, TrialStatus, trial_letters
from caseforge.stats import mcnemar_chi2, mcnemar_exact, mde_paired, paired_difference, z_value
from caseforge.stats.paired import CHI2_MIN_DISCORDANT
from caseforge.values import pct

PairedTest = Literal["mcnemar-exact", "paired-t"]

ALPHA = 0.05
DEFAULT_DISCORDANCE = 0.15  # for the MDE when the runs show no discordant case at all


@dataclass
class Comparison:
    """The paired comparison of run B against run A."""

    a: RunOutcomes
    b: RunOutcomes
    paired: list[str]
    added: list[str]
    removed: list[str]
    changed: list[str]
    newly_passing: list[str]
    newly_failing: list[str]
    changed_checks: dict[str, list[str]]
    pass_rate_a: float | None
    pass_rate_b: float | None
    difference: float | None
    difference_ci: tuple[float, float] | None
    test: PairedTest
    p_value: float
    mcnemar_p: float
    chi2_p: float | None
    mde: float | None
    notes: list[str] = field(default_factory=list)
    same_run: bool = False  # both sides are one run, as it was: nothing to test

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA

    def to_result(self) -> CompareResult:
        """The comparison as ``caseforge compare --json`` prints it."""
        return CompareResult(
            run_a=self.a.run_id,
            run_b=self.b.run_id,
            config_a=self.a.config,
            config_b=self.b.config,
            paired_cases=len(self.paired),
            cases_added=self.added,
            cases_removed=self.removed,
            cases_changed=self.changed,
            newly_passing=self.newly_passing,
            newly_failing=self.newly_failing,
            changed_checks=self.changed_checks,
            discordant=Discordant(b=len(self.newly_failing), c=len(self.newly_passing)),
            mcnemar_p=self.mcnemar_p,
            chi2_p=self.chi2_p,
            test=self.test,
            p_value=self.p_value,
            significant=self.significant,
            pass_rate_a=self.pass_rate_a,
            pass_rate_b=self.pass_rate_b,
            difference=self.difference,
            difference_ci=self.difference_ci,
            mde=self.mde,
            notes=self.notes,
        )


class Discordant(BaseModel):
    """Discordant pairs: ``b`` newly failing, ``c`` newly passing."""

    b: int
    c: int


class CompareResult(BaseModel):
    """The paired comparison of run B against run A, as JSON."""

    run_a: str | None
    run_b: str | None
    config_a: str | None
    config_b: str | None
    paired_cases: int
    cases_added: list[str]
    cases_removed: list[str]
    cases_changed: list[str]
    newly_passing: list[str]
    newly_failing: list[str]
    changed_checks: dict[str, list[str]]
    discordant: Discordant
    mcnemar_p: float
    chi2_p: float | None
    test: PairedTest
    p_value: float
    significant: bool
    pass_rate_a: float | None
    pass_rate_b: float | None
    difference: float | None
    difference_ci: tuple[float, float] | None
    mde: float | None
    notes: list[str]


@dataclass(slots=True)
class CasePair:
    """One case in both runs: its trials as letters (``PPF``) and its expectations' digest
    on each side, and its per-check ``(passed, graded)`` counts (needed only for a case
    whose outcome flipped)."""

    id: str
    a: str
    b: str
    digest_a: str | None = None
    digest_b: str | None = None
    checks_a: dict[str, tuple[int, int]] | None = None
    checks_b: dict[str, tuple[int, int]] | None = None


PASSED = TrialStatus.PASS.letter


def letters_passing(letters: str) -> bool:
    """A case passes when a majority of its trials pass (as :attr:`CaseOutcome.passing`)."""
    return letters.count(PASSED) * 2 > len(letters)


def _check_passing(checks: dict[str, tuple[int, int]] | None, name: str) -> bool | None:
    found = checks.get(name) if checks else None
    if not found or not found[1]:
        return None
    return found[0] * 2 > found[1]


def compare_runs(a: RunOutcomes, b: RunOutcomes) -> Comparison:
    """Pair ``b`` against ``a`` by case id and test the difference."""
    common = sorted(set(a.cases) & set(b.cases))
    pairs = [
        CasePair(
            cid,
            trial_letters(a.cases[cid].statuses),
            trial_letters(b.cases[cid].statuses),
            a.cases[cid].digest,
            b.cases[cid].digest,
            a.cases[cid].checks,
            b.cases[cid].checks,
        )
        for cid in common
    ]
    added = sorted(set(b.cases) - set(a.cases))
    removed = sorted(set(a.cases) - set(b.cases))
    return compare_pairs(a, b, pairs, added, removed)


def compare_pairs(
    a: RunOutcomes, b: RunOutcomes, pairs: list[CasePair], added: list[str], removed: list[str]
) -> Comparison:
    """The comparison of ``b`` against ``a`` from their common cases' pairs (by case id) and
    the cases only one side has: what :func:`compare_runs` computes from whole outcomes, and
    the web app from pairs its store joined in SQL (``a`` and ``b`` may then hold no case)."""
    changed = [p.id for p in pairs if p.digest_a and p.digest_b and p.digest_a != p.digest_b]
    left_out = set(changed)
    kept = [p for p in pairs if p.id not in left_out and p.a and p.b]
    paired = [p.id for p in kept]
    newly_passing: list[str] = []
    newly_failing: list[str] = []
    flipped: dict[str, list[str]] = {}
    means_a: list[float] = []
    means_b: list[float] = []
    for p in kept:  # one pass: 100,000 pairs are the hot path of the web app's compare
        passes_a, passes_b = p.a.count(PASSED), p.b.count(PASSED)
        means_a.append(passes_a / len(p.a))
        means_b.append(passes_b / len(p.b))
        was, now = passes_a * 2 > len(p.a), passes_b * 2 > len(p.b)
        if was == now:
            continue
        (newly_passing if now else newly_failing).append(p.id)
        names = sorted(set(p.checks_a or {}) | set(p.checks_b or {}))
        flipped[p.id] = [
            n for n in names if _check_passing(p.checks_a, n) != _check_passing(p.checks_b, n)
        ]
    changed_checks = {cid: flipped[cid] for cid in newly_passing + newly_failing}

    n = len(paired)
    rate_a = sum(means_a) / n if n else None
    rate_b = sum(means_b) / n if n else None
    bcount, ccount = len(newly_failing), len(newly_passing)
    exact_p = mcnemar_exact(bcount, ccount)
    chi2_p = mcnemar_chi2(bcount, ccount)[1] if bcount + ccount >= CHI2_MIN_DISCORDANT else None
    single_trial = all(len(p.a) == 1 and len(p.b) == 1 for p in kept)
    notes = []
    test: PairedTest
    if single_trial:
        test, p_value = "mcnemar-exact", exact_p
        difference = (rate_b - rate_a) if n and rate_a is not None and rate_b is not None else None
        diff = paired_difference(means_a, means_b)
        ci = diff.ci if n >= 2 else None
        discordance = (bcount + ccount) / n if n else 0.0
        psi = discordance if discordance > 0 else DEFAULT_DISCORDANCE
        mde = mde_paired(n, psi) if n else None
        if discordance == 0:
            notes.append(f"no discordant case: the MDE assumes a discordance rate of {psi:.0%}")
    else:
        diff = paired_difference(means_a, means_b)
        test, p_value = "paired-t", diff.p_value
        difference, ci = (diff.difference, diff.ci) if n >= 2 else (diff.difference, None)
        # Two-sided α = 0.05 and 80 % power: (z_0.975 + z_0.8) standard errors.
        power_z = NormalDist().inv_cdf(0.8)
        mde = (z_value(0.95) + power_z) * diff.se if n >= 2 and diff.se > 0 else None
    if ci is not None:  # a difference of two rates lies in [-1, 1]
        ci = (max(-1.0, ci[0]), min(1.0, ci[1]))
    if mde is not None and not math.isfinite(mde):  # too few cases to detect anything
        mde = None
    same = _same_pairs(a, b, pairs, added, removed)
    if same:
        mde = None  # nothing was tested
        notes = [f"both sides are run {a.run_id}: the same run, so there is no difference"]
    elif mde is None:
        notes = [n for n in notes if "the MDE assumes" not in n]
    for side in (a, b):
        if side.status is not RunStatus.FINISHED:
            notes.append(f"run {side.run_id} is {side.status.value}: some case-trials never ran")
    if changed:
        notes.append(f"{len(changed)} case(s) changed expectations between the runs: left out")
    return Comparison(
        a=a,
        b=b,
        same_run=same,
        paired=paired,
        added=added,
        removed=removed,
        changed=changed,
        newly_passing=newly_passing,
        newly_failing=newly_failing,
        changed_checks=changed_checks,
        pass_rate_a=rate_a,
        pass_rate_b=rate_b,
        difference=difference,
        difference_ci=ci,
        test=test,
        p_value=p_value,
        mcnemar_p=exact_p,
        chi2_p=chi2_p,
        mde=mde,
        notes=notes,
    )


def _same_pairs(
    a: RunOutcomes, b: RunOutcomes, pairs: list[CasePair], added: list[str], removed: list[str]
) -> bool:
    """One run on both sides, as it was: the same id and the same trials of the same cases
    (a report.json written before a --resume is the same id, and not the same outcomes)."""
    return (
        a.run_id is not None
        and a.run_id == b.run_id
        and not added
        and not removed
        and all(p.a == p.b and p.digest_a == p.digest_b for p in pairs)
    )


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f} points"


def comparison_text(c: Comparison) -> str:
    """The comparison as plain text for the terminal."""
    lines = [
        f"compare {c.a.label} ({c.a.run_id}) → {c.b.label} ({c.b.run_id})",
        f"paired cases: {len(c.paired)}"
        + (f"; added {len(c.added)}" if c.added else "")
        + (f"; removed {len(c.removed)}" if c.removed else "")
        + (f"; expectations changed {len(c.changed)} (left out)" if c.changed else ""),
    ]
    ci = c.difference_ci
    ci_text = f" (95% CI {_points(ci[0])} … {_points(ci[1])})" if ci else ""
    lines.append(
        f"pass rate {pct(c.pass_rate_a)} → {pct(c.pass_rate_b)}: {_points(c.difference)}{ci_text}"
    )
    test = "exact McNemar" if c.test == "mcnemar-exact" else "paired t on case means"
    verdict = "significant" if c.significant else "no significant difference"
    line = f"{test}: p = {c.p_value:.4g} → {verdict}"
    if c.same_run:
        line = f"no difference: both sides are run {c.a.run_id}, the same run (nothing to test)"
    elif not c.significant and c.mde is not None:
        line += (
            f"; with {len(c.paired)} cases the smallest detectable difference "
            f"is ≈{100 * abs(c.mde):.1f} points"
        )
    lines.append(line)
    lines.append(
        f"discordant: {len(c.newly_failing)} newly failing, {len(c.newly_passing)} newly passing"
    )
    for title, ids in (("newly failing", c.newly_failing), ("newly passing", c.newly_passing)):
        for cid in ids:
            checks = ", ".join(c.changed_checks.get(cid, [])) or "(no single check flipped)"
            lines.append(f"  {title}: {cid} — {checks}")
    for label, ids in (("added", c.added), ("removed", c.removed), ("changed", c.changed)):
        if ids:
            lines.append(f"  {label}: {', '.join(ids)}")
    lines += [f"note: {n}" for n in c.notes if not (c.same_run and "the same run" in n)]
    return "\n".join(lines)
