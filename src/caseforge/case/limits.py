"""How deep and how large a case (or ``caseforge.yaml``) may be once it is read.

A case file is parsed with libyaml, which has no depth limit, and YAML aliases let 1 KB
describe billions of values ("billion laughs": nine levels of nine aliases). The loader
builds such a value cheaply, as shared objects; what hangs or overflows the stack comes
later, when validation or serialisation expands it. So each loaded value is measured as if
expanded, before anything else reads it: a shared object counts each time it is reached,
while the walk itself remembers each object's measure (by ``id``), so it stays as cheap as
the file is small. Past :data:`MAX_DEPTH` levels or :data:`MAX_NODES` values the file is
refused, and :func:`yaml_limit_problem` reads it again with the pure-Python parser, event
by event, to name the line, the column and the field where the limit was crossed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from caseforge.errors import DatasetError, Problem

MAX_DEPTH = 100  # levels of lists and mappings, the document's own mapping included
MAX_NODES = 100_000  # values (mapping keys, items, scalars), aliases counted at each use

Limit = Literal["depth", "nodes"]


class _Exceeded(DatasetError):
    """A value past a limit, while it is measured (:func:`exceeded` returns which)."""

    def __init__(self, limit: Limit) -> None:
        super().__init__(limit_message(limit))
        self.limit: Limit = limit


def limit_message(limit: Limit) -> str:
    """What the limit is, for the one-line error."""
    if limit == "depth":
        return (
            f"nested deeper than {MAX_DEPTH} levels of lists and mappings, the most caseforge "
            "reads: flatten it, or keep such data in a fixture file"
        )
    return (
        f"more than {MAX_NODES:,} values once its aliases are expanded (each use of an alias "
        f"counts), the most caseforge reads in one file or line: a YAML alias bomb, or data "
        "to keep in a fixture file"
    )


def exceeded(value: object) -> Limit | None:
    """Which limit ``value`` (as the YAML or JSON loader built it) goes past, if any."""
    try:
        _measure(value, 0, {})
    except _Exceeded as exc:
        return exc.limit
    return None


def _measure(value: object, above: int, memo: dict[int, tuple[int, int]]) -> int:
    """The expanded size of ``value`` (``above`` containers enclose it); raise past a limit.
    ``memo`` keeps each container's (height, size), so a shared one is walked once.
    A container that holds itself has no measure yet when reached again, and goes on
    nesting until the depth limit stops it."""
    if isinstance(value, dict):
        children: list[object] = list(value.values())
        size = 1 + len(value)  # the mapping and its keys
    elif isinstance(value, list):
        children = value
        size = 1
    else:
        return 1
    known = memo.get(id(value))
    if known is not None:
        height, known_size = known
        if above + height > MAX_DEPTH:
            raise _Exceeded("depth")
        return known_size
    if above + 1 > MAX_DEPTH:
        raise _Exceeded("depth")
    height = 1
    for child in children:
        size += _measure(child, above + 1, memo)
        if size > MAX_NODES:
            raise _Exceeded("nodes")
        if isinstance(child, dict | list):
            height = max(height, 1 + memo[id(child)][0])
    memo[id(value)] = (height, size)
    return size


@dataclass
class _Open:
    """A list or mapping the event walk is inside of."""

    mapping: bool
    anchor: str | None
    size: int = 1
    index: int = 0  # a list's next item
    want_key: bool = True  # a mapping's next node is a key
    key: str = ""  # a mapping's key whose value is being read
    name: str = ""  # how the node being read is named in the field path


def yaml_limit_problem(path: Path, text: str, limit: Limit) -> Problem:
    """Where in a YAML file ``limit`` is crossed: the node (an alias, for a bomb) that takes
    it past the limit, read with the pure parser's events (which need no stack of their own
    and expand nothing), with its line, column and field path."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceStartEvent,
    )

    stack: list[_Open] = []
    sizes: dict[str, int] = {}  # an anchor's expanded size, once its node is complete
    total = 0

    def problem(mark: object, message: str) -> Problem:
        line = getattr(mark, "line", -1) + 1
        col = getattr(mark, "column", -1) + 1
        names = [entry.name for entry in stack if entry.name]
        if len(names) > 8:  # a path as deep as the limit: its start and its end
            names = [*names[:4], f"…{len(names) - 5} more…", names[-1]]
        return Problem(path, line, col, ".".join(names), message)

    def begin(name_hint: str) -> None:
        """A node starts inside the innermost open collection: name it there."""
        if not stack:
            return
        parent = stack[-1]
        if parent.mapping:
            parent.name = "" if parent.want_key else parent.key
            if parent.want_key:
                parent.key = name_hint
        else:
            parent.name = str(parent.index)

    def done(size: int) -> None:
        """A node (of this expanded size) is complete inside the innermost collection."""
        if not stack:
            return
        parent = stack[-1]
        parent.size += size
        if parent.mapping:
            parent.want_key = not parent.want_key
        else:
            parent.index += 1

    try:
        for event in YAML(typ="safe", pure=True).parse(text):
            if isinstance(event, ScalarEvent):
                begin(str(event.value))
                total += 1
                if event.anchor:
                    sizes[event.anchor] = 1
                if total > MAX_NODES:
                    return problem(event.start_mark, limit_message("nodes"))
                done(1)
            elif isinstance(event, AliasEvent):
                begin("*" + str(event.anchor))
                if event.anchor not in sizes:
                    if any(entry.anchor == event.anchor for entry in stack):
                        return problem(
                            event.start_mark,
                            f"the alias *{event.anchor} is inside its own anchor, so it nests "
                            f"without end ({limit_message('depth')})",
                        )
                    continue  # an undefined alias: the loader has said so already
                size = sizes[event.anchor]
                total += size
                if total > MAX_NODES:
                    return problem(event.start_mark, limit_message("nodes"))
                done(size)
            elif isinstance(event, MappingStartEvent | SequenceStartEvent):
                begin("")
                total += 1
                stack.append(_Open(isinstance(event, MappingStartEvent), event.anchor))
                if len(stack) > MAX_DEPTH:
                    stack.pop()
                    return problem(event.start_mark, limit_message("depth"))
                if total > MAX_NODES:
                    return problem(event.start_mark, limit_message("nodes"))
            elif isinstance(event, CollectionEndEvent) and stack:
                closed = stack.pop()
                if closed.anchor:
                    sizes[closed.anchor] = closed.size
                done(closed.size)
    except (YAMLError, RecursionError, ValueError):
        pass
    return Problem(path, 0, 0, "", limit_message(limit))


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def json_too_deep(line: str) -> int | None:
    """The 1-based column of the bracket that opens level ``MAX_DEPTH + 1`` in a line of
    JSON, or None; strings are skipped, so a ``[`` inside one does not count."""
    depth = 0
    for token in _JSON_TOKENS.finditer(line):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return token.start() + 1
        elif char in "]}":
            depth -= 1
    return None


def may_exceed_json(line: str) -> bool:
    """Whether a line of JSON could pass a limit, by counting alone: each value takes at
    least one character, and each level a bracket. Almost every case line cannot."""
    return len(line) > MAX_NODES or line.count("[") + line.count("{") > MAX_DEPTH
