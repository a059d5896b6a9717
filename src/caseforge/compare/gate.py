"""``caseforge gate``: a run against a committed baseline, rule by rule (DESIGN §5, §7).

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
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree as ET

from caseforge.case.suite import GateRule
from caseforge.compare.compare import compare_runs
from caseforge.compare.outcomes import RunOutcomes, metric_value
from caseforge.stats import bootstrap_paired_ratio

ORDER = {"pass": 0, "within-noise": 1, "regression": 2}


@dataclass(frozen=True)
class RuleVerdict:
    """One rule's verdict and a one-line detail."""

    rule: str
    verdict: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "verdict": self.verdict, "detail": self.detail}


@dataclass(frozen=True)
class GateResult:
    verdict: str
    rules: list[RuleVerdict]
    run_id: str | None
    baseline_run_id: str | None

    @property
    def exit_code(self) -> int:
        return 1 if self.verdict == "regression" else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "run_id": self.run_id,
            "baseline_run_id": self.baseline_run_id,
            "rules": [r.to_json() for r in self.rules],
        }


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


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _no_significant_drop(rule: GateRule, run: RunOutcomes, base: RunOutcomes) -> RuleVerdict:
    name = describe(rule)
    metric = rule.metric or ""
    if metric == "pass_rate":
        c = compare_runs(base, run)
        if c.difference is None:
            return RuleVerdict(name, "pass", "no paired cases to compare")
        base_text = f"{c.pass_rate_a:.1%} → {c.pass_rate_b:.1%} over {len(c.paired)} paired cases"
        tested = (
            f"{c.test} p = {c.p_value:.3g}; "
            f"{len(c.newly_failing)} newly failing, {len(c.newly_passing)} newly passing"
        )
        if c.difference >= 0 or (not c.newly_failing and c.test == "mcnemar-exact"):
            return RuleVerdict(name, "pass", f"{base_text} ({tested})")
        if c.p_value < rule.alpha:
            failing = ", ".join(c.newly_failing[:8]) + (" …" if len(c.newly_failing) > 8 else "")
            return RuleVerdict(name, "regression", f"{base_text} ({tested}): {failing}")
        mde = f"; detectable ≈{abs(c.mde):.1%}" if c.mde else ""
        return RuleVerdict(name, "within-noise", f"{base_text} ({tested}{mde})")
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
            return RuleVerdict(name, "pass", f"no paired cases with items in {field!r}")
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
            return RuleVerdict(name, "pass", text)
        if interval is not None and interval[1] < 0:
            return RuleVerdict(name, "regression", text)
        return RuleVerdict(name, "within-noise", text)
    return RuleVerdict(
        name,
        "regression",
        f"no paired test for {metric!r}: use max, min, max_increase or max_drop for it",
    )


def _bounds(rule: GateRule, run: RunOutcomes, base: RunOutcomes) -> RuleVerdict:
    name = describe(rule)
    metric = rule.metric or ""
    value = metric_value(run.metrics, metric)
    if not isinstance(value, int | float):
        return RuleVerdict(name, "pass", f"{metric} is not defined for this run ({value})")
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
        return RuleVerdict(name, "regression", "; ".join(problems))
    return RuleVerdict(name, "pass", detail)


def _tag(rule: GateRule, run: RunOutcomes) -> RuleVerdict:
    name = describe(rule)
    tagged = {cid: c for cid, c in run.cases.items() if rule.tag in c.tags}
    failing = sorted(
        cid
        for cid, c in tagged.items()
        if len(c.statuses) < run.trials or any(s != "pass" for s in c.statuses)
    )
    if not tagged:
        return RuleVerdict(name, "pass", f"no case tagged {rule.tag!r} in this run")
    if failing:
        details = [
            f"{cid} ({''.join(s[0].upper() for s in tagged[cid].statuses)})" for cid in failing
        ]
        return RuleVerdict(
            name, "regression", f"{len(failing)} of {len(tagged)} failing: {', '.join(details)}"
        )
    return RuleVerdict(name, "pass", f"all {len(tagged)} passed every trial")


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
    worst = max((v.verdict for v in verdicts), key=ORDER.__getitem__, default="pass")
    return GateResult(worst, verdicts, run.run_id, base.run_id)


def gate_text(result: GateResult) -> str:
    lines = [f"gate: {result.verdict} (run {result.run_id} vs baseline {result.baseline_run_id})"]
    for rule in result.rules:
        lines.append(f"  [{rule.verdict}] {rule.rule} — {rule.detail}")
    return "\n".join(lines)


def gate_markdown(result: GateResult) -> str:
    icon = {"pass": "✅", "within-noise": "〰️", "regression": "❌"}
    lines = [
        f"### caseforge gate: {icon[result.verdict]} {result.verdict}",
        "",
        f"run `{result.run_id}` vs baseline `{result.baseline_run_id}`",
        "",
        "| rule | verdict | detail |",
        "|---|---|---|",
    ]
    for rule in result.rules:
        cells = [html.escape(x).replace("|", "\\|") for x in (rule.rule, rule.verdict, rule.detail)]
        lines.append(f"| {cells[0]} | {icon[rule.verdict]} {cells[1]} | {cells[2]} |")
    return "\n".join(lines) + "\n"


def gate_junit(result: GateResult) -> str:
    suite = ET.Element("testsuite", name="caseforge gate", tests=str(len(result.rules)))
    failures = 0
    for rule in result.rules:
        case = ET.SubElement(suite, "testcase", classname="gate", name=rule.rule)
        if rule.verdict == "regression":
            failures += 1
            ET.SubElement(case, "failure", message=rule.detail[:500]).text = rule.detail
        elif rule.verdict == "within-noise":
            ET.SubElement(case, "system-out").text = f"within noise: {rule.detail}"
    suite.set("failures", str(failures))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
