"""``caseforge gate``: a run against a committed baseline, rule by rule (docs/concepts/gate.md).

Each rule's verdict is ``pass``, ``within-noise`` (a drop the paired test cannot tell from
noise) or ``regression``; the overall verdict is the worst; only a regression fails CI.

Rules (``gate.rules`` in caseforge.yaml):
- ``{metric: pass_rate, no_significant_drop: true}``: the paired test over case outcomes
  (exact McNemar for one trial per case, the paired t on case means for several).
- ``{metric: items.<field>.recall|precision, no_significant_drop: true}``: a bootstrap over
  the paired cases; a regression when the whole interval of the change lies below zero.
- ``{metric: M, max: V}`` / ``{min: V}``: a ceiling or floor on the run's value.
- ``{metric: M, max_increase: R}``: at most R (relative) above the baseline, e.g. cost.
- ``{metric: M, max_drop: D}``: at most D (absolute) below the baseline.
- ``{tag: must-pass}``: every case with the tag passes every trial.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

from caseforge.case.positions import locate_in_yaml
from caseforge.case.suite import GateRule, gate_metrics, gate_rule_problems
from caseforge.compare.outcomes import RunOutcomes, metric_value
from caseforge.compare.pairing import compare_runs
from caseforge.errors import DatasetError, Problem, UsageError
from caseforge.report.junit import JUnitCase, JUnitOutcome, junit_xml
from caseforge.report.model import selection
from caseforge.results import TrialStatus, trial_letters
from caseforge.stats import bootstrap_paired_ratio


class GateDecision(StrEnum):
    """What the gate decides, for a rule and overall (the worst rule's), in order of
    severity; only a regression fails CI. Stored and printed as ``verdict``."""

    PASS = "pass"
    WITHIN_NOISE = "within-noise"
    REGRESSION = "regression"

    @property
    def severity(self) -> int:
        return list(GateDecision).index(self)


class RuleVerdict(BaseModel):
    """One rule's verdict and a one-line detail."""

    rule: str
    verdict: GateDecision
    detail: str


class NewlyFailingCase(BaseModel):
    """A case that passed in the baseline and fails now (each side by a majority of its
    trials, as ``compare`` pairs them), where its file is, and why it fails."""

    case_id: str
    path: str | None = Field(
        None, description="The case file, relative to the repository's top when in git."
    )
    line: int = Field(1, ge=1, description="The line of its first failing check, else 1.")
    baseline: str = Field(description="Its baseline trials as letters (PPP).")
    now: str = Field(description="Its trials in this run as letters (FFP).")
    checks: list[str] = Field(default_factory=list, description="The checks that flipped.")
    reason: str = Field("", description="Why it fails now: its first failing check or error.")


class GateResult(BaseModel):
    """The gate's overall verdict (the worst rule's) and every rule's."""

    verdict: GateDecision
    run_id: str | None
    baseline_run_id: str | None
    rules: list[RuleVerdict]
    notes: list[str] = Field(default_factory=list)
    newly_failing: list[NewlyFailingCase] = Field(
        default_factory=list,
        description="The cases that passed in the baseline and fail now, with their files.",
    )

    @property
    def exit_code(self) -> int:
        return 1 if self.verdict is GateDecision.REGRESSION else 0


def _verdict(rule: str, verdict: GateDecision, detail: str) -> RuleVerdict:
    return RuleVerdict(rule=rule, verdict=verdict, detail=detail)


def describe(rule: GateRule) -> str:
    """A short name for a rule, e.g. ``pass_rate: no significant drop``."""
    if rule.tag is not None:
        return f"tag {rule.tag}: every trial passes"
    parts = []
    if rule.no_significant_drop:
        parts.append("no significant drop")
    if rule.max is not None:
        parts.append(f"≤ {rule.max:g}")
    if rule.min is not None:
        parts.append(f"≥ {rule.min:g}")
    if rule.max_increase is not None:
        parts.append(f"at most +{rule.max_increase:.0%} vs baseline")
    if rule.max_drop is not None:
        parts.append(f"at most {rule.max_drop:g} below baseline")
    return f"{rule.metric}: {', '.join(parts)}"


def _fmt(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _no_significant_drop(rule: GateRule, run: RunOutcomes, base: RunOutcomes) -> RuleVerdict:
    name = describe(rule)
    metric = rule.metric or ""
    if metric == "pass_rate":
        c = compare_runs(base, run)
        if c.difference is None:
            return _verdict(name, GateDecision.PASS, "no paired cases to compare")
        base_text = f"{c.pass_rate_a:.1%} → {c.pass_rate_b:.1%} over {len(c.paired)} paired cases"
        tested = (
            f"{c.test} p = {c.p_value:.3g}; "
            f"{len(c.newly_failing)} newly failing, {len(c.newly_passing)} newly passing"
        )
        # The detail says what was found first ("dropped significantly"), then the figures.
        if c.difference >= 0 or (not c.newly_failing and c.test == "mcnemar-exact"):
            return _verdict(
                name, GateDecision.PASS, f"pass_rate did not drop: {base_text} ({tested})"
            )
        if c.p_value < rule.alpha:
            failing = ", ".join(c.newly_failing[:8]) + (" …" if len(c.newly_failing) > 8 else "")
            return _verdict(
                name,
                GateDecision.REGRESSION,
                f"pass_rate dropped significantly (p < {rule.alpha:g}): {base_text} ({tested}):"
                f" {failing}",
            )
        mde = f"; detectable ≈{abs(c.mde):.1%}" if c.mde else ""
        return _verdict(
            name,
            GateDecision.WITHIN_NOISE,
            f"pass_rate dropped within noise (p ≥ {rule.alpha:g}): {base_text} ({tested}{mde})",
        )
    parts = metric.split(".")
    if len(parts) == 3 and parts[0] == "items" and parts[2] in ("precision", "recall"):
        field, which = parts[1], parts[2]
        common = sorted(
            cid
            for cid in set(run.cases) & set(base.cases)
            if field in run.cases[cid].items
            and field in base.cases[cid].items
            and (run.cases[cid].digest == base.cases[cid].digest or not base.cases[cid].digest)
        )
        if not common:
            return _verdict(name, GateDecision.PASS, f"no paired cases with items in {field!r}")
        diff, interval = bootstrap_paired_ratio(
            [base.cases[c].items[field] for c in common],
            [run.cases[c].items[field] for c in common],
            which,
        )
        before = metric_value(base.metrics, metric)
        after = metric_value(run.metrics, metric)
        text = f"{_fmt(before)} → {_fmt(after)} ({diff:+.3f} over {len(common)} paired cases"
        if interval is not None:
            text += f", 95% bootstrap CI {interval[0]:+.3f} … {interval[1]:+.3f}"
        text += ")"
        if diff != diff or diff >= 0:  # NaN (undefined) or no drop
            return _verdict(name, GateDecision.PASS, f"{metric} did not drop: {text}")
        if interval is not None and interval[1] < 0:
            return _verdict(
                name, GateDecision.REGRESSION, f"{metric} dropped significantly: {text}"
            )
        return _verdict(name, GateDecision.WITHIN_NOISE, f"{metric} dropped within noise: {text}")
    return _verdict(
        name,
        GateDecision.REGRESSION,
        f"no paired test for {metric!r}: use max, min, max_increase or max_drop for it",
    )


def _bounds(rule: GateRule, run: RunOutcomes, base: RunOutcomes) -> RuleVerdict:
    name = describe(rule)
    metric = rule.metric or ""
    value = metric_value(run.metrics, metric)
    if not isinstance(value, int | float):
        return _verdict(name, GateDecision.PASS, f"{metric} is not defined for this run ({value})")
    problems = []
    if rule.max is not None and value > rule.max:
        problems.append(f"{_fmt(value)} > {rule.max:g}")
    if rule.min is not None and value < rule.min:
        problems.append(f"{_fmt(value)} < {rule.min:g}")
    before = metric_value(base.metrics, metric)
    if isinstance(before, int | float):
        if rule.max_increase is not None and value > before * (1 + rule.max_increase) + 1e-12:
            change = (value / before - 1) if before else float("inf")
            problems.append(
                f"{_fmt(before)} → {_fmt(value)} ({change:+.1%} > +{rule.max_increase:.0%})"
            )
        if rule.max_drop is not None and before - value > rule.max_drop + 1e-12:
            problems.append(
                f"{_fmt(before)} → {_fmt(value)} (drop {before - value:.4g} > {rule.max_drop:g})"
            )
    detail = f"{_fmt(before)} → {_fmt(value)}" if isinstance(before, int | float) else _fmt(value)
    if problems:
        return _verdict(name, GateDecision.REGRESSION, "; ".join(problems))
    return _verdict(name, GateDecision.PASS, detail)


def _tag(rule: GateRule, run: RunOutcomes) -> RuleVerdict:
    name = describe(rule)
    tagged = {cid: c for cid, c in run.cases.items() if rule.tag in c.tags}
    failing = sorted(
        cid
        for cid, c in tagged.items()
        if len(c.statuses) < run.trials or any(s is not TrialStatus.PASS for s in c.statuses)
    )
    if not tagged:
        return _verdict(name, GateDecision.PASS, f"no case tagged {rule.tag!r} in this run")
    if failing:
        details = [f"{cid} ({trial_letters(tagged[cid].statuses)})" for cid in failing]
        return _verdict(
            name,
            GateDecision.REGRESSION,
            f"{len(failing)} of {len(tagged)} failing: {', '.join(details)}",
        )
    return _verdict(name, GateDecision.PASS, f"all {len(tagged)} passed every trial")


def check_rules(
    rules: list[GateRule], run: RunOutcomes, config_path: Path, suite_tags: Iterable[str] = ()
) -> None:
    """Refuse rules that name a metric the run cannot have or a tag none of its cases
    carries: they would pass whatever happened, and switch that part of the gate off.
    ``suite_tags`` are the whole suite's, for a run of one split: a tag only the other
    split carries is the suite's, and its rule reports no such case in this run."""
    items = run.metrics.get("items")
    fields = list(items) if isinstance(items, dict) else []
    tags = {tag for case in run.cases.values() for tag in case.tags} | set(suite_tags)
    problems = gate_rule_problems(rules, gate_metrics(run.trials, fields), tags)
    if problems:
        found = []
        for index, key, message in problems:
            line, col = locate_in_yaml(config_path, ("gate", "rules", index, key))
            found.append(Problem(config_path, line, col, f"gate.rules.{index}.{key}", message))
        raise DatasetError(found)


def refuse_selection(run: RunOutcomes, options: Mapping[str, object], base: RunOutcomes) -> None:
    """A selection gated against a baseline of other cases would blame the rules for the
    cases it left out (a must-pass tag none of its cases carries, a pass rate over a
    handful of cases): refuse it, naming the selection and how its cases differ."""
    narrowed = selection(options)
    missing = sorted(set(base.cases) - set(run.cases))
    extra = sorted(set(run.cases) - set(base.cases))
    if narrowed is None or not (missing or extra):
        return
    differ = []
    if missing:
        differ.append(f"it lacks {len(missing)} case(s) of the baseline ({_listed(missing)})")
    if extra:
        differ.append(f"it has {len(extra)} case(s) the baseline has not ({_listed(extra)})")
    raise UsageError(
        f"run {run.run_id} is a selection ({narrowed}): {'; '.join(differ)}; gate a run of "
        "the whole suite (--split is fine), or against a baseline made from the same selection"
    )


def _listed(case_ids: list[str]) -> str:
    shown = ", ".join(case_ids[:8])
    return shown + (f" … ({len(case_ids)} in all)" if len(case_ids) > 8 else "")


def gate(run: RunOutcomes, base: RunOutcomes, rules: list[GateRule]) -> GateResult:
    """Apply every rule; the overall verdict is the worst one."""
    verdicts: list[RuleVerdict] = []
    for rule in rules:
        if rule.tag is not None:
            verdicts.append(_tag(rule, run))
            continue
        if rule.no_significant_drop:
            verdicts.append(_no_significant_drop(rule, run, base))
        if any(v is not None for v in (rule.max, rule.min, rule.max_increase, rule.max_drop)):
            verdicts.append(_bounds(rule, run, base))
    worst = max((v.verdict for v in verdicts), key=lambda v: v.severity, default=GateDecision.PASS)
    return GateResult(verdict=worst, run_id=run.run_id, baseline_run_id=base.run_id, rules=verdicts)


def gate_text(result: GateResult) -> str:
    lines = [
        f"gate: {result.verdict.value} (run {result.run_id} vs baseline {result.baseline_run_id})"
    ]
    for rule in result.rules:  # the finding first, then the rule it was held to
        lines.append(f"  [{rule.verdict.value}] {rule.detail}  (rule: {rule.rule})")
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines)


ICONS = {GateDecision.PASS: "✅", GateDecision.WITHIN_NOISE: "〰️", GateDecision.REGRESSION: "❌"}


def gate_markdown(result: GateResult) -> str:
    lines = [
        f"### caseforge gate: {ICONS[result.verdict]} {result.verdict.value}",
        "",
        f"run `{result.run_id}` vs baseline `{result.baseline_run_id}`",
        "",
        "| rule | verdict | detail |",
        "|---|---|---|",
    ]
    for rule in result.rules:
        cells = [
            html.escape(x).replace("|", "\\|") for x in (rule.rule, rule.verdict.value, rule.detail)
        ]
        lines.append(f"| {cells[0]} | {ICONS[rule.verdict]} {cells[1]} | {cells[2]} |")
    return "\n".join(lines) + "\n"


def gate_junit(result: GateResult) -> str:
    cases = []
    for rule in result.rules:
        outcome = None
        if rule.verdict is GateDecision.REGRESSION:
            outcome = JUnitOutcome("failure", rule.detail, rule.detail)
        elif rule.verdict is GateDecision.WITHIN_NOISE:
            outcome = JUnitOutcome("system-out", f"within noise: {rule.detail}")
        cases.append(JUnitCase("gate", rule.rule, outcome))
    return junit_xml("caseforge gate", cases)
