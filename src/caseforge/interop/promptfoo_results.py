"""``caseforge export promptfoo-results``: runs as promptfoo's results file, for a CI step
(promptfoo's GitHub Action, a script) that reads what ``promptfoo eval -o results.json``
writes.

The shape is promptfoo's ``OutputFile`` with an ``EvaluateSummaryV3`` (promptfoo's
``src/types``, ``src/util/output.ts``), as far as caseforge has the data:

```text
{
  evalId: "caseforge-RUN_ID",
  results: {                                   # EvaluateSummaryV3
    version: 3,
    timestamp: the first run's start (ISO 8601),
    prompts: [CompletedPrompt],                # one per run: a provider × prompt column
    results: [EvaluateResult],                 # one per case × run × trial
    stats: {successes, failures, errors, tokenUsage, durationMs}
  },
  config: {description, prompts, providers},
  shareableUrl: null,
  metadata: {exportedBy: "caseforge VERSION", runs, suite}
}
```

- ``CompletedPrompt``: ``{raw, label, provider, metrics: {score, testPassCount,
  testFailCount, testErrorCount, assertPassCount, assertFailCount, totalLatencyMs,
  tokenUsage, namedScores, namedScoresCount, cost}}``. ``raw`` and ``label`` are the
  configuration's ``prompt`` and ``prompt_label`` (an imported promptfoo suite's), else
  ``{{prompt}}``; ``provider`` its ``provider``, else ``caseforge:CONFIG``.
- ``EvaluateResult``: ``{id, promptIdx (the run's column), testIdx (the case, by id),
  promptId, provider: {id, label}, prompt: {raw, label}, testCase: {description (the
  case's own, as ``export promptfoo`` writes it, else its id), vars (its input, less a
  ``prompt`` rendered from it), metadata: {caseforge_case}}, vars, description, response:
  {output (the reply, else the output as JSON text), tokenUsage, cost, cached: false}, error
  (one line: a traceback's exception),
  failureReason (0 none, 1 an assertion, 2 an error), success, score, latencyMs,
  gradingResult: {pass, score, reason, namedScores, componentResults}, namedScores, cost,
  tokenUsage, metadata: {caseforge: {run_id, case_id, trial, status}}}``. Every trial of a
  case in a run has the same ``testCase``, so promptfoo's Action groups repeats as it groups
  its own (``testCase``, ``promptIdx``, ``provider.id``).
- A check is a ``componentResults`` entry ``{pass, score, reason, assertion: {type (the
  mode), value (what it expected), metric (its name)}}``; a check that grades nothing
  (``ignore``, a judge check under ``--no-judge``) is left out. ``score`` is the share of the
  rest that passed.
- ``stats``: a ``pass`` case-trial is a success, ``fail`` and ``incomplete`` (a check not
  judged) failures, ``error`` an error; ``tokenUsage`` is ``{total, prompt, completion,
  cached: 0, numRequests}``; ``durationMs`` the runs' latencies summed.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from caseforge._version import __version__
from caseforge.files import write_atomic
from caseforge.report.model import CaseResult, RunReport, TrialResult
from caseforge.results import CheckResult, CheckStatus, TrialStatus

DEFAULT_PROMPT = "{{prompt}}"
_GRADES_NOTHING = (CheckStatus.SKIPPED,)


@dataclass
class _Row:
    """One result, and the numbers the stats and metrics add up."""

    data: dict[str, object]
    success: bool
    failure: int
    score: float
    latency_ms: int
    cost: float
    usage: dict[str, int]
    named: dict[str, int]
    components: list[dict[str, object]]


def export_results(
    reports: Sequence[RunReport], out: Path, descriptions: Mapping[str, str] | None = None
) -> dict[str, int]:
    """Write ``out`` from the runs (the file appears whole or not at all); the stats written
    (successes, failures, errors). ``descriptions`` are the cases' own descriptions (an
    imported test's), by case id, which ``export promptfoo`` writes too."""
    data, rows = _results_file(reports, descriptions or {})
    write_atomic(out, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    stats = _stats(rows)
    return {
        k: int(v)
        for k, v in stats.items()
        if k in ("successes", "failures", "errors") and isinstance(v, int)
    }


def results_file(
    reports: Sequence[RunReport], descriptions: Mapping[str, str] | None = None
) -> dict[str, object]:
    """The results file of ``reports`` (each a column: its configuration's provider and
    prompt), as a JSON-ready mapping."""
    return _results_file(reports, descriptions or {})[0]


def _results_file(
    reports: Sequence[RunReport], descriptions: Mapping[str, str]
) -> tuple[dict[str, object], list[_Row]]:
    cases = sorted({case.id for report in reports for case in report.cases})
    test_index = {case_id: index for index, case_id in enumerate(cases)}
    prompts: list[dict[str, object]] = []
    rows: list[_Row] = []
    for column, report in enumerate(reports):
        prompt, provider = _column(report)
        mine = [
            _result(
                report,
                column,
                test_index[case.id],
                case,
                trial,
                prompt,
                provider,
                descriptions.get(case.id, case.id),
            )
            for case in report.cases
            for trial in case.trials
        ]
        rows += mine
        prompts.append({**prompt, "provider": provider["id"], "metrics": _metrics(mine)})
    first = reports[0] if reports else None
    data: dict[str, object] = {
        "evalId": f"caseforge-{first.run_id}" if first else "caseforge",
        "results": {
            "version": 3,
            "timestamp": first.created_at if first else "",
            "prompts": prompts,
            "results": [row.data for row in rows],
            "stats": _stats(rows),
        },
        "config": {
            "description": f"caseforge suite {first.suite}" if first else "",
            "prompts": _unique(p["raw"] for p in prompts),
            "providers": _unique(p["provider"] for p in prompts),
        },
        "shareableUrl": None,
        "metadata": {
            "exportedBy": f"caseforge {(first.caseforge_version if first else '') or __version__}",
            "runs": [r.run_id for r in reports],
            "suite": first.suite if first else "",
        },
    }
    return data, rows


def _unique(values: Iterable[object]) -> list[object]:
    out: list[object] = []
    for value in values:
        if value not in out:
            out.append(value)
    return out


def _column(report: RunReport) -> tuple[dict[str, object], dict[str, object]]:
    values = report.config_values
    raw = values.get("prompt") if isinstance(values.get("prompt"), str) else DEFAULT_PROMPT
    label = values.get("prompt_label") if isinstance(values.get("prompt_label"), str) else raw
    name = report.config or "default"
    pid = values.get("provider") if isinstance(values.get("provider"), str) else None
    return {"raw": raw, "label": label}, {"id": pid or f"caseforge:{name}", "label": name}


def _usage(trial: TrialResult) -> dict[str, int]:
    return {
        "total": trial.input_tokens + trial.output_tokens,
        "prompt": trial.input_tokens,
        "completion": trial.output_tokens,
        "cached": 0,
        "numRequests": 1,
    }


def _rendered(case: CaseResult, prompt: dict[str, object]) -> object:
    """A result's prompt as sent, as promptfoo records it: the case's ``input.prompt`` (the
    rendered prompt an imported case holds), else the configuration's template."""
    sent = case.input.get("prompt") if isinstance(case.input, dict) else None
    return sent if isinstance(sent, str) else prompt["raw"]


def _vars(case: CaseResult) -> object:
    """A case's vars as ``export promptfoo`` writes them: its input without ``prompt``,
    which ``prompt.raw`` holds."""
    if isinstance(case.input, dict) and isinstance(case.input.get("prompt"), str):
        return {k: v for k, v in case.input.items() if k != "prompt"}
    return case.input


def _one_line(error: str) -> str:
    """An error as promptfoo records one, a message: what comes before a Python traceback
    (caseforge writes the exception first), else the traceback's last line, without its
    frames and their paths."""
    text = error.strip()
    start = text.find("Traceback (most recent call last)")
    if start < 0:
        return text
    before = text[:start].strip()
    if before:
        return before
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1]


def _component(check: CheckResult) -> dict[str, object]:
    passed = check.status is CheckStatus.PASS
    reason = check.reason or ("Assertion passed" if passed else str(check.status))
    assertion: dict[str, object] = {"type": check.mode, "metric": check.name}
    if check.expected is not None:
        assertion["value"] = check.expected
    return {"pass": passed, "score": 1 if passed else 0, "reason": reason, "assertion": assertion}


def _result(
    report: RunReport,
    column: int,
    test_idx: int,
    case: CaseResult,
    trial: TrialResult,
    prompt: dict[str, object],
    provider: dict[str, object],
    description: str,
) -> _Row:
    graded = [c for c in trial.checks if c.status not in _GRADES_NOTHING]
    components = [_component(c) for c in graded]
    passed = sum(1 for c in graded if c.status is CheckStatus.PASS)
    success = trial.status is TrialStatus.PASS
    score = passed / len(graded) if graded else (1.0 if success else 0.0)
    failure = 0 if success else 2 if trial.status is TrialStatus.ERROR else 1
    failing = [
        f"{c.name}: {c.reason or c.status}" for c in graded if c.status is not CheckStatus.PASS
    ]
    if success:
        reason = "All assertions passed"
    elif trial.status is TrialStatus.ERROR and trial.error:
        reason = _one_line(trial.error)
    else:
        reason = "; ".join(failing) or str(trial.status)
    named = {c.name: (1 if c.status is CheckStatus.PASS else 0) for c in graded}
    output: object = trial.reply
    if output is None and trial.output is not None:
        output = json.dumps(trial.output, ensure_ascii=False, sort_keys=True)
    usage = _usage(trial)
    latency = round(trial.latency_s * 1000)
    key = f"{report.run_id}/{case.id}/{trial.trial}"
    # As the exported config has it: the vars without the prompt rendered from them.
    variables = _vars(case)
    test_case = {
        "description": description,
        "vars": variables,
        "metadata": {"caseforge_case": case.id},
    }
    data: dict[str, object] = {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"caseforge:{key}")),
        "promptIdx": column,
        "testIdx": test_idx,
        "promptId": hashlib.sha256(str(prompt["raw"]).encode()).hexdigest(),
        "provider": provider,
        "prompt": {**prompt, "raw": _rendered(case, prompt)},
        "testCase": test_case,
        "vars": variables,
        "description": description,
        "response": {
            "output": output,
            "tokenUsage": usage,
            "cost": trial.cost_usd,
            "cached": False,
        },
        "error": _one_line(trial.error) if trial.error else None,
        "failureReason": failure,
        "success": success,
        "score": score,
        "latencyMs": latency,
        "gradingResult": {
            "pass": success,
            "score": score,
            "reason": reason,
            "namedScores": named,
            "componentResults": components,
        },
        "namedScores": named,
        "cost": trial.cost_usd,
        "tokenUsage": usage,
        "metadata": {
            "caseforge": {
                "run_id": report.run_id,
                "case_id": case.id,
                "trial": trial.trial,
                "status": str(trial.status),
            }
        },
    }
    return _Row(data, success, failure, score, latency, trial.cost_usd, usage, named, components)


def _metrics(rows: list[_Row]) -> dict[str, object]:
    components = [c for row in rows for c in row.components]
    named: dict[str, float] = {}
    counts: dict[str, int] = {}
    for row in rows:
        for name, value in row.named.items():
            named[name] = named.get(name, 0) + value
            counts[name] = counts.get(name, 0) + 1
    stats = _stats(rows)
    return {
        "score": sum(row.score for row in rows),
        "testPassCount": stats["successes"],
        "testFailCount": stats["failures"],
        "testErrorCount": stats["errors"],
        "assertPassCount": sum(1 for c in components if c["pass"]),
        "assertFailCount": sum(1 for c in components if not c["pass"]),
        "totalLatencyMs": sum(row.latency_ms for row in rows),
        "tokenUsage": stats["tokenUsage"],
        "namedScores": named,
        "namedScoresCount": counts,
        "cost": sum(row.cost for row in rows),
    }


def _stats(rows: list[_Row]) -> dict[str, object]:
    usage = {"total": 0, "prompt": 0, "completion": 0, "cached": 0, "numRequests": 0}
    for row in rows:
        for key, value in row.usage.items():
            usage[key] += value
    return {
        "successes": sum(1 for row in rows if row.success),
        "failures": sum(1 for row in rows if not row.success and row.failure != 2),
        "errors": sum(1 for row in rows if row.failure == 2),
        "tokenUsage": usage,
        "durationMs": sum(row.latency_ms for row in rows),
    }
