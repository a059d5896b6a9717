"""The server-rendered pages (Jinja2, autoescaped) and the fragments htmx swaps in."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from caseforge.errors import CaseforgeError
from caseforge.serve.catalog import FILTERS, RUN_SORTS, Catalog, check_changes, pair_diff
from caseforge.serve.reviewing import (
    SHOWS,
    draft_view,
    parse_expect,
    queue_counts,
    review_decide,
    review_page,
)
from caseforge.serve.views import DecisionIn, LabelIn
from caseforge.tracing.spans import status_line

templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
PAIRS_OPEN = 1  # compare pairs rendered with their trials; the others load when opened
# The trial screen's sections, in order: each is `templates/trial/NAME.html`, given `data`
# and `view`. A new section (the spans tree of a traced run) is a template and a name here.
TRIAL_SECTIONS = (
    "checks", "error", "conversation", "input", "output", "reply", "tool_calls", "spans",
    "outcomes", "fixtures", "log", "case_file",
)  # fmt: skip


def _pretty(value: object, indent: int = 2) -> str:
    """JSON as people read it: non-ASCII kept (Jinja's ``tojson`` escapes it), and returned
    as plain text, so the template's autoescaping applies to it like to anything else."""
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


templates.env.filters["pretty"] = _pretty
templates.env.filters["status_line"] = status_line
router = APIRouter(include_in_schema=False)


def _catalog(request: Request) -> Catalog:
    found: Catalog = request.app.state.catalog
    return found


def render(request: Request, name: str, status_code: int = 200, **context: object) -> HTMLResponse:
    catalog: Catalog = request.app.state.catalog
    context.setdefault("csrf", getattr(request.state, "csrf", ""))
    context.setdefault("read_only", getattr(request.state, "read_only", False))
    context.setdefault("suites", _suite_names(catalog))
    context.setdefault("stores", catalog.shown_stores())
    # Links people copy: on the name and port this request reached, which the server answers.
    context.setdefault("origin", str(request.base_url).rstrip("/"))
    return templates.TemplateResponse(request, name, context, status_code=status_code)


def _suite_names(catalog: Catalog) -> list[tuple[int, str]]:
    try:
        return catalog.suite_names()
    except CaseforgeError:  # a suite's config broke since start-up: its own page says why
        return [(i, p.name) for i, p in enumerate(catalog.suites)]


def query(params: dict[str, object] | None = None, **more: object) -> str:
    """A screen's URL state as a query string: ``params`` updated with ``more``, without
    the values that are the screen's defaults (page 1, show all, nothing typed)."""
    merged = {**(params or {}), **more}
    defaults = {"page": 1, "show": "all", "sort": "started", "order": "desc"}
    kept = {k: v for k, v in merged.items() if v not in ("", None) and defaults.get(k) != v}
    return urlencode(kept)


templates.env.globals["query"] = query
templates.env.globals["TRIAL_SECTIONS"] = TRIAL_SECTIONS


@router.get("/", response_class=HTMLResponse)
def runs_page(
    request: Request,
    q: str = "",
    status: str = "",
    sort: str = "started",
    order: str = "desc",
    page: int = Query(1, ge=1),
) -> HTMLResponse:
    data = _catalog(request).run_list(status or None, q, sort, order, page)
    state = {"q": q, "status": status, "sort": sort, "order": order}
    return render(request, "runs.html", data=data, state=state, sorts=RUN_SORTS)


@router.get("/fragments/runs", response_class=HTMLResponse)
def runs_fragment(
    request: Request,
    q: str = "",
    status: str = "",
    sort: str = "started",
    order: str = "desc",
    page: int = Query(1, ge=1),
) -> HTMLResponse:
    """The runs list, polled: every 2 s while a run is running, else every 10 s."""
    data = _catalog(request).run_list(status or None, q, sort, order, page)
    state = {"q": q, "status": status, "sort": sort, "order": order}
    return render(request, "_runs.html", data=data, state=state, sorts=RUN_SORTS)


@router.get("/fragments/runs/{run_id}/live", response_class=HTMLResponse)
def live_fragment(request: Request, run_id: str) -> HTMLResponse:
    """A running run's progress, polled every 2 s; once it has ended, htmx reloads the page
    (``HX-Refresh``) so the screen shows the whole run."""
    catalog = _catalog(request)
    row = catalog.run_row(run_id)
    if row.status != "running":
        return HTMLResponse("", headers={"HX-Refresh": "true"})
    return render(request, "_live.html", row=row, rows=catalog.digest(run_id).headline)


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    request: Request,
    run_id: str,
    page: int = Query(1, ge=1),
    show: str = "all",
    tag: str = "",
    q: str = "",
) -> HTMLResponse:
    catalog = _catalog(request)
    data = catalog.run_page(run_id, page=page, show=show, tag=tag, q=q)
    live = catalog.run_row(run_id) if data.report.status.value == "running" else None
    baseline = data.compare_with[0].baseline if data.compare_with else None
    return render(
        request, "run.html", data=data, report=data.report, filters=FILTERS,
        show=show, tag=tag, q=q, live=live, baseline=baseline,
    )  # fmt: skip


@router.get("/fragments/runs/{run_id}/grid", response_class=HTMLResponse)
def grid_fragment(
    request: Request,
    run_id: str,
    page: int = Query(1, ge=1),
    show: str = "all",
    tag: str = "",
    q: str = "",
) -> HTMLResponse:
    """A page of the grid; the address bar follows (``HX-Push-Url``), so a filtered page
    can be shared, bookmarked and gone back to."""
    grid = _catalog(request).grid(run_id, page=page, show=show, tag=tag, q=q)
    response = render(request, "_grid.html", grid=grid, show=show, tag=tag, q=q)
    state = query(show=show, tag=tag, q=q, page=grid.page)
    response.headers["HX-Push-Url"] = f"/runs/{run_id}" + (f"?{state}" if state else "")
    return response


@router.get("/runs/{run_id}/cases/{case_id}", response_class=HTMLResponse)
@router.get("/runs/{run_id}/cases/{case_id}/trials/{trial}", response_class=HTMLResponse)
def trial_page(
    request: Request, run_id: str, case_id: str, trial: int | None = None
) -> HTMLResponse:
    data = _catalog(request).trial(run_id, case_id, trial)
    return render(request, "trial.html", data=data, view=data.view)


@router.get("/compare", response_class=HTMLResponse)
def compare_page(request: Request, a: str = "", b: str = "", baseline: str = "") -> HTMLResponse:
    """Run B against run A. Without B, B is the newest finished run; without A, A is the run
    B's suite's baseline was made from (gated against that file), else the previous
    finished run; never B itself. The page says which it chose and why."""
    catalog = _catalog(request)
    runs = catalog.infos()
    chose: list[str] = []
    given_b = b
    if a:
        catalog.store_of(a)  # no such run: the 404 page
    if b:
        catalog.store_of(b)
    else:
        newest = next((i for _, i in runs if i.status == "finished" and i.id != a), None)
        if newest is not None:
            b = newest.id
            chose.append(f"B is the newest finished run, {b}.")
    if b and not a:
        choices = catalog.compare_choices(b)
        default = next((c for c in choices if c.why), None)
        if default is not None:
            a = default.id
            chose.append(f"A is {default.why}, {a}.")
            if default.baseline and not baseline:
                baseline = default.baseline
        else:
            suite = next((i.suite for _, i in runs if i.id == b), "")
            chose.append(
                f"No other finished run of suite {suite!r} to compare B with: choose A, "
                "or run the suite again."
            )
    data = catalog.compare(a, b, baseline or None, trials=PAIRS_OPEN) if a and b else None
    return render(
        request, "compare.html", data=data, runs=[i for _, i in runs], a=a, b=b,
        baseline=baseline, chose=chose, same=bool(a) and a == b,
        # B chosen: its suite's baseline files; else every suite's, as the form may change B
        baselines=catalog.baselines(given_b),
    )  # fmt: skip


@router.get("/fragments/compare/pair", response_class=HTMLResponse)
def compare_pair_fragment(request: Request, a: str, b: str, case: str) -> HTMLResponse:
    """A pair's trials, side by side, loaded when the compare page opens it."""
    trials_a, trials_b = _catalog(request).pair_trials(a, b, case)
    return render(
        request, "_pair.html", a=a, b=b, case_id=case, trials_a=trials_a, trials_b=trials_b,
        changes=check_changes(trials_a, trials_b), diff=pair_diff(trials_a, trials_b),
    )  # fmt: skip


@router.get("/runs/{run_id}/label", response_class=HTMLResponse)
def label_page(request: Request, run_id: str, skip: int = Query(0, ge=0)) -> HTMLResponse:
    queue = _catalog(request).label_queue(run_id, skip)
    return render(request, "label.html", queue=queue, saved=None, skip=skip)


@router.post("/runs/{run_id}/label", response_class=HTMLResponse)
async def label_submit(request: Request, run_id: str) -> HTMLResponse:
    """The label form (htmx): save, then swap in the next output to label; a save that is
    refused (a labels file that cannot be read, an output labeled meanwhile) says why
    above the same output."""
    form = await request.form()
    facts = [str(v) for k, v in form.multi_items() if k == "fact"]
    labels = {fact: str(form.get(f"verdict-{i}", "")) for i, fact in enumerate(facts)}
    skip = int(str(form.get("skip", "0")) or 0) if str(form.get("skip", "0")).isdigit() else 0
    given = LabelIn(
        case_id=str(form.get("case_id", "")),
        trial=int(str(form.get("trial", "0")) or 0),
        check=str(form.get("check", "")),
        digest=str(form.get("digest", "")),
        labels={k: v for k, v in labels.items() if v},
    )
    catalog = _catalog(request)
    try:
        saved = catalog.save_label(run_id, given)
    except CaseforgeError as exc:
        return render(
            request, "_label.html", queue=catalog.label_queue(run_id, skip), saved=None,
            skip=skip, problem=exc.text,
        )  # fmt: skip
    return render(
        request, "_label.html", queue=catalog.label_queue(run_id, skip), saved=saved, skip=skip
    )


@router.get("/suites/{index}", response_class=HTMLResponse)
def suite_page(
    request: Request, index: int, page: int = Query(1, ge=1), q: str = ""
) -> HTMLResponse:
    return render(request, "suite.html", data=_catalog(request).suite_page(index, page, q))


@router.get("/fragments/suites/{index}/validation", response_class=HTMLResponse)
def validation_fragment(request: Request, index: int) -> HTMLResponse:
    """The validation's progress, polled every second while it runs (polling is what
    keeps it going: one nobody polls is stopped); the page reloads once it is done."""
    state = _catalog(request).suite_index(index).state()
    if state.state == "done":
        return HTMLResponse("", headers={"HX-Refresh": "true"})
    return render(request, "_validation.html", state=state, index=index)


@router.get("/suites/{index}/trends", response_class=HTMLResponse)
def trends_page(request: Request, index: int, config: str = "") -> HTMLResponse:
    data = _catalog(request).trends(index, config or None)
    return render(request, "trends.html", data=data)


@router.get("/suites/{index}/review", response_class=HTMLResponse)
def review_screen(
    request: Request, index: int, show: str = "pending", page: int = Query(1, ge=1)
) -> HTMLResponse:
    catalog = _catalog(request)
    data = review_page(catalog.suite_dir(index), index, catalog.reviewer, show, page)
    return render(request, "review.html", data=data, shows=SHOWS)


@router.post("/suites/{index}/review/{draft_id}", response_class=HTMLResponse)
async def review_submit(request: Request, index: int, draft_id: str) -> HTMLResponse:
    """One decision (htmx): the card comes back decided, or with the problem beside the
    form, and the counts are swapped out of band."""
    form = await request.form()
    action = str(form.get("action", ""))
    catalog = _catalog(request)
    suite_dir = catalog.suite_dir(index)
    try:
        if action not in ("accept", "edit", "reject"):
            raise CaseforgeError(f"action must be accept, edit or reject, not {action!r}")
        edit = action == "edit"
        given = DecisionIn.model_validate(
            {
                "action": action,
                "reason": str(form.get("reason", "")),
                "text": str(form.get("text", "")) if edit else None,
                "expect": parse_expect(str(form.get("expect_yaml", ""))) if edit else None,
            }
        )
        done = review_decide(suite_dir, draft_id, given, catalog.reviewer)
    except CaseforgeError as exc:
        return render(
            request, "_draft.html", draft=draft_view(suite_dir, draft_id), index=index,
            problem=exc.text, form=dict(form), counts=queue_counts(suite_dir), oob=True,
        )  # fmt: skip
    return render(
        request, "_draft.html", draft=done.draft, index=index, written=done.path,
        counts=done.counts, oob=True,
    )  # fmt: skip


@router.get("/suites/{index}/calibration", response_class=HTMLResponse)
async def calibration_screen(request: Request, index: int) -> HTMLResponse:
    catalog = _catalog(request)
    data = await catalog.calibrations.page(catalog.suite_dir(index), index)
    return render(request, "calibration.html", data=data)
