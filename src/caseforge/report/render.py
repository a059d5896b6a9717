"""Rendering a report: plain text for the terminal, Markdown for a PR comment, JUnit XML
(one testcase per case) and a self-contained HTML page (no CDN, every user string escaped).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable

from caseforge.report.junit import JUnitCase, JUnitOutcome, junit_xml
from caseforge.report.model import CaseResult, RunReport
from caseforge.results import CheckStatus, RunStatus, TrialStatus
from caseforge.values import pct


def money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}s"


def headline(report: RunReport) -> list[tuple[str, str]]:
    """The key figures as (label, value) pairs, shared by every format."""
    s = report.summary
    lo, hi = s.pass_rate_ci
    planned = len(report.cases) * report.trials
    stored = f"{len(report.cases)} × {report.trials} = {planned}"
    if s.case_trials != planned:  # a stopped or killed run: say what is missing
        stored += f", {s.case_trials} stored"
    rows = [("status", _status(report))]
    narrowed = report.selection
    if narrowed is not None:
        rows.append(("selection", f"{narrowed}: some of the suite's cases, not all"))
    rows += [
        ("cases × trials", stored),
        (
            "pass rate",
            f"{pct(s.pass_rate)} (95% CI {pct(lo)}–{pct(hi)}, case-clustered SE "
            f"{pct(s.pass_rate_se)})",
        ),
        ("fully passing cases", f"{s.fully_passing_cases} of {s.cases}"),
        ("pass^k", "  ".join(f"k={k}: {pct(v)}" for k, v in s.pass_hat_k.items()) or "n/a"),
        ("pass@k", "  ".join(f"k={k}: {pct(v)}" for k, v in s.pass_at_k.items()) or "n/a"),
        ("errors", str(s.errors)),
    ]
    judge = report.judge
    if judge is not None:
        rows.append(
            (
                "judge",
                f"{judge.model} ({judge.prompt_version} {judge.prompt_hash}): "
                f"{judge.calls} calls, {judge.cache_hits} cache hits, {money(judge.cost_usd)}"
                + (f", {judge.unpriced_calls} unpriced" if judge.unpriced_calls else ""),
            )
        )
    if s.judge_checks_skipped:
        rows.append(
            ("judge", f"{s.judge_checks_skipped} judge checks skipped on purpose (--no-judge)")
        )
    if s.incomplete:
        reasons = "; ".join(s.incomplete_reasons) or "judge checks not judged"
        rows.append(("incomplete", f"{s.incomplete} case-trials ({reasons})"))
    for name, item in s.items.items():
        rows.append(
            (
                f"items: {name}",
                f"precision {pct(item.precision)}, recall {pct(item.recall)} "
                f"(tp {item.tp}, fp {item.fp}, fn {item.fn})",
            )
        )
    if s.clean_case_trials:
        rows.append(
            (
                "false-positive rate",
                f"{pct(s.false_positive_rate)} of {s.clean_case_trials} clean case-trials",
            )
        )
    cost = f"{money(s.cost_usd)} total, {money(s.cost_per_run)} per case-trial"
    if s.cost_per_true_finding is not None:
        cost += f", {money(s.cost_per_true_finding)} per true finding"
    if s.simulated_user_cost_usd:
        cost += f"; simulated users {money(s.simulated_user_cost_usd)} more, apart"
    rows.append(("cost", cost))
    rows.append(("latency", f"p50 {seconds(s.latency_p50_s)}, p95 {seconds(s.latency_p95_s)}"))
    hold = s.holdout
    if hold and hold.alarm:
        rows.append(
            (
                "holdout alarm",
                f"dev {pct(hold.dev_pass_rate)} vs test {pct(hold.test_pass_rate)} "
                f"(p = {hold.p_value:.3g}): the agent may be tuned to the dev set",
            )
        )
    elif hold:
        rows.append(
            (
                "dev vs test",
                f"{pct(hold.dev_pass_rate)} vs {pct(hold.test_pass_rate)} "
                f"(p = {hold.p_value:.3g}, no sign of tuning to dev)",
            )
        )
    if s.most_failing_checks:
        rows.append(
            (
                "most failing checks",
                ", ".join(f"{c.check} ({c.fail}/{c.graded})" for c in s.most_failing_checks),
            )
        )
    return rows


def _status(report: RunReport) -> str:
    if report.status is RunStatus.FINISHED:
        return "finished"
    return (
        f"{report.status.value}: UNFINISHED, the figures cover only what was stored "
        f"(finish it with `caseforge run SUITE --resume {report.run_id}`)"
    )


def _title(report: RunReport) -> str:
    config = f" [{report.config}]" if report.config else ""
    return f"{report.suite}{config} — run {report.run_id}"


def _dataset(report: RunReport) -> str:
    commit = (report.dataset_commit or "no git")[:12]
    return commit + (" (dirty)" if report.dataset_dirty else "")


WORST_FIRST = (TrialStatus.ERROR, TrialStatus.FAIL, TrialStatus.INCOMPLETE)
NOT_PASSING_CHECKS = (CheckStatus.FAIL, CheckStatus.ERROR, CheckStatus.NOT_JUDGED)


def _case_failures(case: CaseResult) -> list[tuple[int, str]]:
    rows = []
    for trial in case.trials:
        if trial.status is TrialStatus.PASS:
            continue
        if trial.status is TrialStatus.ERROR:
            why = (trial.error or "error").splitlines()[0]
        else:
            bad = [c for c in trial.checks if c.status in NOT_PASSING_CHECKS]
            why = "; ".join(f"{c.name}: {c.reason or c.status.value}" for c in bad)
        rows.append((trial.trial, why))
    return rows


def failing(report: RunReport, limit: int | None = None) -> list[tuple[str, int, str]]:
    """(case id, trial, why) for every case-trial that did not pass."""
    rows = [(case.id, t, why) for case in report.cases for t, why in _case_failures(case)]
    return rows[:limit] if limit else rows


def to_text(report: RunReport, failures: int = 15) -> str:
    lines = [_title(report), f"agent {report.agent} · dataset {_dataset(report)}"]
    width = max(len(label) for label, _ in headline(report))
    lines += [f"  {label.ljust(width)}  {value}" for label, value in headline(report)]
    rows = failing(report)
    if rows:
        lines.append(f"not passing ({len(rows)} case-trials):")
        for case_id, trial, why in rows[:failures]:
            lines.append(f"  {case_id} #{trial}: {_shortened(why)}")
        if len(rows) > failures:
            lines.append(
                f"  … {len(rows) - failures} more (caseforge report {report.run_id} --format html)"
            )
    return "\n".join(lines)


SHOWN_REASON = 400  # characters of a reason a text or Markdown report shows; report.json has all


def _shortened(why: str) -> str:
    return why if len(why) <= SHOWN_REASON else why[: SHOWN_REASON - 1] + "…"


def _md(text: object) -> str:
    return html.escape(str(text)).replace("|", "\\|").replace("\n", " ")


def to_markdown(report: RunReport, failures: int = 20) -> str:
    lines = [
        f"### caseforge: {_md(_title(report))}",
        "",
        f"agent `{_md(report.agent)}` · dataset `{_md(_dataset(report))}`",
        "",
        "| metric | value |",
        "|---|---|",
    ]
    lines += [f"| {_md(label)} | {_md(value)} |" for label, value in headline(report)]
    rows = failing(report)
    if rows:
        lines += [
            "",
            f"<details><summary>{len(rows)} case-trials not passing</summary>",
            "",
            "| case | trial | why |",
            "|---|---|---|",
        ]
        lines += [f"| `{_md(c)}` | {t} | {_md(_shortened(w))} |" for c, t, w in rows[:failures]]
        if len(rows) > failures:
            lines.append(f"| … | | {len(rows) - failures} more |")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def to_junit(report: RunReport) -> str:
    """One testcase per case; it fails when any trial fails, errors when any trial errors."""
    suite_name = report.suite + (f"[{report.config}]" if report.config else "")
    cases = []
    for case in report.cases:
        statuses = case.statuses
        reasons = [f"#{t}: {w}" for t, w in _case_failures(case)]
        if TrialStatus.ERROR in statuses:
            outcome = JUnitOutcome("error", reasons[0] if reasons else "error", "\n".join(reasons))
        elif TrialStatus.FAIL in statuses:
            outcome = JUnitOutcome("failure", reasons[0], "\n".join(reasons))
        elif TrialStatus.INCOMPLETE in statuses:
            outcome = JUnitOutcome("skipped", "incomplete: " + "; ".join(reasons))
        elif not statuses:
            outcome = JUnitOutcome("skipped", "not run")
        else:
            outcome = None
        time_s = sum(t.latency_s for t in case.trials)
        cases.append(JUnitCase(report.suite, case.id, outcome, time_s))
    if report.status is not RunStatus.FINISHED:  # CI must not read a partial run as green
        unfinished = JUnitOutcome("error", _status(report))
        cases.insert(0, JUnitCase(report.suite, "(run unfinished)", unfinished, 0.0))
    return junit_xml(suite_name, cases)


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d1d1f}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ddd;padding:4px 8px;
vertical-align:top;text-align:left}th{background:#f5f5f7}.pass{color:#11772d}.fail,.error{color:#b3261e}
.incomplete,.not_judged,.cannot_judge,.skipped{color:#8a6d00}pre{white-space:pre-wrap;margin:0;
max-width:48rem}details{margin:.3rem 0}summary{cursor:pointer}code{background:#f5f5f7;padding:0 3px}
"""


def _h(value: object) -> str:
    if isinstance(value, str):
        return html.escape(value)
    return html.escape(json.dumps(value, ensure_ascii=False, indent=1, default=str))


def to_html(report: RunReport) -> str:
    """A self-contained page: no scripts, no external resources, every user string escaped."""
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_h(_title(report))}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_h(_title(report))}</h1>",
        f"<p>agent <code>{_h(report.agent)}</code> · dataset <code>{_h(_dataset(report))}</code>"
        f" · status {_h(report.status.value)}</p>",
        "<table>",
    ]
    parts += [
        f"<tr><th>{_h(label)}</th><td>{_h(value)}</td></tr>" for label, value in headline(report)
    ]
    parts.append("</table><h2>Cases</h2>")
    for case in report.cases:
        statuses = case.statuses
        worst = next(
            (
                s
                for s in (TrialStatus.ERROR, TrialStatus.FAIL, TrialStatus.INCOMPLETE)
                if s in statuses
            ),
            TrialStatus.PASS,
        )
        parts.append(
            f"<details{' open' if worst is not TrialStatus.PASS else ''}><summary>"
            f"<span class='{worst.value}'>{_h(worst.value)}</span> <code>{_h(case.id)}</code> — "
            f"{case.passed}/{len(statuses)} trials passed · {_h(case.category)}</summary>"
            f"<p>input</p><pre>{_h(case.input)}</pre>"
        )
        for trial in case.trials:
            parts.append(
                f"<p>trial {trial.trial}: <span class='{trial.status.value}'>"
                f"{_h(trial.status.value)}</span> · {trial.latency_s:.3f}s</p>"
            )
            if trial.error:
                parts.append(f"<pre class='error'>{_h(trial.error)}</pre>")
            if trial.reply:
                parts.append(f"<p>reply</p><pre>{_h(trial.reply)}</pre>")
            if trial.checks:
                parts.append(
                    "<table><tr><th>check</th><th>mode</th><th>status</th><th>expected</th>"
                    "<th>actual</th><th>why</th></tr>"
                )
                for check in trial.checks:
                    rendered = case.expect.get(check.name, "")
                    parts.append(
                        f"<tr><td>{_h(check.name)}<br><small>{_h(rendered)}</small></td>"
                        f"<td>{_h(check.mode)}</td>"
                        f"<td class='{check.status.value}'>{_h(check.status.value)}</td>"
                        f"<td><pre>{_h(check.expected)}</pre></td>"
                        f"<td><pre>{_h(check.actual)}</pre></td><td>{_h(check.reason)}</td></tr>"
                    )
                parts.append("</table>")
        parts.append("</details>")
    parts.append("</body></html>\n")
    return "".join(parts)


def to_json(report: RunReport) -> str:
    return report.model_dump_json(indent=2) + "\n"


FORMATS: dict[str, Callable[[RunReport], str]] = {
    "text": to_text,
    "md": to_markdown,
    "junit": to_junit,
    "html": to_html,
    "json": to_json,
}
