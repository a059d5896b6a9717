"""The review screen: a suite's synthesized drafts, with what a reviewer needs beside each
(the tuple and its meaning, the oracle's expectations, provenance, the near-duplicates'
texts), and the decisions, made through :func:`caseforge.synth.review.decide` exactly as
``caseforge review`` makes them."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from caseforge.case.limits import exceeded, limit_message
from caseforge.case.load import load_config, load_suite
from caseforge.case.model import Case
from caseforge.case.neardup import jaccard, shingles
from caseforge.case.validate import case_text
from caseforge.errors import CaseforgeError, UsageError
from caseforge.files import yaml_text
from caseforge.serve.views import (
    BrokenDraft,
    DecisionIn,
    DecisionOut,
    DraftView,
    Neighbour,
    ReviewCountsView,
    ReviewPage,
)
from caseforge.synth.review import Decision, ReviewCounts, decide, review_counts
from caseforge.synth.tuples import Dimensions, Scenario, Value, load_dimensions
from caseforge.synth.writer import QUEUE_FILE, Draft, load_queue, read_queue, synth_dir

DRAFT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
REVIEW_PAGE = 20
SHOWS = ("pending", "all", "accepted", "edited", "rejected")


def valid_draft_id(value: str) -> str:
    if not DRAFT_ID.match(value):
        raise UsageError(f"{value!r} is not a draft id")
    return value


def review_page(suite_dir: Path, index: int, reviewer: str, show: str, page: int) -> ReviewPage:
    if show not in SHOWS:
        raise UsageError(f"show must be one of {', '.join(SHOWS)}, not {show!r}")
    drafts, broken = read_queue(suite_dir)
    chosen = drafts if show == "all" else [d for d in drafts if d.status == show]
    pages = max(1, -(-len(chosen) // REVIEW_PAGE))
    page = min(max(1, page), pages)
    shown = chosen[(page - 1) * REVIEW_PAGE : page * REVIEW_PAGE]
    context = _Context(suite_dir, drafts)
    return ReviewPage(
        index=index,
        suite=load_config(suite_dir).name,
        queue_file=str((synth_dir(suite_dir) / QUEUE_FILE).relative_to(suite_dir)),
        reviewer=reviewer,
        show=show,
        page=page,
        pages=pages,
        shown=len(chosen),
        counts=_counts(review_counts(drafts)),
        drafts=[_safe_view(context, d) for d in shown],
        broken=[BrokenDraft(line=line, problem=problem) for line, problem in broken],
    )


def review_decide(suite_dir: Path, draft_id: str, given: DecisionIn, reviewer: str) -> DecisionOut:
    if not reviewer.strip():
        raise UsageError(
            "a decision needs the reviewer's name: start `caseforge serve` with "
            "--reviewer NAME, or set git's user.name"
        )
    expect: dict[str, object] | None = (
        {k: v for k, v in given.expect.items()} if given.expect is not None else None
    )
    decision = Decision(given.action, given.reason, given.text, expect)
    decided = decide(suite_dir, valid_draft_id(draft_id), decision, reviewer)
    path = decided.path
    return DecisionOut(
        draft=_Context(suite_dir, load_queue(suite_dir)).view(decided.draft),
        path=str(path.relative_to(suite_dir)) if path is not None else None,
        counts=_counts(decided.counts),
    )


def draft_view(suite_dir: Path, draft_id: str) -> DraftView:
    drafts = read_queue(suite_dir)[0]
    draft = next((d for d in drafts if d.draft_id == valid_draft_id(draft_id)), None)
    if draft is None:
        raise UsageError(f"no draft {draft_id!r} in {synth_dir(suite_dir) / QUEUE_FILE}")
    return _Context(suite_dir, drafts).view(draft)


def queue_counts(suite_dir: Path) -> ReviewCountsView:
    return _counts(review_counts(read_queue(suite_dir)[0]))


def parse_expect(text: str) -> dict[str, object]:
    """The edit form's expect block (YAML), or a one-line error naming its line."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError

    try:
        data = YAML(typ="safe").load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise CaseforgeError(f"expect: not YAML at {where}: {exc.problem}") from None
    except RecursionError:
        raise CaseforgeError(f"expect: {limit_message('depth')}") from None
    limit = exceeded(data)  # an alias bomb would hang the server expanding it
    if limit is not None:
        raise CaseforgeError(f"expect: {limit_message(limit)}")
    if not isinstance(data, dict) or not data:
        raise CaseforgeError("expect: needs at least one check, as `name: {mode: …}` lines")
    # Dates and such become strings, as they would in a case file read back as JSON.
    plain: dict[str, object] = json.loads(json.dumps(data, default=str, ensure_ascii=False))
    return plain


def _safe_view(context: _Context, draft: Draft) -> DraftView:
    """The draft's view; one whose contents cannot be shown (a value of the wrong type in
    a field the queue's reader does not check) becomes a bare card saying why."""
    try:
        return context.view(draft)
    except (ValueError, TypeError, AttributeError) as exc:
        return DraftView(
            draft_id=draft.draft_id, status="broken", tuple={}, tuple_descriptions={},
            text=f"this draft cannot be shown: {type(exc).__name__}: {exc}",
            text_field=str(draft.text_field), input={}, expect={}, oracles={},
            expect_yaml="", provenance={}, near_duplicates=[],
        )  # fmt: skip


def _counts(counts: ReviewCounts) -> ReviewCountsView:
    return ReviewCountsView.model_validate(counts)


class _Context:
    """What the drafts' views need from the suite, read once per request."""

    def __init__(self, suite_dir: Path, drafts: list[Draft]) -> None:
        self.drafts = {d.draft_id: d for d in drafts}
        try:
            suite = load_suite(suite_dir)
            fields = suite.config.dedup.fields
            self.cases = {c.case.id: case_text(c.case, fields) for c in suite.cases}
        except CaseforgeError:
            self.cases = {}  # an invalid suite: the neighbours show no text
        try:
            self.dimensions: Dimensions | None = load_dimensions(suite_dir)
        except CaseforgeError:
            self.dimensions = None

    def view(self, draft: Draft) -> DraftView:
        return DraftView(
            draft_id=draft.draft_id,
            status=draft.status,
            tuple=draft.tuple,
            tuple_descriptions=self._descriptions(draft.tuple),
            text=draft.text,
            text_field=draft.text_field,
            input={
                k: json.loads(json.dumps(v, default=str))
                for k, v in draft.input.items()
                if k != draft.text_field
            },
            expect=_rendered(draft),
            oracles={
                name: f"{check['oracle']}({_args(check.get('args'))})"
                for name, check in draft.expect.items()
                if isinstance(check, dict) and check.get("oracle")
            },
            expect_yaml=yaml_text(draft.expect),
            provenance={
                "tuple_id": draft.tuple_id,
                "synth_run": draft.synth_run,
                "model": draft.model,
                "prompt_hash": draft.prompt_hash,
            },
            near_duplicates=[self._neighbour(draft, n) for n in draft.near_duplicates],
            reason=draft.reason,
            case_id=draft.case_id,
            reviewed_by=draft.reviewed_by,
            reviewed_on=draft.reviewed_on,
        )

    def _descriptions(self, values: dict[str, str]) -> dict[str, str]:
        if self.dimensions is None:
            return {}
        axes: dict[str, Mapping[str, Scenario | Value]] = {
            "scenario": self.dimensions.scenarios,
            "persona": self.dimensions.personas,
            "shape": self.dimensions.shapes,
        }
        found = {}
        for axis, value in values.items():
            known = axes.get(axis, {}).get(value)
            if known is not None:
                found[axis] = known.description
        return found

    def _neighbour(self, draft: Draft, name: str) -> Neighbour:
        other = name.removeprefix("draft ")
        text = (
            self.drafts[other].text
            if name.startswith("draft ") and other in self.drafts
            else self.cases.get(name, "")
        )
        return Neighbour(
            id=name, text=text, similarity=jaccard(shingles(draft.text), shingles(text))
        )


def _rendered(draft: Draft) -> dict[str, str]:
    try:
        case = Case.model_validate({"id": "draft", "input": draft.input, "expect": draft.expect})
    except ValidationError:
        return {k: json.dumps(v, ensure_ascii=False) for k, v in draft.expect.items()}
    return {name: check.render() for name, _, check in case.checks()}


def _args(args: object) -> str:
    if not isinstance(args, dict):
        return ""
    return ", ".join(f"{k}={v}" for k, v in args.items())
