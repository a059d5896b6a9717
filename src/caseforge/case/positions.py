"""Turning a pydantic error location into ``line:col`` in the YAML or JSONL it came from.

Files are parsed with the fast C loader first; only when something is wrong is a YAML file
parsed again with ruamel's round-trip loader, which keeps the position of every key and
value, so the error can name the line and column.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError

from caseforge.checks.grammar import CHAIN_TAGS
from caseforge.errors import Problem

_FRIENDLY = {
    "missing": "required field is missing",
    "extra_forbidden": "unknown field (check the spelling; see `caseforge schema`)",
}


def round_trip_load(text: str) -> object:
    """Parse YAML keeping positions (ruamel round-trip)."""
    return YAML(typ="rt").load(text)


def yaml_syntax_problem(
    path: Path, exc: MarkedYAMLError, line_offset: int = 0, text: str | None = None
) -> Problem:
    """A YAML syntax error as a one-line problem. A duplicate key is named on its second
    occurrence's line, with the line of the first (given the file's ``text``)."""
    if isinstance(exc, DuplicateKeyError) and text is not None:
        found = duplicate_key_problem(path, text, exc, line_offset)
        if found is not None:
            return found
    mark = exc.problem_mark or exc.context_mark
    line = (mark.line + 1 + line_offset) if mark is not None else 0
    col = (mark.column + 1) if mark is not None else 0
    what = exc.problem or exc.context or "invalid YAML"
    if mark is not None and _tab_at(path, mark.line + line_offset, mark.column):
        what = f"{what}: a tab (YAML indents with spaces only)"
    return Problem(path, line, col, "", f"YAML syntax error: {what}")


def duplicate_key_problem(
    path: Path, text: str, exc: DuplicateKeyError, line_offset: int = 0
) -> Problem | None:
    """``duplicate key 'x' (first at line 3)`` at the second ``x``: the mapping the loader
    was building is found again among the composed nodes (which keep every key), by its
    position, and its keys compared. None when it cannot be found."""
    from ruamel.yaml.nodes import MappingNode, Node, SequenceNode

    context, second = exc.context_mark, exc.problem_mark
    if context is None or second is None:
        return None
    try:
        root = YAML(typ="rt").compose(text)
    except Exception:  # a file the composer cannot read either (too deep, say)
        return None
    todo: list[tuple[Node, str]] = [(root, "")] if root is not None else []
    seen: set[int] = set()
    while todo:
        node, where = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            start = node.start_mark
            if (start.line, start.column) == (context.line, context.column):
                found = _repeated_key(path, node, where, second, line_offset)
                if found is not None:
                    return found
            for key, value in node.value:
                name = str(key.value) if isinstance(key.value, str) else "?"
                todo.append((value, f"{where}.{name}" if where else name))
        elif isinstance(node, SequenceNode):
            todo.extend(
                (item, f"{where}.{index}" if where else str(index))
                for index, item in enumerate(node.value)
            )
    return None


def _repeated_key(
    path: Path, mapping: Any, where: str, second: Any, line_offset: int
) -> Problem | None:
    keys = [key for key, _ in mapping.value]
    at = (second.line, second.column)
    dup = next((k for k in keys if (k.start_mark.line, k.start_mark.column) == at), None)
    if dup is None:
        return None
    first = next((k for k in keys if k is not dup and k.value == dup.value), None)
    if first is None:
        return None
    field = f"{where}.{dup.value}" if where else str(dup.value)
    return Problem(
        path, second.line + 1 + line_offset, second.column + 1, field,
        f"duplicate key {dup.value!r} (first at line {first.start_mark.line + 1 + line_offset});"
        " keep one of them",
    )  # fmt: skip


def _tab_at(path: Path, line: int, col: int) -> bool:
    """Whether line ``line`` (0-based) of ``path`` has a tab at or before ``col``."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    return 0 <= line < len(lines) and "\t" in lines[line][: col + 1]


def _walk(node: object, loc: Sequence[str | int]) -> tuple[int, int, list[str]]:
    """Follow ``loc`` through round-trip YAML; return 0-based (line, col) and the field path."""
    line, col = 0, 0
    names: list[str] = []
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        if isinstance(node, CommentedMap) and part in node:
            if isinstance(node[part], CommentedMap | CommentedSeq) and not last:
                line, col = node.lc.key(part)
            else:
                line, col = node.lc.value(part)
            node = node[part]
            names.append(str(part))
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and part < len(node):
            line, col = node.lc.item(part)
            node = node[part]
            names.append(str(part))
        else:
            # A key that is missing: the error is about its absence.
            names.append(str(part))
    return line, col, names


# The keys that say what a check is, for naming a misspelt one.
_CHECK_KEYS = ["mode", "must_include", "must_not_include", "must_call", "must_not_call", "order"]


def _fields_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> set[str]:
    """The field names a mapping at ``loc`` (below ``model``) may have: for a typo's
    "did you mean". A list index or a mapping key in ``loc`` goes into its values."""
    current: list[object] = [model]
    for part in loc:
        found: list[object] = []
        for annotation in current:
            for kind in _members(annotation):
                if isinstance(kind, type) and issubclass(kind, BaseModel):
                    info = kind.model_fields.get(str(part))
                    if info is not None:
                        found.append(info.annotation)
                elif typing.get_origin(kind) in (list, tuple, dict):
                    args = typing.get_args(kind)
                    if args:
                        found.append(args[-1])
        current = found
    names: set[str] = set()
    for annotation in current:
        for kind in _members(annotation):
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                names |= set(kind.model_fields)
    return names


def _members(annotation: object) -> list[object]:
    """The types a union (or an Annotated type) stands for."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [annotation]


def _unknown_key(
    error: ErrorDetails, loc: tuple[str | int, ...], model: type[BaseModel] | None
) -> str:
    """``unknown key 'trails' (did you mean 'trials'?); see `caseforge schema --config```."""
    key = str(loc[-1]) if loc else "?"
    known = sorted(_fields_at(model, loc[:-1])) if model is not None else []
    near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    where = (
        "`caseforge schema --config`"
        if model is not None and model.__name__ == "SuiteConfig"
        else "`caseforge schema`"
    )
    return f"unknown key {key!r}{hint}; see {where} for the keys"


def _message_and_loc(
    error: ErrorDetails, model: type[BaseModel] | None = None
) -> tuple[str, tuple[str | int, ...]]:
    loc: tuple[str | int, ...] = tuple(error["loc"])
    if error["type"] == "extra_forbidden" and not (len(loc) > 2 and loc[0] == "expect"):
        return _unknown_key(error, loc, model), loc
    if len(loc) > 2 and loc[0] == "expect":
        # Below expect.KEY pydantic names the union member (the mode or form): drop it, and
        # the form of an `order` (one chain or several) below it.
        loc = loc[:2] + tuple(part for part in loc[3:] if part not in CHAIN_TAGS)
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "check_mode":
        data = error.get("input")
        if isinstance(data, dict) and "mode" in data:
            modes = ctx.get("modes", "")
            return f"unknown mode {data['mode']!r}; expected one of: {modes}", (*loc, "mode")
        if isinstance(data, dict):
            for key in data:
                near = difflib.get_close_matches(str(key), _CHECK_KEYS, n=1, cutoff=0.7)
                if near and key not in _CHECK_KEYS:
                    return f"unknown key {key!r} (did you mean {near[0]!r}?)", (*loc, str(key))
    if "field" in ctx and kind == "check_placement":
        loc = (*loc, ctx["field"], *([ctx["part"]] if ctx.get("part") else []))
    message = _FRIENDLY.get(kind, str(error["msg"]))
    message = re.sub(r"^(Value|Assertion) error, ", "", message)
    quiet = {"value_error", "check_mode", "check_placement"}
    if kind not in _FRIENDLY and kind not in quiet and "input" in error:
        shown = repr(error["input"])
        if len(shown) <= 60:
            message = f"{message} (got {shown})"
    return message, loc


def yaml_validation_problems(
    path: Path,
    text: str,
    exc: ValidationError,
    case_id: str | None,
    model: type[BaseModel] | None = None,
) -> list[Problem]:
    """Problems for a YAML file (a case, ``caseforge.yaml``), each with the line and column
    of the bad field; an unknown key is named with the key ``model`` has that is nearest."""
    try:
        tree = round_trip_load(text)
    except MarkedYAMLError:
        tree = None
    problems = []
    for error in exc.errors():
        message, loc = _message_and_loc(error, model)
        line, col, names = _walk(tree, loc) if tree is not None else (0, 0, [str(p) for p in loc])
        problems.append(Problem(path, line + 1, col + 1, ".".join(names), message, case_id=case_id))
    return problems


def jsonl_validation_problems(
    path: Path, line_no: int, line_text: str, exc: ValidationError, case_id: str | None
) -> list[Problem]:
    """Problems for one JSONL line; the column is where the field's key appears in the line."""
    problems = []
    for error in exc.errors():
        message, loc = _message_and_loc(error)
        names = [str(p) for p in loc]
        col = 1
        for part in reversed(names):
            found = line_text.find(f'"{part}"')
            if found >= 0:
                col = found + 1
                break
        problems.append(Problem(path, line_no, col, ".".join(names), message, case_id=case_id))
    return problems


def locate_in_yaml(path: Path, loc: Sequence[str | int], line_offset: int = 0) -> tuple[int, int]:
    """1-based (line, col) of ``loc`` in a YAML file (0, 0 when it cannot be found)."""
    try:
        tree = round_trip_load(path.read_text(encoding="utf-8"))
    except (OSError, MarkedYAMLError):
        return 0, 0
    line, col, _ = _walk(tree, loc)
    return line + 1 + line_offset, col + 1


def bad_scalar_problem(path: Path, text: str, exc: ValueError) -> Problem:
    """Where a value YAML reads as a date or a time (``2026-02-30``, ``10:99``) is not one:
    the first such scalar, found by composing the document without constructing it."""
    from ruamel.yaml.constructor import SafeConstructor
    from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

    def walk(node: Node, where: str) -> Problem | None:
        if isinstance(node, ScalarNode) and str(node.tag).endswith(":timestamp"):
            try:
                SafeConstructor.construct_yaml_timestamp(SafeConstructor(), node)
            except ValueError as bad:
                mark = node.start_mark
                return Problem(
                    path, mark.line + 1, mark.column + 1, where,
                    f"{node.value!r} is not a valid date or time ({bad}); quote it if it is text",
                )  # fmt: skip
        if isinstance(node, MappingNode):
            for key, value in node.value:
                name = f"{where}.{key.value}" if where else str(key.value)
                found = walk(value, name)
                if found:
                    return found
        if isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                found = walk(item, f"{where}.{index}" if where else str(index))
                if found:
                    return found
        return None

    try:
        for document in YAML(typ="rt").compose_all(text):
            found = walk(document, "") if document is not None else None
            if found:
                return found
    except Exception:  # composing failed too: fall back to the message alone
        pass
    return Problem(path, 0, 0, "", f"a value YAML cannot read: {exc}")
