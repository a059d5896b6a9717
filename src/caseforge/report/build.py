"""Building ``report.json`` for a stored run, and loading a run from an id or a file."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from caseforge._version import __version__
from caseforge.case.load import suite_modes
from caseforge.case.model import Case, case_model
from caseforge.checks import ModeTable, mode_table
from caseforge.errors import CaseforgeError, UsageError, first_validation_error
from caseforge.files import json_kind, read_json_file
from caseforge.jsontypes import JSONObject
from caseforge.report.model import (
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    CaseResult,
    RunReport,
    ShardEntry,
    ToolCallEntry,
    TranscriptEntry,
    TrialResult,
    span_entries,
)
from caseforge.report.summary import check_counts, summarize
from caseforge.results import ResultRow, RunStatus, TrialRecord, TrialStatus
from caseforge.store.db import RunStore
from caseforge.tracing.spans import from_stored, tool_calls


def expect_digest(case: Case) -> str:
    """A short hash of a case's expectations: tells two runs whether the case changed."""
    data = {k: v.model_dump(mode="json", exclude_defaults=True) for k, v in case.expect.items()}
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def build_report(store: RunStore, run_id: str, raw: bool = False) -> RunReport:
    """The full report of a run: metadata, ``summary``, ``checks`` and ``cases``. Each
    case-trial carries its tool calls' names and arguments; ``raw`` adds the agent's output
    and the calls' results."""
    info = store.get_run(run_id)
    # The stored snapshot is read as it was: a mode this process has no declaration of is
    # kept as written (its results are in the rows already).
    model = case_model(_modes_of(Path(info.suite_path)), lenient=True)
    cases = {cid: model.model_validate(data) for cid, data in store.cases(run_id).items()}
    per_case: dict[str, list[TrialResult]] = defaultdict(list)
    records: list[TrialRecord] = []
    for row in store.results(run_id):
        record, trial = _trial(row, raw)
        records.append(record)
        per_case[record.case_id].append(trial)
    case_entries = [
        CaseResult(
            id=case_id,
            expect_digest=expect_digest(case),
            category=case.category(),
            split=case.split,
            source=case.source,
            tags=case.tags,
            input=case.input,
            expect={name: check.render() for name, _, check in case.checks()},
            passed=sum(1 for t in per_case[case_id] if t.status is TrialStatus.PASS),
            trials=per_case[case_id],
        )
        for case_id, case in sorted(cases.items())
    ]
    return RunReport(
        run_id=info.id,
        group_id=info.group_id,
        suite=info.suite,
        suite_path=info.suite_path,
        suite_identity=info.suite_identity,
        status=RunStatus(info.status),
        created_at=info.created_at,
        finished_at=info.finished_at,
        dataset_commit=info.dataset_commit,
        dataset_dirty=info.dataset_dirty,
        agent=info.agent,
        config=info.config_name,
        config_values=info.config,
        trials=info.trials,
        split=info.split,
        caseforge_version=info.caseforge_version,
        options=info.options,
        shards=[
            ShardEntry(
                shard=row["shard"],
                shards=row["shards"],
                status=row["status"],
                host=row["host"],
                finished_at=row["finished_at"],
            )
            for row in store.shards(run_id)
        ],
        summary=summarize(records, cases, info.trials).model_copy(
            update={
                "simulated_user_cost_usd": sum(
                    t.user_cost_usd for trials in per_case.values() for t in trials
                )
            }
        ),
        checks=check_counts(records),
        cases=case_entries,
    )


def case_trials(store: RunStore, run_id: str, case_id: str, raw: bool = True) -> list[TrialResult]:
    """One case's trials of a run, as the report shows them (with ``raw``: the outputs)."""
    return [_trial(row, raw)[1] for row in store.results(run_id, case_id)]


def cases_trials(
    store: RunStore, run_id: str, case_ids: Sequence[str], raw: bool = True
) -> dict[str, list[TrialResult]]:
    """Some cases' trials of a run, read at once: :func:`case_trials` for each."""
    found: dict[str, list[TrialResult]] = {case_id: [] for case_id in case_ids}
    for start in range(0, len(case_ids), 500):  # within every database's parameter limit
        for row in store.results(run_id, case_ids=case_ids[start : start + 500]):
            found[row["case_id"]].append(_trial(row, raw)[1])
    return found


def _trial(row: ResultRow, raw: bool) -> tuple[TrialRecord, TrialResult]:
    record = TrialRecord.from_row(row)
    stored = row["response_json"]
    response = json.loads(stored) if stored else None
    reply = response.get("reply") if isinstance(response, dict) else None
    calls = response.get("tool_calls") if isinstance(response, dict) else None
    output = response.get("output") if raw and isinstance(response, dict) else None
    trial = TrialResult(
        trial=record.trial,
        status=record.status,
        error=record.error,
        latency_s=record.latency_s,
        cost_usd=record.cost_usd,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        reply=reply if isinstance(reply, str) else None,
        paused_for_approval=bool(response and response.get("paused_for_approval")),
        tool_calls=[_tool_call(c, raw) for c in calls or [] if isinstance(c, dict)],
        output=output if isinstance(output, dict) else None,
        checks=record.checks,
        transcript=_transcript(response, raw),
        user_cost_usd=_user_cost(response),
        ended_by=response.get("ended_by") if isinstance(response, dict) else None,
    )
    log_json = row["log_json"]
    if raw and log_json:
        log = json.loads(log_json)
        trial.log, trial.log_dropped = str(log.get("text", "")), int(log.get("dropped", 0))
    spans_json = row.get("spans_json")
    if spans_json:
        spans, dropped = from_stored(spans_json)
        trial.trace_id = spans[0]["trace_id"] if spans else None
        if not calls and not _turn_calls(response):
            derived = tool_calls(spans)
            if derived:
                trial.tool_calls = [_tool_call(c, raw) for c in derived]
                trial.tool_calls_source = "spans"
        if raw and spans:  # none came: the spans check's reason says why
            trial.spans, trial.spans_dropped = span_entries(spans), dropped
    return record, trial


def _turn_calls(response: object) -> bool:
    """Whether a conversation's turns reported tool calls."""
    turns = response.get("transcript") if isinstance(response, dict) else None
    return any(isinstance(t, dict) and t.get("tool_calls") for t in turns or [])


def _user_cost(response: object) -> float:
    spent = response.get("user_usage") if isinstance(response, dict) else None
    cost = spent.get("cost_usd") if isinstance(spent, dict) else None
    return float(cost) if isinstance(cost, int | float) else 0.0


def _transcript(response: object, raw: bool) -> list[TranscriptEntry]:
    turns = response.get("transcript") if isinstance(response, dict) else None
    return [
        TranscriptEntry(
            turn=int(t.get("turn", 1)),
            role=str(t.get("role", "")),
            content=str(t.get("content", "")),
            tool_calls=[
                _tool_call(c, raw) for c in t.get("tool_calls") or [] if isinstance(c, dict)
            ],
        )
        for t in turns or []
        if isinstance(t, dict)
    ]


def _tool_call(call: JSONObject, raw: bool) -> ToolCallEntry:
    args = call.get("args")
    return ToolCallEntry(
        name=str(call.get("name", "")),
        args=args if isinstance(args, dict) else {},
        result=call.get("result") if raw else None,
    )


def load_report(run: str, store_url: str | None = None, raw: bool = False) -> RunReport:
    """A run's report, from the store or from a ``report.json``.

    Args:
        run: A run id, ``"latest"``, or a path to a ``report.json``.
        store_url: The run store (default: ``CASEFORGE_STORE``, else the current folder's).
        raw: Include each agent output and tool-call result (a stored run only).

    Returns:
        The report.

    Raises:
        UsageError: An unknown run, or a file this caseforge cannot read."""
    path = Path(run)
    if path.suffix == ".json" or path.is_file():
        return read_report_file(path)
    store = RunStore(store_url, read_only=True)
    try:
        return build_report(store, store.resolve_run(run), raw)
    finally:
        store.close()


def read_report_file(path: Path) -> RunReport:
    """A ``report.json``, or one line saying why it is not one this caseforge reads: each a
    usage error (2), since the file given is the mistake, not a regression."""
    data = read_json_file(path, "report", "give a run id, `latest`, or a report.json")
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a caseforge report: the file holds {json_kind(data)}")
    if "caseforge_baseline" in data:
        raise UsageError(
            f"{path}: is a caseforge baseline, not a report: give a run id, `latest`, or the "
            "report.json the baseline was made from"
        )
    if "schema_version" not in data:
        raise UsageError(f"{path}: not a caseforge report (no schema_version)")
    version = data["schema_version"]
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise UsageError(
            f"{path}: written by a newer caseforge (report schema_version {version}; this one "
            f"reads {SCHEMA_VERSION}): upgrade caseforge to read it"
        )
    if version not in READABLE_VERSIONS:
        raise UsageError(
            f"{path}: schema_version {version!r} is not one this caseforge reads "
            f"({', '.join(map(str, READABLE_VERSIONS))}); re-render it with the caseforge "
            "that wrote it"
        )
    try:
        return RunReport.model_validate(data)
    except ValidationError as exc:
        wrote = data.get("caseforge_version")
        if isinstance(wrote, str) and written_by_newer(wrote):
            raise UsageError(
                f"{path}: written by a newer caseforge ({wrote}; this is {__version__}) and not "
                f"readable here ({first_validation_error(exc)}): upgrade caseforge"
            ) from None
        raise UsageError(
            f"{path}: not a valid caseforge report: {first_validation_error(exc)}"
        ) from None


def written_by_newer(version: str) -> bool:
    """Whether a caseforge version (``0.2.0``, ``1.0.0rc1``) is newer than this one's, by
    its leading numbers."""

    def numbers(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", text.split("+")[0])[:3])

    return numbers(version) > numbers(__version__)


def report_schema() -> JSONObject:
    """The JSON Schema of report.json as shipped with the package (generated from
    :class:`RunReport` by ``make schema``; a test keeps the two equal)."""
    from importlib.resources import files

    text = files("caseforge.report").joinpath("report.schema.json").read_text(encoding="utf-8")
    schema: JSONObject = json.loads(text)
    return schema


def _modes_of(suite_dir: Path) -> ModeTable:
    """The suite's check modes, its own included, or the built-in ones when the suite has
    moved, cannot be read by this user, or its checks module no longer loads (the report
    only describes them)."""
    try:
        return suite_modes(suite_dir)
    except (CaseforgeError, OSError):
        return mode_table()


def require_finished(report: RunReport, before: str) -> RunReport:
    """``report``, or a one-line error if its run is unfinished (a partial run proves
    nothing), or if some of its case-trials were never judged: a judge that was not
    configured is a setup to fix, not a regression to gate (or a level to keep)."""
    if report.status is not RunStatus.FINISHED:
        raise UsageError(
            f"run {report.run_id} is {report.status.value}: finish it with "
            f"`caseforge run SUITE --resume {report.run_id}` before {before}"
        )
    if report.summary.incomplete:
        reasons = "; ".join(sorted(report.summary.incomplete_reasons)) or "not judged"
        raise UsageError(
            f"run {report.run_id}: {report.summary.incomplete} case-trial(s) are incomplete "
            f"({reasons}); rescore it with its judge configured (`caseforge rescore "
            f"{report.run_id}`), or run with --no-judge, before {before}"
        )
    return report
