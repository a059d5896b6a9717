"""The typed models the web app serves: the JSON API returns them and the pages render them,
so the OpenAPI spec is generated from the same types the screens show."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from caseforge.compare.gate import GateResult
from caseforge.compare.history import History
from caseforge.compare.pairing import CompareResult
from caseforge.report.model import FailingCheck, Holdout, RunReport, TrialResult
from caseforge.report.show import TrialView


class RunRow(BaseModel):
    """One run in the runs list."""

    id: str
    suite: str
    config: str | None
    agent: str
    dataset_commit: str | None
    dataset_dirty: bool | None
    status: str
    created_at: str
    cases: int
    trials: int
    case_trials_done: int
    pass_rate: float | None = None
    pass_rate_ci: tuple[float, float] | None = None
    errors: int = 0
    cost_usd: float = 0.0
    eta_s: float | None = Field(None, description="For a running run: seconds left, estimated.")


class RunList(BaseModel):
    runs: list[RunRow]
    stores: list[str] = Field(description="The stores read (passwords hidden).")
    notes: list[str] = Field(default_factory=list)


class GridRow(BaseModel):
    """One case of the run's grid: its trials' statuses, in trial order."""

    id: str
    tags: list[str]
    category: str
    statuses: list[str]
    flaky: bool


class GridPage(BaseModel):
    run_id: str
    page: int
    pages: int
    total_cases: int
    rows: list[GridRow]


class SliceBar(BaseModel):
    """One slice's pass rate, with a Wilson interval over its case-trials."""

    name: str
    case_trials: int
    passed: int
    pass_rate: float | None
    ci: tuple[float, float] | None


class RunPage(BaseModel):
    """The run screen: the report's summary and most failing checks, and a grid page."""

    report: RunReport = Field(exclude=True)  # served through its own fields below
    summary_rows: list[tuple[str, str]]
    slices: dict[str, list[SliceBar]]
    most_failing_checks: list[FailingCheck]
    latencies: list[float]
    costs: list[float]
    grid: GridPage


class CheckLine(BaseModel):
    """A check of the trial, with where it is written in the case file."""

    name: str
    mode: str
    status: str
    expected: JsonValue = None
    actual: JsonValue = None
    reason: str = ""
    diff: list[str] = Field(default_factory=list, description="Expected vs actual, as lines.")
    line: int | None = Field(None, description="The check's line in the case file.")


class TrialPage(BaseModel):
    view: TrialView
    checks: list[CheckLine]
    case_file: str | None = Field(None, description="The case file, relative to the suite.")
    case_text: str | None = None
    editor_url: str | None = None


class ComparePair(BaseModel):
    """A case that changed between the two runs, with both sides' trials and outputs."""

    id: str
    changed_checks: list[str]
    loaded: bool = Field(True, description="False: the page loads the trials when opened.")
    a: list[TrialResult]
    b: list[TrialResult]


class ComparePage(BaseModel):
    result: CompareResult
    newly_failing: list[ComparePair] = Field(description="The first 100, with their trials.")
    newly_passing: list[ComparePair] = Field(description="The first 100, with their trials.")
    gate: GateResult | None = None
    gate_error: str | None = None
    baseline_file: str | None = Field(
        default=None, description="The baseline file gated against: one of run b's suite."
    )


class LabelTaskView(BaseModel):
    """One output to label, fact by fact."""

    run_id: str
    case_id: str
    trial: int
    check: str
    digest: str
    facts: list[str]
    output: str
    input: dict[str, JsonValue]


class LabelQueue(BaseModel):
    run_id: str
    suite: str
    remaining: int
    next: LabelTaskView | None
    labeler: str


class LabelIn(BaseModel):
    """A person's verdict on each fact of one output (``conveyed``, ``missing`` or
    ``contradicted``)."""

    case_id: str
    trial: int
    check: str
    digest: str = Field(description="The output's digest, as the queue gave it.")
    labels: dict[str, str]


class LabelSaved(BaseModel):
    path: str = Field(description="The labels file written, relative to the suite.")
    remaining: int


class CaseRow(BaseModel):
    """A case as the suite screen lists it, its expectations in one line each."""

    id: str
    file: str
    line: int
    category: str
    split: str | None
    source: str
    tags: list[str]
    expect: dict[str, str]
    flip_rate: float | None = None


class SuitePage(BaseModel):
    index: int
    name: str
    folder: str
    cases: list[CaseRow]
    errors: list[str] = Field(description="Validation problems, `file:line:col: field: …`.")
    warnings: list[str] = Field(
        description="The warnings shown: all but the near-duplicate pairs past the most "
        "similar 20, which the last line counts (`caseforge validate --json` lists them)."
    )
    warnings_total: int = Field(0, description="Every warning, the near-duplicates included.")
    distribution: dict[str, dict[str, int]] = Field(description="category × split")
    history: History
    holdout: Holdout | None = Field(None, description="From the suite's newest finished run.")
    holdout_run: str | None = None


class Neighbour(BaseModel):
    """A suite case or another draft a draft nearly repeats, with its text to compare."""

    id: str
    text: str
    similarity: float = Field(description="Jaccard similarity of their character shingles.")


class DraftView(BaseModel):
    """A synthesized draft as the review screen shows it."""

    draft_id: str
    status: str = Field(description="pending, accepted, edited or rejected")
    tuple: dict[str, str]
    tuple_descriptions: dict[str, str] = Field(description="Each dimension value's meaning.")
    text: str
    text_field: str
    input: dict[str, JsonValue] = Field(description="The input besides the ticket text.")
    expect: dict[str, str] = Field(description="Each expectation in one line.")
    oracles: dict[str, str] = Field(description="Which oracle computed an expectation.")
    expect_yaml: str = Field(description="The expect block, as the edit form starts it.")
    provenance: dict[str, str]
    near_duplicates: list[Neighbour]
    reason: str = ""
    case_id: str | None = None
    reviewed_by: str = ""
    reviewed_on: str | None = None


class ReviewCountsView(BaseModel):
    drafts: int
    accepted: int
    edited: int
    rejected: int
    pending: int
    needed_fixing: float | None = Field(description="Edited or rejected, of those reviewed.")
    rejection_reasons: dict[str, int]
    by_reviewer: dict[str, dict[str, int]]


class ReviewPage(BaseModel):
    index: int
    suite: str
    queue_file: str
    reviewer: str
    show: str
    page: int
    pages: int
    shown: int = Field(description="Drafts that match ``show``.")
    counts: ReviewCountsView
    drafts: list[DraftView]


class DecisionIn(BaseModel):
    """Accept, edit (the ticket text and/or the expectations) or reject with a reason."""

    action: Literal["accept", "edit", "reject"]
    reason: str = ""
    text: str | None = None
    expect: dict[str, JsonValue] | None = None


class DecisionOut(BaseModel):
    draft: DraftView
    path: str | None = Field(None, description="The case file written, relative to the suite.")
    counts: ReviewCountsView


class AgreementView(BaseModel):
    """People against the judge: raw agreement, Cohen's κ and the confusion matrix."""

    n: int = Field(description="Fact labels compared.")
    agreement: float | None
    kappa: float | None
    labels: list[str]
    confusion: list[list[int]] = Field(description="Rows: people; columns: the judge.")


class DisagreementView(BaseModel):
    case: str
    fact: str
    human: str
    judge: str
    reason: str = Field(description="The judge's reason.")
    output: str


class ProbeView(BaseModel):
    """A bias probe: how often the judge's verdict flipped when it should not have."""

    tried: int
    flips: int
    flip_rate: float | None


class CalibrationPage(BaseModel):
    index: int
    suite: str
    state: Literal["ready", "no_labels", "no_recordings"]
    message: str = Field("", description="What to do when the state is not ready.")
    judge: dict[str, JsonValue] = Field(default_factory=dict)
    mode: str = ""
    outputs: int = 0
    overall: AgreementView | None = None
    per_fact: dict[str, AgreementView] = Field(default_factory=dict)
    disagreements: list[DisagreementView] = Field(default_factory=list)
    not_judged: list[str] = Field(default_factory=list)
    verbosity: ProbeView | None = None
    position: ProbeView | None = None
