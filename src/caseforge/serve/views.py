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
    unfinished: bool = Field(False, description="Running or stopped: not every case-trial ran.")
    problem: str | None = Field(
        None, description="Why the run's figures cannot be read (a damaged store row)."
    )


class RunList(BaseModel):
    runs: list[RunRow] = Field(description="The page of runs asked for.")
    stores: list[str] = Field(description="The stores read (passwords hidden).")
    notes: list[str] = Field(default_factory=list)
    total: int = Field(0, description="Runs that match the filter.")
    page: int = 1
    pages: int = 1


class GridCell(BaseModel):
    """One planned case-trial of the grid: its status, or ``not run`` (an unfinished run's
    case-trial that was never stored, which has no page), and the checks it failed."""

    trial: int
    status: str
    stored: bool = True
    failing: list[str] = Field(default_factory=list, description="Checks not passed.")


class GridRow(BaseModel):
    """One case of the run's grid: its trials' statuses, in trial order."""

    id: str
    tags: list[str]
    category: str
    statuses: list[str]
    flaky: bool
    cells: list[GridCell] = Field(default_factory=list)
    stored: bool = Field(True, description="Whether any of its case-trials is stored.")


class GridPage(BaseModel):
    run_id: str
    page: int
    pages: int
    total_cases: int
    rows: list[GridRow]
    unfinished: bool = False


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
    cost: CostSplit
    compare_with: list[RunChoice] = Field(
        default_factory=list, description="Runs of the suite to compare with, default first."
    )
    suite_index: int | None = Field(
        None, description="The run's suite among those served (its screen), if it is served."
    )
    labelable: bool = Field(
        False, description="Its outputs can be labeled here: it ran in a served suite's folder."
    )


class CostSplit(BaseModel):
    """What a run or a case-trial cost, by who spent it."""

    agent_usd: float = 0.0
    judge_usd: float | None = Field(
        0.0, description="None: judged, but the judge's spend was not recorded per case-trial."
    )
    simulated_user_usd: float = 0.0

    @property
    def total_usd(self) -> float:
        return self.agent_usd + (self.judge_usd or 0.0) + self.simulated_user_usd


class RunChoice(BaseModel):
    """A run offered to compare with, and why it comes first."""

    id: str
    label: str
    why: str = Field("", description="Why it is the default (empty on the others).")
    baseline: str | None = Field(
        None, description="The suite's baseline file it was made from, when it is the default."
    )


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


class TrialLink(BaseModel):
    case_id: str
    trial: int


class InputField(BaseModel):
    """One input field as the trial screen shows it: text as text, the rest as JSON."""

    name: str
    text: str
    is_text: bool


class TrialPage(BaseModel):
    view: TrialView
    checks: list[CheckLine]
    case_file: str | None = Field(None, description="The case file, relative to the suite.")
    case_text: str | None = None
    editor_url: str | None = None
    previous: TrialLink | None = Field(None, description="The stored case-trial before.")
    next: TrialLink | None = Field(None, description="The stored case-trial after.")
    next_failing: TrialLink | None = Field(None, description="The next one not passing.")
    cost: CostSplit = Field(default_factory=CostSplit)
    inputs: list[InputField] = Field(default_factory=list)


class CheckChange(BaseModel):
    """One check of a changed case on both sides: ``pass``, ``fail``, ``2 of 3 pass``…"""

    name: str
    a: str
    b: str


class DiffPart(BaseModel):
    """A run of text the two sides share (``same``), or that only A (``del``) or only B
    (``add``) has."""

    op: Literal["same", "del", "add"]
    text: str


class TextDiff(BaseModel):
    """The two sides' replies (else outputs), word by word, for one trial of each."""

    what: str = Field(description="reply or output")
    trial_a: int
    trial_b: int
    parts: list[DiffPart]


class ComparePair(BaseModel):
    """A case that changed between the two runs, with both sides' trials and outputs."""

    id: str
    changed_checks: list[str]
    loaded: bool = Field(True, description="False: the page loads the trials when opened.")
    a: list[TrialResult]
    b: list[TrialResult]
    check_changes: list[CheckChange] = Field(default_factory=list)
    diff: TextDiff | None = None


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
    problems: list[str] = Field(
        default_factory=list, description="Label files that cannot be read, and why."
    )


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


class ValidationState(BaseModel):
    """How far the suite's validation, run in the background, has got."""

    state: Literal["running", "done", "failed", "abandoned", "not started"]
    done: int = Field(description="Cases read so far.")
    total: int = Field(description="Cases to read (counted from the files).")
    phase: str = ""
    message: str = ""


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
    cases: list[CaseRow] = Field(description="One page of the cases, in file order.")
    total_cases: int = Field(0, description="Cases that match ``q``.")
    page: int = 1
    pages: int = 1
    q: str = ""
    validation: ValidationState
    errors: list[str] = Field(description="Validation problems, `file:line:col: field: …`.")
    warnings: list[str] = Field(
        description="The warnings shown: all but the near-duplicate pairs past the most "
        "similar 20, which the last line counts (`caseforge validate --json` lists them)."
    )
    warnings_total: int = Field(0, description="Every warning, the near-duplicates included.")
    problems_left_out: int = Field(0, description="Problems past the first 200 of each kind.")
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


class BrokenDraft(BaseModel):
    """A line of the review queue that is not a draft: shown as an error row."""

    line: int
    problem: str


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
    broken: list[BrokenDraft] = Field(
        default_factory=list, description="Queue lines that do not read as drafts."
    )


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
    state: Literal["ready", "no_labels", "no_recordings", "labels_unreadable"]
    message: str = Field("", description="What to do when the state is not ready.")
    problems: list[str] = Field(
        default_factory=list,
        description="Labels files that cannot be read, one line each (state labels_unreadable: "
        "no figure is computed until they are fixed, as `caseforge calibrate` refuses).",
    )
    judge: dict[str, JsonValue] = Field(default_factory=dict)
    mode: str = ""
    outputs: int = 0
    overall: AgreementView | None = None
    per_fact: dict[str, AgreementView] = Field(default_factory=dict)
    disagreements: list[DisagreementView] = Field(default_factory=list)
    not_judged: list[str] = Field(default_factory=list)
    verbosity: ProbeView | None = None
    position: ProbeView | None = None


class TrendPoint(BaseModel):
    """One finished run of the configuration, as the trends page plots it."""

    run_id: str
    created_at: str
    pass_rate: float | None
    ci: tuple[float, float] | None
    cost: CostSplit
    latency_p95_s: float | None
    case_trials: int


class HeatRow(BaseModel):
    """One of the flakiest cases: its pass share in each run (None: not in that run)."""

    case: str
    flip_rate: float
    cells: list[float | None]
    letters: list[str]


class TrendsPage(BaseModel):
    index: int
    suite: str
    config: str | None = Field(description="The configuration shown (runs of one compare).")
    configs: list[str | None]
    points: list[TrendPoint] = Field(description="Oldest first.")
    heat: list[HeatRow] = Field(description="The flakiest cases, flakiest first.")
