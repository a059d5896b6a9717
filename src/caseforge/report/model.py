"""The typed report of one run: what ``report.json`` holds, and what every format reads.

``report.schema.json`` is generated from :class:`RunReport` (``caseforge schema --report``
prints it; a test proves the shipped file is the generated one). The per-check results are
the same :class:`~caseforge.results.CheckResult` records grading produced.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from caseforge.case.identity import SuiteIdentity
from caseforge.jsontypes import JSONObject
from caseforge.results import PROBE_FAILED, CheckResult, CheckStatus, RunStatus, TrialStatus

# 2: a check's `actual` is kept to 2 KB, with `actual_bytes` and `actual_ref` when it was
# cut; a trial carries its log (with --raw). Version 1 reports are read as they are.
SCHEMA_VERSION: Literal[2] = 2
READABLE_VERSIONS = (1, 2)
SCHEMA_ID = "https://caseforge.example/report.schema.json"

JsonObject = dict[str, JsonValue]

# A share in [0, 1], or null when its denominator is zero. Documented, not validated: a sum of
# floating-point shares may land a hair above 1.
Rate = Annotated[float | None, Field(json_schema_extra={"minimum": 0, "maximum": 1})]
ByK = Annotated[
    dict[str, float],
    Field(
        description="Keyed by k (1 … trials).",
        json_schema_extra={"propertyNames": {"pattern": "^[0-9]+$"}},
    ),
]


class _Model(BaseModel):
    model_config = ConfigDict(
        serialize_by_alias=True,
        validate_by_name=True,
        json_schema_serialization_defaults_required=True,
    )


class ItemMetrics(_Model):
    """Item-level counts and rates of one ``exact_set`` field, pooled over case-trials."""

    tp: int
    fp: int
    fn: int
    precision: Rate
    recall: Rate


class FailingCheck(_Model):
    check: str
    fail: int
    graded: int


class SliceCell(_Model):
    case_trials: int
    passed: int
    pass_rate: Rate


class Holdout(_Model):
    """Dev against test when the run covers both splits; alarm when dev is significantly
    higher (the agent may be tuned to the dev set)."""

    dev_cases: int
    test_cases: int
    dev_pass_rate: float
    test_pass_rate: float
    difference: float
    p_value: float
    alarm: bool


class CheckCounts(_Model):
    """How many case-trials gave each status to one check."""

    passed: int = Field(0, alias=CheckStatus.PASS.value)
    fail: int = 0
    error: int = 0
    skipped: int = 0
    not_judged: int = 0
    cannot_judge: int = 0

    def add(self, status: CheckStatus) -> None:
        name = "passed" if status is CheckStatus.PASS else status.value
        setattr(self, name, getattr(self, name) + 1)


class Summary(_Model):
    """The run's figures (docs/concepts/statistics.md): see ``report/summary.py`` for the
    conventions."""

    cases: int = Field(ge=0)
    trials: int
    case_trials: int
    passed: int
    failed: int
    incomplete: int
    incomplete_reasons: dict[str, int]
    judge_checks_skipped: int
    errors: int = Field(ge=0)
    pass_rate: Rate
    pass_rate_ci: tuple[float, float]
    pass_rate_se: float = Field(ge=0)
    fully_passing_cases: int
    pass_hat_k: ByK
    pass_at_k: ByK
    items: dict[str, ItemMetrics]
    false_positive_rate: Rate
    clean_case_trials: int
    cost_usd: float = Field(ge=0)
    simulated_user_cost_usd: float = Field(
        0.0, ge=0, description="What model-played users cost, apart from the agent's cost_usd."
    )
    cost_per_run: float | None
    cost_per_true_finding: float | None
    input_tokens: int
    output_tokens: int
    latency_p50_s: float | None
    latency_p95_s: float | None
    most_failing_checks: list[FailingCheck]
    slices: dict[str, dict[str, SliceCell]] = Field(
        description="Pass rates by tag, category, source and split."
    )
    holdout: Holdout | None


class ToolCallEntry(_Model):
    """One tool call of a case-trial: its name and arguments, and its result with --raw."""

    name: str
    args: dict[str, JsonValue] = Field(default_factory=dict)
    result: JsonValue = Field(None, description="Only in a report built with --raw.")


class TranscriptEntry(_Model):
    """One message of a multi-turn case-trial: the user's, or the agent's with its calls."""

    turn: int = Field(ge=1)
    role: str = Field(description="user or agent")
    content: str
    tool_calls: list[ToolCallEntry] = Field(default_factory=list)


class TrialResult(_Model):
    """One case-trial as the report shows it."""

    trial: int = Field(ge=1)
    status: TrialStatus
    error: str | None = None
    latency_s: float = 0.0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    reply: str | None = None
    paused_for_approval: bool = False
    tool_calls: list[ToolCallEntry] = Field(default_factory=list)
    output: dict[str, JsonValue] | None = Field(
        None,
        description="The agent's output as it answered; only in a report built with --raw. A "
        'NaN or Infinity in it is written {"$float": "NaN"} ("Infinity", "-Infinity"), as '
        "it is in every check's expected and actual: JSON has no such number, and an object "
        'cannot be taken for a string "NaN" the agent returned.',
    )
    checks: list[CheckResult] = Field(default_factory=list)
    user_cost_usd: float = Field(0.0, description="A model-played user's cost, apart.")
    transcript: list[TranscriptEntry] = Field(
        default_factory=list, description="A multi-turn case's messages, in order."
    )
    ended_by: str | None = Field(
        None, description="How a conversation ended: agent, user, approval or max_turns."
    )
    log: str | None = Field(
        None,
        description="What the agent's side wrote (a command's stderr, an in-process agent's "
        "prints): its head and tail; only in a report built with --raw.",
    )
    log_dropped: int = Field(0, ge=0, description="Bytes of the log dropped between them.")

    @property
    def agent_error(self) -> bool:
        """An error on the agent's side: an exception, a timeout, an invalid answer or a
        failed outcome probe (not a check whose own grader failed)."""
        if self.status is not TrialStatus.ERROR:
            return False
        return self.error is not None or any(c.reason.startswith(PROBE_FAILED) for c in self.checks)


class CaseResult(_Model):
    """One case and its trials."""

    id: str
    expect_digest: str | None = Field(
        None,
        description="Hash of the case's expectations; compare leaves out cases whose digest "
        "changed.",
    )
    category: str = ""
    split: str | None = None
    source: str = ""
    tags: list[str] = Field(default_factory=list)
    input: JsonObject = Field(default_factory=dict)
    expect: dict[str, str] = Field(
        default_factory=dict,
        description="Each check of the case by name, in one line for people (its mode's render()).",
    )
    passed: int = 0
    trials: list[TrialResult]

    @property
    def statuses(self) -> list[TrialStatus]:
        return [t.status for t in self.trials]


class JudgeUsage(_Model):
    """The judge a run used and what it spent (``options.judge``)."""

    model_config = ConfigDict(extra="allow")

    model: str
    prompt_version: str
    prompt_hash: str
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0


class ShardEntry(_Model):
    """One shard of a run split with ``--shard I/N``, as the store's shard ledger has it."""

    shard: int = Field(ge=1)
    shards: int = Field(ge=1)
    status: str = Field(description="running, stopped or finished.")
    host: str | None = None
    finished_at: str | None = None


class RunReport(_Model):
    """The report of one run (one configuration), as written by ``caseforge run --out DIR``
    and ``caseforge report RUN --format json``."""

    model_config = ConfigDict(
        title="caseforge report",
        json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    schema_version: Literal[1, 2] = SCHEMA_VERSION
    run_id: str
    group_id: str = Field("", description="Runs of one invocation (a matrix) share it.")
    suite: str
    suite_path: str = ""
    suite_identity: SuiteIdentity | None = Field(
        None,
        description="The suite's name, folder in its repository and the repository's root "
        "commit: compare and gate refuse two different suites.",
    )
    status: RunStatus = RunStatus.FINISHED
    created_at: str = ""
    finished_at: str | None = None
    dataset_commit: str | None
    dataset_dirty: bool | None
    agent: str
    config: str | None = Field(description="The configuration's name.")
    config_values: JsonObject = Field(default_factory=dict)
    trials: int = Field(ge=1)
    split: Literal["dev", "test", "all"] = "all"
    caseforge_version: str = ""
    options: JsonObject = Field(default_factory=dict)
    shards: list[ShardEntry] = Field(
        default_factory=list,
        description="A sharded run's shards (--shard I/N): the run is finished when all are.",
    )
    summary: Summary
    checks: dict[str, CheckCounts] = Field(
        description="Per check name: how many case-trials gave each status."
    )
    cases: list[CaseResult]

    @property
    def judge(self) -> JudgeUsage | None:
        """The judge this run used, if any."""
        entry = self.options.get("judge")
        return JudgeUsage.model_validate(entry) if isinstance(entry, dict) else None

    @property
    def label(self) -> str:
        """The configuration's name, else the run id."""
        return self.config or self.run_id

    @property
    def selection(self) -> str | None:
        """How the run was narrowed to some of the suite's cases, or None (see
        :func:`selection`)."""
        return selection(self.options)


SHOWN_CASE_IDS = 3  # a selection of more cases is named by its first few and its size


def selection(options: Mapping[str, object]) -> str | None:
    """How a run was narrowed to some cases (``--case a --tag t``; a pytest run's ``-k`` is
    recorded as the ``--case`` of each case it kept), from its recorded options, or None for
    a run of the whole suite (``--split`` is not a selection)."""
    flags: list[str] = []
    for key, flag in (("case_ids", "--case"), ("tags", "--tag")):
        values = options.get(key)
        if not isinstance(values, list) or not values:
            continue
        shown = [f"{flag} {value}" for value in values[:SHOWN_CASE_IDS]]
        if len(values) > SHOWN_CASE_IDS:
            shown.append(f"… ({len(values)} {'cases' if key == 'case_ids' else 'tags'})")
        flags += shown
    return " ".join(flags) or None


def report_json_schema() -> JSONObject:
    """The JSON Schema of ``report.json``, generated from :class:`RunReport`."""
    schema = RunReport.model_json_schema(mode="serialization")
    schema["$id"] = SCHEMA_ID
    schema["description"] = (
        "The report of one run (one configuration) as written by `caseforge run --out DIR` "
        f"and `caseforge report RUN --format json`. schema_version {SCHEMA_VERSION}."
    )
    return {"$schema": schema.pop("$schema"), "$id": schema.pop("$id"), **schema}


def schema_text() -> str:
    """The generated schema as the shipped file holds it."""
    return json.dumps(report_json_schema(), indent=2, ensure_ascii=False) + "\n"
