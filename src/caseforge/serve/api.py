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
    TrendsPage,
    TrialPage,
)

router = APIRouter(prefix="/api", tags=["api"])


def catalog(request: Request) -> Catalog:
    found: Catalog = request.app.state.catalog
    return found


@router.get("/runs", response_model=RunList)
def list_runs(
    request: Request,
    status: str | None = None,
    q: str = "",
    sort: str = "started",
    order: str = "desc",
    page: int = Query(1, ge=1),
) -> RunList:
    """The runs of every store served, newest first, 50 a page (``status`` filters: running,
    finished…; ``q`` finds a text in the id, suite, config, agent or status; ``sort`` is one
    of started, run, suite, config, cases, pass_rate, errors, cost, status; ``order`` asc or
    desc)."""
    return catalog(request).run_list(status, q, sort, order, page)


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
def get_suite(request: Request, index: int, page: int = Query(1, ge=1), q: str = "") -> SuitePage:
    """A served suite: a page of its cases (100) with their expectations and history, the
    validation's progress (it runs in the background; poll until ``validation.state`` is
    ``done``) and then its problems and category × split, the flaky cases, the holdout."""
    return catalog(request).suite_page(index, page, q)


@router.get("/suites/{index}/trends", response_model=TrendsPage)
def get_trends(request: Request, index: int, config: str | None = None) -> TrendsPage:
    """The suite's finished runs of one configuration (default: the newest run's), oldest
    first: pass rate with its interval, cost by who spent it, latency p95; and the flakiest
    cases, run by run."""
    return catalog(request).trends(index, config)


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
