"""The criteria audit: every loosening of a check in the git history of a suite.

Loosening a criterion never turns anything red — the score just looks better — so
``caseforge audit`` walks the history of ``SUITE/cases/`` and ``SUITE/retired.yaml`` and
asks every commit that loosened a check to say why, in a line of its message::

    Criteria-change: the amount is disputed by finance; must_include until it is settled

(the key is case-insensitive; the reason must not be empty; lines indented under it
continue it, as in a git trailer).

Each commit is compared with its first parent, case by case: cases are matched by ``id``,
so a case that moves to another file, is renamed, or goes into a JSONL file is still the
same case. Within a case each ``expect`` key is compared, and these are loosenings (the
``kind`` of a :class:`Loosening`):

``mode-weakened``
    the key's check changed to a weaker mode (``before``/``after``: the mode names). The
    strength order (:data:`STRENGTH`), strongest first::

        exact = exact_set = tool_calls > number > regex = json = javascript = python
              > must_include > must_not_include > judge > ignore

    ``must_not_include`` only forbids, so it sits below ``must_include``. ``outcome`` stands
    apart: it reads the run's workspace, not the field, so a change between ``outcome`` and
    a code check (``exact`` … ``must_not_include``) is neither; only ``outcome`` → ``judge``
    or ``ignore`` is a loosening. ``cost`` and ``latency`` (60) stand apart the same way:
    they read what the run measured. Against another mode, the shorthand ``{must_include,
    must_not_include}`` counts as its stronger part, ``must_include`` (``must_not_include``
    when that is all it has), and ``tool_calls: {must_call, …}`` as ``tool_calls``; kept in
    the same form, they are compared list by list (the kinds below).
``ignored``
    the check was turned ``ignore`` (``before``: the old mode, ``after``: ``"ignore"``).
``check-removed``
    the ``expect`` key is gone, or another mode became an empty shorthand (``before``: the
    old mode, ``after``: ``None``). Removing an ``ignore`` check grades nothing less and is
    not one.
``values-removed``
    an item of ``exact_set``, ``must_include`` or a judge's facts is no longer expected
    (``before``/``after``: the two lists, ``after`` ``[]`` when a shorthand list was
    emptied; added items are fine, and an ``exact_set`` changed in any way that drops an
    item counts).
``must-not-include-dropped``
    a ``must_not_include`` value is gone, or the whole part is (``after``: ``[]``), unless
    the check became ``exact``/``exact_set``, which pins the field outright.
``must-call-removed``, ``must-not-call-removed``, ``order-removed``
    an entry of ``tool_calls.must_call``, ``must_not_call`` or ``order`` is gone (the
    lists; ``field``: ``tool_calls.must_call`` …). A case may hold several tool-call
    checks (under keys of its own, with ``field: tool_calls``): an expectation one of them
    drops counts only when no check of the case on the same turn still holds it, so moving
    a call from one check to another, or renaming the key, loosens nothing. An ``order``
    chain is gone when no chain still holds its calls: in the same relative order (others
    between or around them: stricter), or in another order (a different criterion); a
    chain split in two is gone, since each half may hold where the whole would not.
``tool-args-dropped``, ``tool-count-loosened``, ``max-calls-raised``
    a required call's arguments dropped or changed, its count loosened (``min`` lower,
    ``max`` higher or gone), a ``max_calls`` limit raised or gone.
a ``spans`` check's, per span name or glob
    a ``must_have`` entry gone (``must-have-removed``), or a ``must_not_have`` one
    (``must-not-have-removed``; a forbid on ``*``, on a glob the old plain name falls
    under, or with fewer attributes still holds it); a required span's attributes dropped
    or changed (``span-attributes-dropped``), its count loosened
    (``span-count-loosened``), its ``max_duration_ms`` raised or gone or its
    ``percentile`` lowered (``span-duration-raised``); a ``max_errors`` limit raised or
    gone (``error-limit-raised``; ``before``/``after``: ``{glob: value}``). Its ``order``
    chains are read as ``tool_calls``' are (``order-removed``, ``field``:
    ``trace.order``). As with tool calls, every spans check of the case is read together:
    a span moved from one to another is kept.
``tolerance-widened``
    a ``number`` check's tolerance grew (``before``/``after``: the tolerances).
``deleted-not-retired``
    a case left ``cases/`` (its file deleted, or its JSONL line removed) and its id is not
    in ``retired.yaml`` as of that commit (``field``: ``"case"``, ``before``: the file it
    was in, ``after``: ``None``).

Changing an expected value (``exact``, ``number``, ``outcome``), a regex or a rubric is a
different criterion, not a looser one, and is not reported.

A file version that does not parse (bad YAML or JSON, not a case) is not compared in
that commit; the next commit compares with the last version of that file that did parse,
so breaking a file and loosening it in the next commit is still caught. A check that does
not validate is skipped, not treated as removed. Merge commits are compared with every
parent, and a loosening counts only when it is one against all of them: what a branch
brought in was already audited on the branch's own commits (a merge that itself drops a
case added on its first-parent side only is not caught).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from pydantic import TypeAdapter, ValidationError
from ruamel.yaml import YAML

from caseforge.case.load import CASE_SUFFIXES, CASES_DIR, suite_modes
from caseforge.case.model import case_model
from caseforge.case.retire import RETIRED_FILE
from caseforge.checks import (
    BUILTIN_MODES,
    BaseCheck,
    Check,
    IncludeShorthand,
    ModeTable,
    MustIncludeCheck,
    MustNotIncludeCheck,
    OptionOrder,
    Reads,
    UndeclaredCheck,
)
from caseforge.checks.builtin import TOOL_CALLS_STRENGTH
from caseforge.checks.grammar import Count, is_subchain
from caseforge.checks.spans import SpanMatcher, SpansCheck
from caseforge.checks.tools import CallMatcher, ToolCallsCheck
from caseforge.errors import CaseforgeError
from caseforge.jsontypes import JSONObject
from caseforge.tracing.spans import is_glob, name_matches
from caseforge.values import same
from caseforge.vcs import GitBatch

#: How strict each built-in mode is (from each mode's ``strength``); a change to a lower
#: number is a loosening (``outcome`` aside: see the module docstring).
STRENGTH: dict[str, int] = {
    **{name: spec.strength for name, spec in BUILTIN_MODES.items()},
    "tool_calls": TOOL_CALLS_STRENGTH,
}

#: The kinds of loosening the audit itself names; the modes add theirs (an option's, the
#: items'): :func:`all_kinds` lists them all.
KINDS = (
    "mode-weakened",
    "ignored",
    "check-removed",
    "values-removed",
    "must-not-include-dropped",
    "alternative-added",
    "option-loosened",
    "undeclared-mode-changed",
    "must-call-removed",
    "must-not-call-removed",
    "order-removed",
    "tool-args-dropped",
    "tool-count-loosened",
    "max-calls-raised",
    "must-have-removed",
    "must-not-have-removed",
    "span-attributes-dropped",
    "span-count-loosened",
    "span-duration-raised",
    "error-limit-raised",
    "deleted-not-retired",
)


def all_kinds(modes: ModeTable = BUILTIN_MODES) -> list[str]:
    """Every ``Loosening.kind`` the audit may report with these modes: its own
    (:data:`KINDS`), then each mode's (a dropped item's, an option's), in that order."""
    found = dict.fromkeys(KINDS)
    for spec in modes.values():
        found[spec.items_kind] = None
        for order in spec.options.values():
            found[order.kind] = None
    return list(found)


TRAILER = "Criteria-change"

_TOOL_KIND = {
    "must_call": "must-call-removed",
    "must_not_call": "must-not-call-removed",
    "order": "order-removed",
}
_TRAILER_LINE = re.compile(rf"^{TRAILER}[ \t]*:(.*)$", re.IGNORECASE)
_FALLBACK_DEPTH = 20
_NULL_SHA = "0" * 40
_REGULAR = ("100644", "100755")
# Variables a git hook may set that would point git away from the suite's repository.
_YAML = YAML(typ="safe", pure=False)
# The pure-Python loader reads some YAML 1.2 the C parser rejects (``[finding:F5]`` in a
# flow sequence, as ``caseforge retire`` writes it); it is tried when the C parser fails.
_YAML_PURE = YAML(typ="safe", pure=True)


@dataclass(frozen=True)
class Loosening:
    """One check loosened by one commit.

    ``field`` names the check as ``Case.checks()`` does: the ``expect`` key, or
    ``KEY.must_include`` / ``KEY.must_not_include`` for a part of the shorthand, or
    ``tool_calls.must_call`` (``must_not_call``, ``order``); ``"case"`` for a deleted case.
    ``path`` is the case file, relative to the suite folder (after the commit; before it
    for a deleted case). ``excused`` is the commit's ``Criteria-change`` reason, or
    ``None`` when it gave none.
    """

    commit: str
    short: str
    subject: str
    case_id: str
    field: str
    kind: str
    before: object
    after: object
    path: str
    excused: str | None

    def format(self) -> str:
        """One line: ``short case field: kind: before -> after (subject)``."""
        return (
            f"{self.short} {self.case_id} {self.field}: {self.kind}: "
            f"{_show(self.before)} -> {_show(self.after)} ({self.subject})"
        )

    def to_json(self) -> dict[str, object]:
        """A JSON-ready mapping of this loosening."""
        return {
            "commit": self.commit,
            "short": self.short,
            "subject": self.subject,
            "case_id": self.case_id,
            "field": self.field,
            "kind": self.kind,
            "before": self.before,
            "after": self.after,
            "path": self.path,
            "excused": self.excused,
        }


def loosenings(suite_dir: Path, since: str | None = None) -> list[Loosening]:
    """Every loosening in the history of the suite's case files, oldest commit first.

    ``since`` is a revision (a branch, tag or commit): only the commits after it up to
    ``HEAD`` are audited (``since..HEAD``). Raises ``CaseforgeError`` when the suite is
    not in a git repository, git is missing, or ``since`` is not a revision.
    """
    suite_dir = Path(suite_dir)
    if not suite_dir.is_dir():
        raise CaseforgeError(f"{suite_dir}: suite folder not found")
    modes = suite_modes(suite_dir)
    with GitBatch(suite_dir, "the criteria audit reads the suite's git history") as git:
        return _Audit(git, modes).run(since)


def criteria_problems(suite_dir: Path, since: str | None = None) -> list[Loosening]:
    """The loosenings whose commit gives no ``Criteria-change:`` reason."""
    return [item for item in loosenings(suite_dir, since) if item.excused is None]


def criteria_reason(message: str) -> str | None:
    """The reason of the message's ``Criteria-change:`` line, or ``None`` (none, or empty).

    The key is case-insensitive and starts its line; following lines that are indented
    continue the reason. Several such lines are joined with ``"; "``.
    """
    reasons: list[str] = []
    lines = message.splitlines()
    for index, line in enumerate(lines):
        match = _TRAILER_LINE.match(line)
        if not match:
            continue
        words = [match.group(1).strip()]
        for more in lines[index + 1 :]:
            if not more[:1].isspace() or not more.strip():
                break
            words.append(more.strip())
        reason = " ".join(word for word in words if word)
        if reason:
            reasons.append(reason)
    return "; ".join(reasons) if reasons else None


@dataclass(frozen=True)
class _Commit:
    sha: str
    short: str
    parents: list[str]
    subject: str
    message: str


@dataclass(frozen=True)
class _Entry:
    """One changed file: its case-file path and blob before and after (``None``: none)."""

    old_path: str | None
    old_sha: str | None
    new_path: str | None
    new_sha: str | None


# --- parsed cases ----------------------------------------------------------------------


@dataclass(frozen=True)
class _CaseView:
    """A case as far as it could be read: its checks, and the keys that did not validate."""

    id: str
    expect: dict[str, Check]
    unknown: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _FileView:
    """The cases of one file version; ``clean`` when every line and check was read."""

    cases: dict[str, _CaseView]
    clean: bool


class _Reader:
    """Reads case files of the history with today's check modes; a mode that no declaration
    knows is read as an ``UndeclaredCheck``, so a change to it can still be seen."""

    def __init__(self, modes: ModeTable) -> None:
        self.model = case_model(modes, lenient=True)
        self.check: TypeAdapter[Check] = TypeAdapter(modes.union(lenient=True))

    def case_view(self, data: object) -> _CaseView | None:
        """Validate as a case; failing that, read its id and whichever checks validate."""
        if not isinstance(data, dict):
            return None
        try:
            case = self.model.model_validate(data)
        except ValidationError:
            pass
        else:
            found = dict(case.expect)
            if case.conversation is not None:  # a scripted turn's checks bind like any other
                for number, step in enumerate(case.conversation.script, start=1):
                    for key, check in step.expect.items():
                        found[f"turn{number}.{key}"] = check
            return _CaseView(case.id, found)
        case_id, expect = data.get("id"), data.get("expect")
        if not isinstance(case_id, str) or not case_id or not isinstance(expect, dict):
            return None
        checks: dict[str, Check] = {}
        unknown: set[str] = set()
        for key, raw in expect.items():
            try:
                checks[str(key)] = self.check.validate_python(raw)
            except ValidationError:
                unknown.add(str(key))
        return _CaseView(case_id, checks, frozenset(unknown))

    def parse_file(self, path: str, data: bytes) -> _FileView:
        """The cases in one version of a case file; never raises."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return _FileView({}, clean=False)
        if path.endswith(".jsonl"):
            cases: dict[str, _CaseView] = {}
            clean = True
            for line in text.split("\n"):
                if not line.strip():
                    continue
                try:
                    view = self.case_view(json.loads(line))
                except ValueError:
                    view = None
                if view is None:
                    clean = False
                    continue
                clean = clean and not view.unknown
                cases[view.id] = view
            return _FileView(cases, clean)
        try:
            view = self.case_view(_load_yaml(text))
        except Exception:  # history is untrusted input: any failure means "does not parse"
            view = None
        if view is None:
            return _FileView({}, clean=False)
        return _FileView({view.id: view}, clean=not view.unknown)


def _load_yaml(text: str) -> object:
    """Parse YAML with the C loader, or with the pure one where the C loader fails."""
    try:
        return _YAML.load(text)
    except Exception:
        return _YAML_PURE.load(text)


def _patch(broken: _FileView, older: _FileView) -> _FileView:
    """``broken``'s cases, with what it failed to read taken from an older clean version."""
    cases = dict(older.cases)
    for case_id, view in broken.cases.items():
        old = older.cases.get(case_id)
        if old is not None and view.unknown:
            expect = dict(view.expect)
            unknown = set(view.unknown)
            for key in view.unknown:
                if key in old.expect:
                    expect[key] = old.expect[key]
                    unknown.discard(key)
            view = _CaseView(case_id, expect, frozenset(unknown))
        cases[case_id] = view
    return _FileView(cases, clean=False)


# --- comparing two versions of a case -------------------------------------------------


@dataclass(frozen=True)
class _Part:
    """One constraint under an ``expect`` key (the shorthand and tool_calls hold several)."""

    name: str
    mode: str
    values: list[object] | None = None
    kind: str = "values-removed"  # the loosening when one of ``values`` is dropped
    guard: bool = False  # still binds when the rest of the check gives way to a stronger mode
    options: tuple[tuple[str, object, OptionOrder], ...] = ()
    alternatives: tuple[object, ...] | None = None  # ``any_of``: one added loosens


@dataclass(frozen=True)
class _Finding:
    """A loosening before it is tied to its commit; ``removed``: the items dropped."""

    case_id: str
    field: str
    kind: str
    before: object
    after: object
    path: str
    removed: list[object] | None = None


def _mode_part(name: str, check: BaseCheck) -> _Part:
    options = tuple((key, getattr(check, key), order) for key, order in check.options.items())
    field = check.alternatives_field
    alternatives = tuple(getattr(check, field) or ()) if field else None
    items = check.items
    if isinstance(check, MustIncludeCheck) and check.match == "any":
        # Any one of them will do: each value is an alternative, and adding one loosens.
        items, alternatives = None, tuple(check.values)
    return _Part(name, check.mode, items, check.items_kind, check.guard, options, alternatives)


def _parts(key: str, check: Check) -> list[_Part]:
    if isinstance(check, ToolCallsCheck):
        parts = [
            _Part(f"{key}.{name}", name, _tool_values(check, name), kind, True)
            for name, kind in _TOOL_KIND.items()
            if getattr(check, name)
        ]
        if check.max_calls is not None:
            parts.append(_Part(f"{key}.max_calls", "max_calls", None, "max-calls-raised", True))
        return parts
    if isinstance(check, IncludeShorthand):
        parts = []
        if check.must_include:
            include = MustIncludeCheck(
                mode="must_include", values=check.must_include, **check.text_options
            )
            parts.append(_mode_part(f"{key}.must_include", include))
        if check.must_not_include:
            exclude = MustNotIncludeCheck(
                mode="must_not_include", values=check.must_not_include, **check.text_options
            )
            parts.append(_mode_part(f"{key}.must_not_include", exclude))
        return parts
    if isinstance(check, UndeclaredCheck):
        return [_Part(key, check.mode)]
    return [_mode_part(key, check)]


#: ``(field, kind, before, after, removed)``: one way a key's check loosened.
_Change = tuple[str, str, object, object, list[object] | None]


class _Judge:
    """Compares two versions of one case's checks by today's check modes."""

    def __init__(self, modes: ModeTable) -> None:
        self.modes = modes

    def primary(self, check: Check, parts: list[_Part]) -> str | None:
        """The mode a key's check counts as: its strongest part (``None``: checks nothing)."""
        if not parts:
            return None
        if isinstance(check, ToolCallsCheck):
            return "tool_calls"
        return max(parts, key=lambda part: self.modes.strength(part.mode) or 0).mode

    def weaker(self, before: str, after: str) -> bool:
        return weaker(before, after, self.modes)

    def compare_key(
        self,
        key: str,
        before: Check,
        after: Check | None,
        pool: list[ToolCallsCheck] | None = None,
    ) -> list[_Change]:
        """``(field, kind, before, after, removed)`` for each way one key's check loosened.
        ``pool``: the case's tool-call checks after the change that read the same turn's
        calls as ``before`` (``after`` among them): what one of them still requires is
        required, so an expectation moved from one such check to another is kept."""
        pool = pool or []
        if (
            isinstance(before, ToolCallsCheck)
            and pool
            and (after is None or isinstance(after, ToolCallsCheck))
        ):
            return _tool_changes(key, before, after or _NO_CALLS, pool)
        if isinstance(before, UndeclaredCheck) or isinstance(after, UndeclaredCheck):
            # No declaration says how strict it is: any change may be a loosening.
            if after is None:
                return [(key, "check-removed", before.mode, None, None)]
            if _dump(before) != _dump(after):
                return [(key, "undeclared-mode-changed", _dump(before), _dump(after), None)]
            return []
        bparts = _parts(key, before)
        bmode = self.primary(before, bparts)
        if bmode is None:
            return []
        if after is None:
            return [] if bmode == "ignore" else [(key, "check-removed", bmode, None, None)]
        if isinstance(before, ToolCallsCheck) and isinstance(after, ToolCallsCheck):
            return _tool_changes(key, before, after, [after])
        aparts = _parts(key, after)
        amode = self.primary(after, aparts)
        # The shorthand and tool_calls kept in the same form are compared part by part, so
        # an emptied list is reported as the values it lost.
        same_form = isinstance(before, IncludeShorthand | ToolCallsCheck) and type(after) is type(
            before
        )
        if not same_form and amode != bmode:
            if amode is None:
                return [(key, "check-removed", bmode, None, None)]
            if amode == "ignore":
                return [(key, "ignored", bmode, amode, None)]
            if self.weaker(bmode, amode):
                return [(key, "mode-weakened", bmode, amode, None)]
        pinned = (
            amode is not None
            and amode in self.modes
            and self.modes[amode].pins
            and not getattr(after, "negate", False)  # a negated exact forbids one value
        )
        found: list[_Change] = []
        for part in bparts:
            match = next((p for p in aparts if p.mode == part.mode), None)
            if match is None:
                # Otherwise the primary part gave way to a mode at least as strong (judged
                # above); a guard such as must_not_include still binds unless the field is
                # pinned.
                binds = same_form or part.guard
                if part.values is not None and binds and not pinned:
                    found.append((part.name, part.kind, part.values, [], part.values))
                continue
            if part.values is not None and match.values is not None:
                removed = _dropped(part.values, match.values)
                if removed:
                    found.append((part.name, part.kind, part.values, match.values, removed))
            if part.alternatives is not None and match.alternatives is not None:
                added = _dropped(list(match.alternatives), list(part.alternatives))
                if added:
                    found.append(
                        (part.name, "alternative-added", list(part.alternatives),
                         list(match.alternatives), None)
                    )  # fmt: skip
            after_options = {name: value for name, value, _ in match.options}
            for option, old, order in part.options:
                new = after_options.get(option)
                if option in after_options and order.loosens(old, new):
                    if order.kind == "option-loosened":  # say which option
                        old, new = {option: old}, {option: new}
                    found.append((part.name, order.kind, old, new, None))
        return found


#: A matcher of the shared grammar (``checks/grammar.py``): a tool call's or a span's.
_Matcher = CallMatcher | SpanMatcher
_M = TypeVar("_M", CallMatcher, SpanMatcher)


def _matcher(matcher: _Matcher) -> object:
    """A matcher as the audit reports it: its name alone when that is all it says."""
    timed = isinstance(matcher, SpanMatcher) and matcher.max_duration_ms is not None
    if matcher.plain and not timed:
        return matcher.name
    return matcher.model_dump(mode="json", exclude_defaults=True)


_NO_CALLS = ToolCallsCheck.model_validate({})


def _tool_values(check: ToolCallsCheck, name: str) -> list[object]:
    """A list of ``tool_calls`` as the audit reports it: ``order`` as written (one chain,
    or several), the others matcher by matcher."""
    if name == "order":
        return _order_shown(check.chains)
    return [_matcher(m) for m in getattr(check, name)]


def _order_shown(chains: list[list[CallMatcher]] | list[list[SpanMatcher]]) -> list[object]:
    shown = [[_matcher(m) for m in chain] for chain in chains]
    return list(shown[0]) if len(shown) == 1 else list(shown)


def _tool_changes(
    key: str, before: ToolCallsCheck, after: ToolCallsCheck, pool: list[ToolCallsCheck]
) -> list[_Change]:
    """How ``tool_calls`` loosened: a call no longer required or forbidden, or no longer in
    the order; an argument dropped or changed; a count or ``max_calls`` raised. What
    ``before`` required is looked for in every check of ``pool`` (the case's tool-call
    checks on the same turn, ``after`` among them); the lists reported are ``after``'s."""
    found: list[_Change] = []
    must_call = [m for check in pool for m in check.must_call]
    must_not_call = [m for check in pool for m in check.must_not_call]
    shown_before = [_matcher(m) for m in before.must_call]
    shown_after = [_matcher(m) for m in after.must_call]
    gone = [m for m in before.must_call if not any(n.name == m.name for n in must_call)]
    if gone:
        removed = [_matcher(m) for m in gone]
        found.append((f"{key}.must_call", "must-call-removed", shown_before, shown_after, removed))
    for old in before.must_call:
        same_tool = [m for m in must_call if m.name == old.name]
        if not same_tool:
            continue
        new = max(same_tool, key=lambda m: len(_kept_args(old, m)))
        if len(_kept_args(old, new)) < len(old.args):
            found.append((f"{key}.must_call", "tool-args-dropped", old.args, new.args, None))
        if _looser_count(old.counted, new.counted):
            found.append(
                (f"{key}.must_call", "tool-count-loosened", old.counted.text(),
                 new.counted.text(), None)
            )  # fmt: skip
    # A forbid with fewer arguments forbids more: that is at least as strict.
    gone = [
        old
        for old in before.must_not_call
        if not any(m.name == old.name and _kept_args(m, old) == m.args for m in must_not_call)
    ]
    if gone:
        found.append(
            (f"{key}.must_not_call", "must-not-call-removed",
             [_matcher(m) for m in before.must_not_call],
             [_matcher(m) for m in after.must_not_call], [_matcher(m) for m in gone])
        )  # fmt: skip
    lost = _chains_lost(before.chains, [chain for check in pool for chain in check.chains])
    if lost:
        found.append(
            (f"{key}.order", "order-removed", _order_shown(before.chains),
             _order_shown(after.chains), _order_shown(lost))
        )  # fmt: skip
    old_limits = _limits(before.max_calls)
    new_limits = _pooled_limits([check.max_calls for check in pool])
    for tool, limit in old_limits.items():
        raised = new_limits.get(tool)
        if raised is None or raised > limit:
            found.append((f"{key}.max_calls", "max-calls-raised", {tool: limit},
                          {tool: raised}, None))  # fmt: skip
    return found


def _chains_lost(before: list[list[_M]], after: list[list[_M]]) -> list[list[_M]]:
    """The chains of ``before`` no chain of ``after`` still holds. A chain holding the same
    entries (calls, spans) in the same relative order, with others between or around them,
    implies it; one holding them in another order is a different criterion, not a looser
    one. A chain split in two is lost: each half may hold on items the whole would not
    accept."""
    lost = []
    for chain in before:
        old = [_key(m) for m in chain]
        kept = False
        for other in after:
            new = [_key(m) for m in other]
            if is_subchain(old, new) or not Counter(old) - Counter(new):
                kept = True
                break
        if not kept:
            lost.append(chain)
    return lost


def _span_changes(
    key: str, before: SpansCheck, after: SpansCheck | None, pool: list[SpansCheck]
) -> list[_Change]:
    """How a ``spans`` check loosened, per span name or glob: a span no longer required
    (``must_have``) or forbidden (``must_not_have``); a required span's attributes dropped,
    its count loosened or its longest duration raised; an error limit raised or dropped; a
    chain of ``order`` lost. What ``before`` held is looked for in every spans check of
    the case (``pool``, ``after`` first when there is one): moving a span from one check
    to another loosens nothing. The lists reported are ``after``'s."""
    found: list[_Change] = []
    must_have = [m for check in pool for m in check.must_have]
    must_not_have = [m for check in pool for m in check.must_not_have]
    now_have = [_matcher(m) for m in after.must_have] if after is not None else []
    now_not = [_matcher(m) for m in after.must_not_have] if after is not None else []
    gone = [m for m in before.must_have if not any(n.name == m.name for n in must_have)]
    if gone:
        found.append(
            (f"{key}.must_have", "must-have-removed", [_matcher(m) for m in before.must_have],
             now_have, [_matcher(m) for m in gone])
        )  # fmt: skip
    for old in before.must_have:
        same_name = [m for m in must_have if m.name == old.name]
        if not same_name:
            continue
        new = max(same_name, key=lambda m: len(_kept(old.attributes, m.attributes)))
        if len(_kept(old.attributes, new.attributes)) < len(old.attributes):
            found.append(
                (f"{key}.must_have", "span-attributes-dropped", {old.name: old.attributes},
                 {new.name: new.attributes}, None)
            )  # fmt: skip
        if _looser_count(old.counted, new.counted):
            found.append(
                (f"{key}.must_have", "span-count-loosened", {old.name: old.counted.text()},
                 {new.name: new.counted.text()}, None)
            )  # fmt: skip
        if old.max_duration_ms is not None and not any(_as_fast(m, old) for m in same_name):
            timed = [m for m in same_name if m.max_duration_ms is not None]
            now = max(timed, key=lambda m: m.max_duration_ms or 0.0) if timed else None
            found.append(
                (f"{key}.must_have", "span-duration-raised", {old.name: _duration(old)},
                 {old.name: _duration(now) if now is not None else None}, None)
            )  # fmt: skip
    # A forbid with fewer attributes, or on a glob the old name falls under, forbids more.
    gone = [
        old
        for old in before.must_not_have
        if not any(
            _covers(m.name, old.name) and _kept(m.attributes, old.attributes) == m.attributes
            for m in must_not_have
        )
    ]
    if gone:
        found.append(
            (f"{key}.must_not_have", "must-not-have-removed",
             [_matcher(m) for m in before.must_not_have], now_not, [_matcher(m) for m in gone])
        )  # fmt: skip
    new_limits = _pooled_limits([check.max_errors for check in pool])
    for glob, limit in _limits(before.max_errors).items():
        covering = [v for g, v in new_limits.items() if _covers(g, glob)]
        raised = min(covering) if covering else None
        if raised is None or raised > limit:
            found.append(
                (f"{key}.max_errors", "error-limit-raised", {glob: limit}, {glob: raised}, None)
            )
    lost = _chains_lost(before.chains, [chain for check in pool for chain in check.chains])
    if lost:
        found.append(
            (f"{key}.order", "order-removed", _order_shown(before.chains),
             _order_shown(after.chains) if after is not None else [], _order_shown(lost))
        )  # fmt: skip
    return found


def _covers(new: str, old: str) -> bool:
    """Whether the span name or glob ``new`` takes in every span ``old`` does: the same,
    ``*``, or a glob matching the plain name ``old``."""
    return new in (old, "*") or (not is_glob(old) and name_matches(new, old))


def _as_fast(new: SpanMatcher, old: SpanMatcher) -> bool:
    """Whether ``new`` bounds the duration of every span ``old`` bounded, as tightly: no
    more attributes, a limit no higher, a percentile no lower (none: every span, 100)."""
    if new.max_duration_ms is None or old.max_duration_ms is None:
        return False
    return (
        _kept(new.attributes, old.attributes) == new.attributes
        and new.max_duration_ms <= old.max_duration_ms
        and (new.percentile or 100.0) >= (old.percentile or 100.0)
    )


def _duration(matcher: SpanMatcher) -> str | None:
    """A matcher's longest duration as the audit shows it: ``≤ 500 ms``, ``p95 ≤ 800 ms``."""
    if matcher.max_duration_ms is None:
        return None
    which = f"p{matcher.percentile:g} " if matcher.percentile is not None else ""
    return f"{which}≤ {matcher.max_duration_ms:g} ms"


def _key(matcher: _Matcher) -> str:
    return json.dumps(_matcher(matcher), sort_keys=True, default=str)


def _pooled_limits(values: list[int | dict[str, int] | None]) -> dict[str, int]:
    """The tightest limit per tool the pooled checks set (each check's limit binds)."""
    found: dict[str, int] = {}
    for value in values:
        for tool, limit in _limits(value).items():
            found[tool] = min(limit, found.get(tool, limit))
    return found


def _kept_args(old: CallMatcher, new: CallMatcher) -> dict[str, object]:
    return _kept(old.args, new.args)


def _kept(old: dict[str, object], new: dict[str, object]) -> dict[str, object]:
    """The entries of ``old`` (arguments, attributes) that ``new`` still holds, equal."""
    return {k: v for k, v in old.items() if k in new and same(v, new[k])}


def _looser_count(old: Count, new: Count) -> bool:
    if new.min < old.min:
        return True
    return old.max is not None and (new.max is None or new.max > old.max)


def _limits(value: int | dict[str, int] | None) -> dict[str, int]:
    if value is None:
        return {}
    return {"*": value} if isinstance(value, int) else dict(value)


def _dump(check: Check) -> JSONObject:
    return check.model_dump(mode="json", exclude_defaults=True)


def weaker(before: str, after: str, modes: ModeTable = BUILTIN_MODES) -> bool:
    """Whether changing a check from mode ``before`` to mode ``after`` loosens it. A mode no
    declaration knows counts as the weakest: leaving it is not, turning to it is."""
    if before == after:
        return False
    strong, weak = modes.strength(before), modes.strength(after)
    if weak is None:
        return True
    if strong is None:
        return False
    floor = STRENGTH["must_not_include"]
    reads = {_reads(before, modes), _reads(after, modes)}
    if len(reads) == 2 and reads <= _APART and min(strong, weak) >= floor:
        # A workspace check reads the run's effects; a trial check its cost or latency; a
        # field check, the output: one is not a looser form of another.
        return False
    return weak < strong


_APART = {Reads.FIELD, Reads.WORKSPACE, Reads.TRIAL}


def _reads(mode: str, modes: ModeTable) -> Reads:
    return modes[mode].reads if mode in modes else Reads.FIELD


def _dropped(before: list[object], after: list[object]) -> list[object]:
    return [item for item in before if not any(same(item, other) for other in after)]


def _compare_case(judge: _Judge, before: _CaseView, after: _CaseView, path: str) -> list[_Finding]:
    findings = []
    tool_checks = [
        (_turn_of(key, check), check)
        for key, check in after.expect.items()
        if isinstance(check, ToolCallsCheck)
    ]
    span_checks = [check for check in after.expect.values() if isinstance(check, SpansCheck)]
    for key, check in before.expect.items():
        if key in after.unknown:
            continue  # the new version of this check does not validate: not comparable
        now = after.expect.get(key)
        if isinstance(check, SpansCheck) and (
            isinstance(now, SpansCheck) or (now is None and span_checks)
        ):
            # Kept, or its spans perhaps moved to another spans check: span by span, against
            # them all (a check removed with none left, or weakened, is reported as such).
            others = [c for c in span_checks if c is not now]
            pool = [now, *others] if isinstance(now, SpansCheck) else others
            changes = _span_changes(key, check, now, pool)
        else:
            tools = None
            if isinstance(check, ToolCallsCheck):
                turn = _turn_of(key, check)
                tools = [c for t, c in tool_checks if t == turn]
            changes = judge.compare_key(key, check, now, tools)
        for name, kind, old, new, removed in changes:
            findings.append(_Finding(before.id, name, kind, old, new, path, removed))
    return findings


_TURN_KEY = re.compile(r"^turn(\d+)\.")


def _turn_of(key: str, check: ToolCallsCheck) -> int | None:
    """The agent turn whose calls a tool-call check reads (a scripted message's checks,
    keyed ``turnN.…``, read that turn's), ``None`` for every turn's."""
    if check.turn is not None:
        return check.turn
    found = _TURN_KEY.match(key)
    return int(found.group(1)) if found else None


def _narrow(finding: _Finding, other: _Comparison) -> _Finding | None:
    """What of a merge's loosening (against its first parent) is one against ``other`` too."""
    if finding.kind != "deleted-not-retired" and finding.case_id in other.added:
        return finding  # that parent never had the case: it cannot have brought the change
    same_kind = [
        g
        for g in other.findings
        if (g.case_id, g.field, g.kind) == (finding.case_id, finding.field, finding.kind)
    ]
    if not same_kind:
        return None
    if finding.removed is None:
        return finding
    common = [
        item
        for item in finding.removed
        if any(g.removed is not None and _dropped([item], g.removed) == [] for g in same_kind)
    ]
    return replace(finding, removed=common) if common else None


@dataclass
class _Comparison:
    """The loosenings from one parent to a commit, and the ids the commit added."""

    findings: list[_Finding] = field(default_factory=list)
    added: set[str] = field(default_factory=set)


# --- the walk --------------------------------------------------------------------------


class _Audit:
    """Walks the commits that touched the suite's cases and compares each with its parents."""

    def __init__(self, git: GitBatch, modes: ModeTable = BUILTIN_MODES) -> None:
        self.git = git
        self.reader = _Reader(modes)
        self.judge = _Judge(modes)
        status, inside = git.run("rev-parse", "--is-inside-work-tree", ok=(0, 128))
        if status != 0 or inside.strip() != "true":
            raise CaseforgeError(f"{git.cwd}: not inside a git work tree")
        self.prefix = git.run("rev-parse", "--show-prefix")[1].strip()
        self.cases_dir = f"{self.prefix}{CASES_DIR}/"
        self.pathspecs = [
            f":(top,literal){self.prefix}{CASES_DIR}",
            f":(top,literal){self.prefix}{RETIRED_FILE}",
        ]
        self._files: dict[tuple[str, str], _FileView] = {}

    def run(self, since: str | None) -> list[Loosening]:
        status, _ = self.git.run("rev-parse", "--verify", "--quiet", "HEAD", ok=(0, 1))
        if status != 0:
            return []  # no commits yet
        if since is not None:
            if since.startswith("-"):
                raise CaseforgeError(f"--since {since}: not a revision of this repository")
            status, _ = self.git.run(
                "rev-parse", "--verify", "--quiet", f"{since}^{{commit}}", ok=(0, 1)
            )
            if status != 0:
                raise CaseforgeError(f"--since {since}: not a revision of this repository")
        found: list[Loosening] = []
        for commit in self._commits(since):
            reason = criteria_reason(commit.message)
            for item in self._loosened(commit):
                found.append(
                    Loosening(
                        commit=commit.sha,
                        short=commit.short,
                        subject=commit.subject,
                        case_id=item.case_id,
                        field=item.field,
                        kind=item.kind,
                        before=item.before,
                        after=item.after,
                        path=item.path,
                        excused=reason,
                    )
                )
        return found

    def _commits(self, since: str | None) -> list[_Commit]:
        revs = [f"{since}..HEAD"] if since is not None else ["HEAD"]
        _, out = self.git.run(
            "log",
            "--full-history",
            "--date-order",
            "--reverse",
            "--no-color",
            "-z",
            "--format=%H%x1f%h%x1f%P%x1f%s%x1f%B",
            *revs,
            "--",
            *self.pathspecs,
        )
        commits = []
        for record in out.split("\0"):
            fields = record.split("\x1f", 4)
            if len(fields) != 5:
                continue
            sha, short, parents, subject, message = fields
            commits.append(_Commit(sha.strip(), short, parents.split(), subject, message))
        return commits

    def _loosened(self, commit: _Commit) -> list[_Finding]:
        if not commit.parents:
            return []  # the root commit only adds
        findings = self._compare(commit.parents[0], commit.sha).findings
        for parent in commit.parents[1:]:
            if not findings:
                break
            other = self._compare(parent, commit.sha, want_added=True)
            findings = [n for f in findings if (n := _narrow(f, other)) is not None]
        return findings

    def _diff(self, parent: str, commit: str) -> list[_Entry]:
        _, out = self.git.run(
            "diff-tree",
            "-r",
            "-z",
            "-M",
            "--no-abbrev",
            "--no-ext-diff",
            "--no-textconv",
            parent,
            commit,
            "--",
            *self.pathspecs,
        )
        tokens = out.split("\0")
        entries = []
        index = 0
        while index < len(tokens):
            meta = tokens[index]
            index += 1
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old_sha, new_sha, status = meta[1:].split()[:5]
            if status[:1] in ("R", "C"):
                old_path, new_path = tokens[index], tokens[index + 1]
                index += 2
            else:
                old_path = new_path = tokens[index]
                index += 1
            has_old = old_sha != _NULL_SHA and old_mode in _REGULAR and self._is_case(old_path)
            has_new = new_sha != _NULL_SHA and new_mode in _REGULAR and self._is_case(new_path)
            if status[:1] == "C":
                has_old = False  # a copy leaves its source where it was
            if has_old or has_new:
                entries.append(
                    _Entry(
                        old_path if has_old else None,
                        old_sha if has_old else None,
                        new_path if has_new else None,
                        new_sha if has_new else None,
                    )
                )
        return entries

    def _is_case(self, path: str) -> bool:
        return path.startswith(self.cases_dir) and path.endswith(CASE_SUFFIXES)

    def _compare(self, parent: str, commit: str, want_added: bool = False) -> _Comparison:
        entries = self._diff(parent, commit)
        result = _Comparison()
        if not want_added and not any(entry.old_path for entry in entries):
            return result  # only additions: nothing can have been loosened
        before: dict[str, tuple[_CaseView, str]] = {}
        after: dict[str, tuple[_CaseView, str]] = {}
        unsure: set[str] = set()  # old paths whose new version did not parse
        for entry in entries:
            if entry.old_path and entry.old_sha:
                view = self._before(parent, entry.old_path, entry.old_sha)
                for case_id, case in view.cases.items():
                    before[case_id] = (case, entry.old_path)
            if entry.new_path and entry.new_sha:
                view = self._file(entry.new_sha, entry.new_path)
                for case_id, case in view.cases.items():
                    after[case_id] = (case, entry.new_path)
                if not view.clean and entry.old_path:
                    unsure.add(entry.old_path)
        result.added = set(after) - set(before)
        retired: set[str] | None = None
        retired_read = False
        for case_id, (old, old_path) in before.items():
            if case_id in after:
                new, new_path = after[case_id]
                result.findings.extend(
                    _compare_case(self.judge, old, new, self._relative(new_path))
                )
                continue
            if old_path in unsure:
                continue
            if not retired_read:
                retired, retired_read = self._retired(commit), True
            if retired is None or case_id in retired:
                continue  # retired (or retired.yaml unreadable: accuse no one)
            where = self._relative(old_path)
            result.findings.append(
                _Finding(case_id, "case", "deleted-not-retired", where, None, where)
            )
        return result

    def _relative(self, path: str) -> str:
        return path[len(self.prefix) :] if path.startswith(self.prefix) else path

    def _file(self, sha: str, path: str) -> _FileView:
        key = (sha, ".jsonl" if path.endswith(".jsonl") else ".yaml")
        if key not in self._files:
            got = self.git.blob(sha)
            self._files[key] = self.reader.parse_file(path, got[1]) if got else _FileView({}, False)
        return self._files[key]

    def _before(self, parent: str, path: str, sha: str) -> _FileView:
        """The parent's version of a file, patched from older versions where it is broken."""
        view = self._file(sha, path)
        if view.clean:
            return view
        _, out = self.git.run(
            "rev-list",
            "--first-parent",
            "-n",
            str(_FALLBACK_DEPTH),
            parent,
            "--",
            f":(top,literal){path}",
        )
        for rev in out.split():
            got = self.git.blob(f"{rev}:{path}")
            if got is None:
                break  # the file did not exist there: no older version to fall back on
            if got[0] == sha:
                continue
            older = self._file(got[0], path)
            if older.clean:
                return _patch(view, older)
        return view

    def _retired(self, commit: str) -> set[str] | None:
        """The ids in ``retired.yaml`` at ``commit``; ``None`` if it does not parse."""
        got = self.git.blob(f"{commit}:{self.prefix}{RETIRED_FILE}")
        if got is None:
            return set()
        try:
            data = _load_yaml(got[1].decode("utf-8"))
        except Exception:  # history is untrusted input: any failure means "does not parse"
            return None
        if data is None:
            return set()
        if not isinstance(data, list):
            return None
        return {
            entry["id"]
            for entry in data
            if isinstance(entry, dict) and isinstance(entry.get("id"), str)
        }


def _show(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
