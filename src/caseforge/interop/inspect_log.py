"""``caseforge export inspect``: a run as an Inspect AI log (``.eval``), for Inspect View and
the tools that read Inspect logs.

The log is written through inspect-ai's own API (``inspect_ai.log.write_eval_log``): its
maintainers keep the format free to change and call that API the supported way to write
one, and it writes the sample summaries Inspect View lists the samples from. inspect-ai is
the ``inspect`` extra, imported only here. What the log holds:

- one ``EvalSample`` per case-trial (``id`` the case, ``epoch`` the trial): the input as the
  user's message (a multi-turn case: its transcript), each tool call as the assistant's
  call and its result as a tool message, the reply as the assistant's last message, and
  the agent's structured output as a message after it; ``target`` the case's checks, one
  line each;
- a ``Score`` per check (``C`` pass, ``I`` fail or error, ``N`` not graded: skipped, not
  judged, cannot judge; the caseforge status, mode, expected value and reason beside it),
  and one named ``caseforge`` for the case-trial's own verdict, whose accuracy is the
  run's pass rate;
- the run's metadata: the dataset's commit (as the eval's git revision), the
  configuration and its values, the agent, the model (the configuration's ``model`` value,
  else ``caseforge/AGENT``), the trials as epochs, and the run's own fields under
  ``metadata.caseforge``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caseforge._version import __version__
from caseforge.errors import EnvError, UsageError
from caseforge.files import file_mode
from caseforge.interop.records import optional
from caseforge.interop.suite import PROVENANCE_KEY
from caseforge.report.model import CaseResult, RunReport, TrialResult
from caseforge.results import CheckStatus, RunStatus, TrialStatus

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ChatMessage
    from inspect_ai.scorer import Score

TRIAL_SCORE = "caseforge"
SCORE_VALUES = {
    CheckStatus.PASS: "C",
    CheckStatus.FAIL: "I",
    CheckStatus.ERROR: "I",
    CheckStatus.SKIPPED: "N",
    CheckStatus.NOT_JUDGED: "N",
    CheckStatus.CANNOT_JUDGE: "N",
}
EVAL_STATUS = {RunStatus.FINISHED: "success", RunStatus.STOPPED: "cancelled",
               RunStatus.RUNNING: "started"}  # fmt: skip


def export_inspect(
    report: RunReport, out: Path, imported_ids: Mapping[str, object] | None = None
) -> int:
    """Write ``report`` as an Inspect log at ``out`` (``.eval``, or ``.json``); returns how
    many samples it holds. The file appears whole or not at all. ``imported_ids`` maps a
    case imported from an Inspect dataset to its sample's own id (:func:`imported_sample_ids`).

    Raises:
        UsageError: ``out`` is not a ``.eval`` or ``.json`` file name.
        EnvError: inspect-ai is not installed (the ``inspect`` extra).
    """
    if out.suffix not in (".eval", ".json"):
        raise UsageError(f"--out {out}: an Inspect log is a .eval (or .json) file")
    logs = optional("inspect_ai.log", "inspect", "caseforge export inspect")
    log = eval_log(report, imported_ids)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.stem}.", suffix=out.suffix, dir=out.parent)
    os.close(fd)
    try:
        logs.write_eval_log(log, tmp, format=out.suffix.lstrip("."))
        os.chmod(tmp, file_mode(out))  # mkstemp's 0600 would make the log private
        os.replace(tmp, out)
    except OSError as exc:
        raise EnvError(f"{out}: cannot write: {exc.strerror or exc}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return len(log.samples or [])


def imported_sample_ids(cases: Mapping[str, Mapping[str, object]]) -> dict[str, object]:
    """The sample id each case imported from an Inspect dataset had there (its
    ``provenance.imported_from.id``), for the cases whose id is not shared with another:
    the log's samples keep the ids a team's other Inspect logs use."""
    found: dict[str, object] = {}
    for case_id, case in cases.items():
        provenance = case.get("provenance")
        mark = provenance.get(PROVENANCE_KEY) if isinstance(provenance, Mapping) else None
        if isinstance(mark, Mapping) and mark.get("format") == "inspect" and "id" in mark:
            original = mark["id"]
            if isinstance(original, (int, str)) and not isinstance(original, bool):
                found[case_id] = original
    counts = Counter(str(found.get(c, c)) for c in cases)  # a sample id is one sample's
    return {c: v for c, v in found.items() if counts[str(v)] == 1}


def eval_log(report: RunReport, imported_ids: Mapping[str, object] | None = None) -> EvalLog:
    """The Inspect ``EvalLog`` of a run; a case imported from an Inspect dataset is the
    sample of its original id (``imported_ids``), its case id in the sample's metadata."""
    ids = dict(imported_ids or {})
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalRevision,
        EvalScore,
        EvalSpec,
        EvalStats,
    )

    model = _model(report)
    samples = [
        _sample(report, case, trial, model, ids.get(case.id, case.id))
        for case in report.cases
        for trial in case.trials
    ]
    by_check: dict[str, list[bool]] = defaultdict(list)
    for sample in samples:
        for name, score in (sample.scores or {}).items():
            if score.value != "N":
                by_check[name].append(score.value == "C")
    scores = [
        EvalScore(
            name=name,
            scorer=TRIAL_SCORE if name == TRIAL_SCORE else "caseforge-check",
            scored_samples=len(verdicts),
            metrics={"accuracy": EvalMetric(name="accuracy", value=sum(verdicts) / len(verdicts))},
        )
        for name, verdicts in sorted(by_check.items(), key=lambda kv: kv[0] != TRIAL_SCORE)
        if verdicts
    ]
    revision = None
    if report.dataset_commit:
        revision = EvalRevision(
            type="git",
            origin=report.suite_path or report.suite,  # the suite's folder: no remote known
            commit=report.dataset_commit,
            dirty=report.dataset_dirty,
        )
    s = report.summary
    created = _utc(report.created_at)
    spec = EvalSpec(
        created=created,
        run_id=report.run_id,
        eval_id=f"{report.run_id}-{report.config or 'default'}",
        task=report.suite,
        task_display_name=f"{report.suite} ({report.label})",
        task_args={"config": report.config} if report.config else {},
        solver=report.agent,
        dataset=EvalDataset(
            name=report.suite,
            location=report.suite_path or None,
            samples=len(report.cases),
            sample_ids=[ids.get(c.id, c.id) for c in report.cases],
        ),
        model=model,
        config=EvalConfig(epochs=report.trials),
        revision=revision,
        packages={"caseforge": report.caseforge_version or __version__},
        metadata={"caseforge": _run_metadata(report)},
    )
    return EvalLog(
        eval=spec,
        status=EVAL_STATUS.get(report.status, "success"),
        results=EvalResults(
            total_samples=len(samples), completed_samples=len(samples), scores=scores
        ),
        stats=EvalStats(
            started_at=created,
            completed_at=_utc(report.finished_at) if report.finished_at else created,
            model_usage=_usage(model, s.input_tokens, s.output_tokens, s.cost_usd),
        ),
        samples=samples,
    )


def _model(report: RunReport) -> str:
    named = report.config_values.get("model")
    return named if isinstance(named, str) and named else f"caseforge/{report.agent or 'agent'}"


def _run_metadata(report: RunReport) -> dict[str, Any]:
    return {
        "run_id": report.run_id,
        "group_id": report.group_id,
        "suite": report.suite,
        "suite_path": report.suite_path,
        "status": report.status.value,
        "config": report.config,
        "config_values": report.config_values,
        "agent": report.agent,
        "trials": report.trials,
        "split": report.split,
        "dataset_commit": report.dataset_commit,
        "dataset_dirty": report.dataset_dirty,
        "caseforge_version": report.caseforge_version,
        "pass_rate": report.summary.pass_rate,
        "cost_usd": report.summary.cost_usd,
    }


def _utc(stamp: str) -> str:
    """An ISO time as UTC (caseforge's stamps without a zone are UTC)."""
    try:
        moment = dt.datetime.fromisoformat(stamp)
    except ValueError:
        moment = dt.datetime.now(dt.UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).isoformat()


def input_text(case: CaseResult) -> str:
    """The case's input as the user's message: its ``message`` when that is all it is,
    else the input as JSON."""
    message = case.input.get("message")
    if isinstance(message, str) and len(case.input) == 1:
        return message
    return json.dumps(case.input, ensure_ascii=False, indent=2)


def _sample(
    report: RunReport, case: CaseResult, trial: TrialResult, model: str, sample_id: object
) -> EvalSample:
    from inspect_ai._util.error import EvalError
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput

    scores = {TRIAL_SCORE: _trial_score(trial)}
    for check in trial.checks:
        scores[check.name] = _check_score(check.name, check.status, check)
    error = None
    if trial.error:
        error = EvalError(message=trial.error, traceback=trial.error, traceback_ansi=trial.error)
    return EvalSample(
        id=sample_id,
        epoch=trial.trial,
        input=input_text(case),
        target=[f"{name}: {text}" for name, text in case.expect.items()] or "",
        messages=_messages(case, trial, model),
        output=ModelOutput.from_content(model, trial.reply or ""),
        scores=scores,
        metadata={
            "case_id": case.id,
            "status": trial.status.value,
            "category": case.category,
            "tags": case.tags,
            "split": case.split,
            "source": case.source,
            "input": case.input,
            "output": trial.output,
            "cost_usd": trial.cost_usd,
            "ended_by": trial.ended_by,
            "paused_for_approval": trial.paused_for_approval,
        },
        model_usage=_usage(model, trial.input_tokens, trial.output_tokens, trial.cost_usd),
        total_time=trial.latency_s,
        working_time=trial.latency_s,
        error=error,
    )


def _trial_score(trial: TrialResult) -> Score:
    from inspect_ai.scorer import Score

    passed = trial.status is TrialStatus.PASS
    failing = [c.name for c in trial.checks if c.status is not CheckStatus.PASS]
    explanation = trial.error or (
        f"not passing: {', '.join(failing)}" if failing and not passed else trial.status.value
    )
    return Score(
        value="C" if passed else "I",
        answer=trial.reply,
        explanation=explanation,
        metadata={"status": trial.status.value},
    )


def _check_score(name: str, status: CheckStatus, check: Any) -> Score:
    from inspect_ai.scorer import Score

    return Score(
        value=SCORE_VALUES[status],
        answer=_as_text(check.actual),
        explanation=check.reason or status.value,
        metadata={
            "check": name,
            "mode": check.mode,
            "status": status.value,
            "expected": check.expected,
        },
    )


def _as_text(value: object) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _messages(case: CaseResult, trial: TrialResult, model: str) -> list[ChatMessage]:
    """The case-trial as a chat: the user's messages (a transcript's turns), the agent's
    tool calls with their results, its replies, then its structured output."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    messages: list[ChatMessage] = []
    counter = iter(range(1, 1_000_000))

    def agent_turn(content: str, calls: list[Any]) -> None:
        made = [
            ToolCall(id=f"call-{next(counter)}", function=c.name, arguments=dict(c.args))
            for c in calls
        ]
        if made:
            messages.append(ChatMessageAssistant(content="", tool_calls=made, model=model))
            for call, made_call in zip(calls, made, strict=True):
                messages.append(
                    ChatMessageTool(
                        content=_as_text(call.result) or "",
                        tool_call_id=made_call.id,
                        function=call.name,
                    )
                )
        messages.append(ChatMessageAssistant(content=content, model=model))

    if trial.transcript:
        for entry in trial.transcript:
            if entry.role == "user":
                messages.append(ChatMessageUser(content=entry.content))
            else:
                agent_turn(entry.content, list(entry.tool_calls))
    else:
        messages.append(ChatMessageUser(content=input_text(case)))
        agent_turn(trial.reply or "", list(trial.tool_calls))
    if trial.output:
        text = json.dumps(trial.output, ensure_ascii=False, indent=2)
        messages.append(ChatMessageAssistant(content=f"output:\n{text}", model=model))
    return messages


def _usage(model: str, input_tokens: int, output_tokens: int, cost: float | None) -> Any:
    """Inspect's ``model_usage``: one model's tokens and cost."""
    from inspect_ai.model import ModelUsage

    return {
        model: ModelUsage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            total_cost=cost,
        )
    }
