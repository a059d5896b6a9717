"""The JSON API under ``/api/``: the same typed models the pages render."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

from caseforge.report.model import RunReport
from caseforge.serve.catalog import Catalog
from caseforge.serve.reviewing import review_decide, review_page
from caseforge.serve.views import (
    CalibrationPage,
    ComparePage,
    DecisionIn,
    DecisionOut,
    GridPage,
    LabelIn,
    LabelQueue,
    LabelSaved,
    ReviewPage,
    RunList,
    SuitePage,
    TrialPage,
)

router = APIRouter(prefix="/api", tags=["api"])


def catalog(request: Request) -> Catalog:
    found: Catalog = request.app.state.catalog
    return found


@router.get("/runs", response_model=RunList)
def list_runs(request: Request, status: str | None = None) -> RunList:
    """Every run of every store served, newest first (``status`` filters: running, finished…)."""
    return catalog(request).run_list(status)


@router.get("/runs/{run_id}", response_model=RunReport)
def get_run(request: Request, run_id: str, raw: bool = False) -> RunReport:
    """The run's full report, as ``caseforge report --format json`` gives it."""
    return catalog(request).report(run_id, raw)


@router.get("/runs/{run_id}/grid", response_model=GridPage)
def get_grid(
    request: Request,
    run_id: str,
    page: int = Query(1, ge=1),
    show: str = "all",
    tag: str = "",
    q: str = "",
) -> GridPage:
    """One page of the case × trial grid (``show``: all, failing, errors or flaky)."""
    return catalog(request).grid(run_id, page=page, show=show, tag=tag, q=q)


@router.get("/runs/{run_id}/cases/{case_id}/trials/{trial}", response_model=TrialPage)
def get_trial(request: Request, run_id: str, case_id: str, trial: int) -> TrialPage:
    """One case-trial whole, with each check's expected and actual values and its line."""
    return catalog(request).trial(run_id, case_id, trial)


@router.get("/compare", response_model=ComparePage)
def get_compare(request: Request, a: str, b: str, baseline: str | None = None) -> ComparePage:
    """Run ``b`` against run ``a``, case by case; with ``baseline``, the gate on ``b``."""
    return catalog(request).compare(a, b, baseline)


@router.get("/runs/{run_id}/labels", response_model=LabelQueue)
def get_label_queue(request: Request, run_id: str) -> LabelQueue:
    """How many outputs of the run are left to label, and the next one."""
    return catalog(request).label_queue(run_id)


@router.post("/runs/{run_id}/labels", response_model=LabelSaved)
def post_label(request: Request, run_id: str, label: LabelIn) -> LabelSaved:
    """Label one output fact by fact, into ``SUITE/labels/`` (as ``caseforge label`` does)."""
    return catalog(request).save_label(run_id, label)


@router.get("/suites/{index}", response_model=SuitePage)
def get_suite(request: Request, index: int) -> SuitePage:
    """A served suite: its cases and expectations, validation problems, history, holdout."""
    return catalog(request).suite_page(index)


@router.get("/suites/{index}/review", response_model=ReviewPage)
def get_review(
    request: Request, index: int, show: str = "pending", page: int = Query(1, ge=1)
) -> ReviewPage:
    """The suite's review queue (``show``: pending, all, accepted, edited or rejected), with
    the counts per decision and per reviewer."""
    found = catalog(request)
    return review_page(found.suite_dir(index), index, found.reviewer, show, page)


@router.post("/suites/{index}/review/{draft_id}", response_model=DecisionOut)
def post_review(request: Request, index: int, draft_id: str, decision: DecisionIn) -> DecisionOut:
    """Accept, edit or reject one draft, as ``caseforge review`` does (same code, same lock);
    an accepted or edited draft becomes a case file."""
    found = catalog(request)
    return review_decide(found.suite_dir(index), draft_id, decision, found.reviewer)


@router.get("/suites/{index}/calibration", response_model=CalibrationPage)
async def get_calibration(request: Request, index: int) -> CalibrationPage:
    """How far the suite's judge agrees with its labels (κ, confusion matrix, disagreements,
    bias probes), replayed from the recorded judge answers; never a live model call."""
    found = catalog(request)
    return await found.calibrations.page(found.suite_dir(index), index)
