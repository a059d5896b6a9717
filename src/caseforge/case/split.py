"""``caseforge split``: a stable dev/test split, stratified by category.

A case that has a split keeps it: adding cases never reshuffles old ones (a test case
that drifted into dev would contaminate the holdout). A case without one goes to ``test``
when the hash of its id falls below the test fraction (≈30 %), so its split does not depend
on which other cases exist. Then, per category with at least two cases, if one side is
empty the unassigned case whose hash lies nearest to that side goes there, so every
category appears in both dev and test. ``--reassign`` recomputes every split from the
hashes, except a split set by hand with a ``note``, which never moves.

A ``group:`` keeps a family of near-identical cases on one side: the group's side comes from
the hash of its name (or from a member pinned by hand, or from members already split
alike), every unpinned member goes there, and the per-category fix-ups move only
ungrouped cases. ``validate`` warns about a family split today; ``--reassign`` joins it.
When a category's cases are all in groups on one side, no fix-up can reach the other:
``validate`` names the groups to move (:func:`groups_to_move`), or the suite accepts the
category as dev-only (``split.dev_only``), whose ungrouped cases then go to dev.

``--write`` edits only the ``split:`` line of each YAML file (or the one JSONL line), so
comments and formatting stay and the diff is minimal.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import MarkedYAMLError

from caseforge.case.load import load_suite
from caseforge.case.positions import round_trip_load
from caseforge.errors import CaseforgeError, Problem
from caseforge.files import write_all_atomic
from caseforge.jsontypes import JSONObject

_SPLIT_LINE = re.compile(
    r"split[ \t]*:(?P<value>[ \t]*(?:(?P<q>['\"]?)(?:dev|test)(?P=q)|null|~))?"
)


def id_hash(case_id: str) -> float:
    """A stable number in [0, 1) from the case id."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class SplitCase:
    """What the split needs to know of a case."""

    id: str
    category: str
    split: str | None
    pinned: bool  # split set by hand, with a note saying why: never moves
    group: str | None = None

    def keeps(self, reassign: bool) -> bool:
        """Whether this case's current split stays as it is."""
        return self.split is not None and (self.pinned or not reassign)

    def initial(self, test_fraction: float, reassign: bool) -> str:
        """The split before the per-category fix-ups."""
        if self.keeps(reassign) and self.split:
            return self.split
        return "test" if id_hash(self.id) < test_fraction else "dev"


@dataclass(frozen=True)
class SplitChange:
    """A case whose split changes."""

    case_id: str
    old: str | None
    new: str
    path: Path
    line: int


def plan_split(
    cases: list[SplitCase],
    test_fraction: float = 0.3,
    reassign: bool = False,
    dev_only: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """The split of every case: kept, or from the hash of the id, then one move per side a
    category lacks (among the cases being assigned). A ``dev_only`` category's cases
    without a group go to dev, and none is moved to test for it."""
    by_category: dict[str, list[SplitCase]] = defaultdict(list)
    for case in cases:
        by_category[case.category].append(case)
    sides = _group_sides(cases, test_fraction, reassign)
    result: dict[str, str] = {}
    for category, items in by_category.items():
        only_dev = category in dev_only
        assigned = {
            c.id: sides[c.group]
            if c.group in sides and not c.pinned
            else (
                "dev" if only_dev and not c.keeps(reassign) else c.initial(test_fraction, reassign)
            )
            for c in items
        }
        if len(items) >= 2:
            for side in ("test", "dev"):
                if side in assigned.values() or (side == "test" and only_dev):
                    continue
                movable = [c for c in items if not c.keeps(reassign) and c.group is None]
                if not movable:
                    continue
                # The case nearest the boundary moves: smallest hash to test, largest to dev.
                pick = (min if side == "test" else max)(movable, key=lambda c: id_hash(c.id))
                assigned[pick.id] = side
        result.update(assigned)
    return result


def _group_sides(cases: list[SplitCase], test_fraction: float, reassign: bool) -> dict[str, str]:
    """Each group's side: a pinned member's, else the one its kept members share, else
    from the hash of the group's name. A family split today (kept members on both sides,
    without --reassign) gets no side: it stays as it is, and validate warns."""
    members: dict[str, list[SplitCase]] = defaultdict(list)
    for case in cases:
        if case.group:
            members[case.group].append(case)
    sides = {}
    for group, family in members.items():
        pinned = [c.split for c in family if c.pinned and c.split]
        kept = {c.split for c in family if c.keeps(reassign) and c.split}
        if pinned:
            sides[group] = pinned[0]
        elif len(kept) == 1:
            sides[group] = kept.pop()
        elif not kept:
            sides[group] = "test" if id_hash("group:" + group) < test_fraction else "dev"
    return sides


@dataclass(frozen=True)
class GroupMove:
    """A group whose move to the other side would give a category a case there."""

    group: str
    cases: int  # every member of the group
    in_category: int  # its members in the category that lacks the side
    empties: tuple[str, ...]  # categories the move would leave with none on the side left


def groups_to_move(
    cases: list[tuple[str, str | None, str]], category: str, side: str
) -> list[GroupMove]:
    """The groups that could give ``category`` a case in ``side`` (``dev`` or ``test``),
    from ``(category, group, split)`` of every case that has a split: each group holding
    some of the category's cases, with what moving all its members to ``side`` would cost.
    Moves that leave no other category (nor this one) without a case on the side they
    leave come first, then the smaller; ties by name."""
    other = "test" if side == "dev" else "dev"
    left: dict[str, int] = defaultdict(int)  # cases per category on the side moved from
    totals: dict[str, int] = defaultdict(int)
    members: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for case_category, group, split in cases:
        totals[case_category] += 1
        if split == other:
            left[case_category] += 1
        if group is not None:
            members[group].append((case_category, split))
    found = []
    for group, family in members.items():
        here = sum(1 for c, split in family if c == category and split == other)
        if not here:
            continue
        leaving: dict[str, int] = defaultdict(int)
        for c, split in family:
            if split == other:
                leaving[c] += 1
        empties = tuple(sorted(c for c, n in leaving.items() if n == left[c] and totals[c] >= 2))
        found.append(GroupMove(group, len(family), here, empties))
    return sorted(found, key=lambda m: (bool(m.empties), m.cases, m.group))


def split_groups(cases: list[tuple[str, str | None, str | None]]) -> dict[str, list[str]]:
    """The groups whose members sit on both sides: ``{group: [member ids]}``, from
    ``(case id, group, split)``."""
    sides: dict[str, set[str]] = defaultdict(set)
    ids: dict[str, list[str]] = defaultdict(list)
    for case_id, group, split in cases:
        if group and split:
            sides[group].add(split)
            ids[group].append(case_id)
    return {g: sorted(ids[g]) for g, found in sorted(sides.items()) if len(found) > 1}


def split_changes(
    suite_dir: Path, reassign: bool = False
) -> tuple[list[SplitChange], dict[str, dict[str, int]]]:
    """What ``caseforge split`` would change, and the resulting category × split table."""
    suite = load_suite(suite_dir)
    loaded = {c.case.id: c for c in suite.cases}
    plan = plan_split(
        [
            SplitCase(
                c.case.id,
                c.case.category(),
                c.case.split,
                pinned=c.case.split is not None and bool(c.case.note.strip()),
                group=c.case.group,
            )
            for c in suite.cases
        ],
        suite.config.split.test_fraction,
        reassign,
        frozenset(suite.config.split.dev_only),
    )
    changes = [
        SplitChange(case_id, item.case.split, new, item.path, item.line)
        for case_id, new in plan.items()
        if (item := loaded[case_id]).case.split != new
    ]
    table: dict[str, dict[str, int]] = defaultdict(lambda: {"dev": 0, "test": 0})
    for case_id, split in plan.items():
        table[loaded[case_id].case.category()][split] += 1
    return changes, {k: table[k] for k in sorted(table)}


def write_split(changes: list[SplitChange]) -> None:
    """Apply the changes to the case files, editing only the ``split`` of each case."""
    by_file: dict[Path, list[SplitChange]] = defaultdict(list)
    for change in changes:
        by_file[change.path].append(change)
    new_texts: dict[Path, str] = {}
    for path, file_changes in by_file.items():
        text = path.read_bytes().decode("utf-8")  # as written: CRLF lines stay CRLF
        if path.suffix == ".jsonl":
            new_texts[path] = _edit_jsonl(text, {c.line: c.new for c in file_changes})
        else:
            new_texts[path] = _edit_yaml(path, text, file_changes[0].new)
    # Every edit is computed, then every file staged, before any is replaced: all or none.
    write_all_atomic(new_texts)


def _edit_yaml(path: Path, text: str, new: str) -> str:
    try:
        tree = round_trip_load(text)
    except MarkedYAMLError as exc:
        raise CaseforgeError(f"{path}: cannot edit: {exc}") from None
    if not isinstance(tree, CommentedMap) or tree.fa.flow_style():
        raise CaseforgeError(Problem(path, 1, 1, "split", "cannot edit a flow-style case file"))
    lines = text.splitlines(keepends=True)
    if "split" in tree:
        row, col = tree.lc.key("split")
        line = lines[row]
        match = _SPLIT_LINE.match(line, col)
        if match is None:
            raise CaseforgeError(Problem(path, row + 1, col + 1, "split", "cannot edit this line"))
        lines[row] = line[: match.start()] + f"split: {new}" + line[match.end() :]
        return "".join(lines)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    if "source" in tree:
        at = tree.lc.value("source")[0] + 1
    else:
        at = len(lines)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += newline
    lines.insert(at, f"split: {new}{newline}")
    return "".join(lines)


def _edit_jsonl(text: str, new_by_line: dict[int, str]) -> str:
    lines = text.splitlines(keepends=True)
    for line_no, new in new_by_line.items():
        raw = lines[line_no - 1]
        ending = raw[len(raw.rstrip("\r\n")) :]
        data: JSONObject = json.loads(raw)  # a case line
        if "split" in data:
            data["split"] = new
        else:
            rebuilt: JSONObject = {}
            for key, value in data.items():
                rebuilt[key] = value
                if key == "source":
                    rebuilt["split"] = new
            rebuilt.setdefault("split", new)
            data = rebuilt
        lines[line_no - 1] = json.dumps(data, ensure_ascii=False) + ending
    return "".join(lines)
