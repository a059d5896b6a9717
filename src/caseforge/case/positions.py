"""Turning a pydantic error location into ``line:col`` in the YAML or JSONL it came from.

Files are parsed with the fast C loader first; only when something is wrong is a YAML file
parsed again with ruamel's round-trip loader, which keeps the position of every key and
value, so the error can name the line and column.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Tag, ValidationError
from pydantic_core import ErrorDetails
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError

from caseforge.checks.grammar import CHAIN_TAGS
from caseforge.errors import Problem, did_you_mean

_FRIENDLY = {"missing": "required field is missing"}

# How pydantic names a member of a plain union in an error's location (``max_calls.int``,
# ``command.list[str]``, ``schema.dict[str,any]``, a model's class name).
_UNION_MEMBER = re.compile(
    r"(str|int|float|bool|none|any|bytes|(list|dict|tuple|set|frozenset|literal)\[.*\]"
    r"|constrained-\w+|function-\w+\[.*\]|[A-Z][A-Za-z0-9]*)"
)
_TYPE_WORDS = {
    "str": ("a string", "strings"),
    "int": ("an integer", "integers"),
    "float": ("a number", "numbers"),
    "bool": ("true or false", "true or false"),
    "any": ("a value", "values"),
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
    names: set[str] = set()
    for annotation in _annotations_at(model, loc):
        for kind in _members(annotation):
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                names |= set(kind.model_fields)
    return names


def _annotations_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[object]:
    """The types the value at ``loc`` (below ``model``) may have, as annotated."""
    current: list[object] = [model]
    for part in loc:
        found: list[object] = []
        for annotation in current:
            tagged = _tagged(annotation)
            if isinstance(part, str) and part in tagged:  # a union member, by its tag
                found.append(tagged[part])
                continue
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
    return current


def _plain_union_at(model: type[BaseModel] | None, loc: tuple[str | int, ...]) -> bool:
    """Whether the value at ``loc`` is declared a union of two types or more, untagged
    (``str | list[str]``); with no model, whether ``loc`` could be one."""
    if model is None:
        return True
    for annotation in _annotations_at(model, loc):
        if _tagged(annotation):
            continue
        kinds = [kind for kind in _members(annotation) if kind is not type(None)]
        if len(kinds) > 1:
            return True
    return False


def _tagged(annotation: object) -> dict[str, object]:
    """The members of a tagged union (``Annotated[X, Tag("x")]``) by tag: how pydantic
    names the member in an error's location (``expect.KEY.regex.…``)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _tagged(typing.get_args(annotation)[0])
    if origin not in (typing.Union, types.UnionType):
        return {}
    found: dict[str, object] = {}
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Annotated:
            inner, *meta = typing.get_args(arg)
            for item in meta:
                if isinstance(item, Tag):
                    found[item.tag] = inner
    return found


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
    known = _fields_at(model, loc[:-1]) if model is not None else set()
    hint = did_you_mean(key, known)
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
    if error["type"] == "extra_forbidden":
        if not (len(loc) > 2 and loc[0] == "expect"):
            return _unknown_key(error, loc, model), loc
        # A check's own field: the nearest field of its mode (named in the location).
        known = _fields_at(model, loc[:-1]) if model is not None else set()
        hint = did_you_mean(loc[-1], known)
        where = loc[:2] + tuple(part for part in loc[3:] if part not in CHAIN_TAGS)
        return f"unknown field {loc[-1]!r}{hint}; see `caseforge schema` for the fields", where
    if len(loc) > 2 and loc[0] == "expect":
        # Below expect.KEY pydantic names the union member (the mode or form): drop it, and
        # the form of an `order` (one chain or several) below it.
        loc = loc[:2] + tuple(part for part in loc[3:] if part not in CHAIN_TAGS)
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "check_mode":
        data = error.get("input")
        if isinstance(data, dict) and "mode" in data:
            modes = str(ctx.get("modes", ""))
            hint = did_you_mean(data["mode"], modes.split(", "))
            return (
                f"unknown mode {data['mode']!r}{hint}; expected one of: {modes}",
                (*loc, "mode"),
            )
        if isinstance(data, dict):
            for key in data:
                hint = did_you_mean(key, _CHECK_KEYS, cutoff=0.7)
                if hint and key not in _CHECK_KEYS:
                    return f"unknown key {key!r}{hint}", (*loc, str(key))
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


def _type_words(label: str, plural: bool = False) -> str:
    """A union member's label as words: ``list[str]`` is "a list of strings"."""
    words = _TYPE_WORDS.get(label)
    if words is not None:
        return words[plural]
    inner = label[label.find("[") + 1 : -1] if label.endswith("]") else ""
    if label.startswith(("list[", "tuple[", "set[", "frozenset[")):
        return ("lists" if plural else "a list") + (
            f" of {_type_words(inner, True)}" if inner in _TYPE_WORDS else ""
        )
    if label.startswith("dict["):
        value = inner.split(",", 1)[1] if "," in inner else ""
        shown = f" of names to {_type_words(value, True)}" if value in _TYPE_WORDS else ""
        if value == "any":
            shown = ""
        return ("mappings" if plural else "a mapping") + shown
    if label.startswith("literal["):
        return inner.replace(",", " or")
    if label.startswith("constrained-"):
        return _type_words(label.removeprefix("constrained-"), plural)
    if label[:1].isupper():  # a model: a mapping of its fields
        return "mappings" if plural else "a mapping"
    return label


def _simplest_first(label: str) -> int:
    """Scalars, then lists, then mappings: "a string, a list of strings or a mapping"."""
    if label.startswith(("list[", "tuple[", "set[", "frozenset[")):
        return 1
    return 2 if label.startswith("dict[") or label[:1].isupper() else 0


def _one_of(words: list[str]) -> str:
    words = list(dict.fromkeys(words))
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _merged_unions(errors: list[ErrorDetails], model: type[BaseModel] | None) -> list[ErrorDetails]:
    """pydantic's errors with those of one plain union (one per member it tried, each
    located under the member's label) made one: "expected a string or a list of strings".
    When the value got past one member's outer type (a list, whose item is wrong), that
    member's own errors are kept instead, without the label. ``model`` says where the
    unions are (without it, a label in a location is taken for one)."""
    groups: dict[tuple[str | int, ...], list[ErrorDetails]] = {}
    order: list[ErrorDetails | tuple[str | int, ...]] = []
    for error in errors:
        at = _member_at(tuple(error["loc"]), model)
        if at is None:
            order.append(error)
            continue
        prefix = tuple(error["loc"])[:at]
        if prefix not in groups:
            groups[prefix] = []
            order.append(prefix)
        groups[prefix].append(error)
    merged: list[ErrorDetails] = []
    for item in order:
        if isinstance(item, dict):
            merged.append(item)
            continue
        group, at = groups[item], len(item)
        labels = [str(error["loc"][at]) for error in group]
        if len(set(labels)) < 2:  # not a union after all (a key named like a type)
            merged.extend(group)
            continue
        deep = [error for error in group if len(error["loc"]) > at + 1]
        if deep:
            label = deep[0]["loc"][at]
            for error in deep:
                loc = tuple(error["loc"])
                if loc[at] == label:
                    merged.append({**error, "loc": loc[:at] + loc[at + 1 :]})
            continue
        kept = sorted((label for label in labels if label != "none"), key=_simplest_first)
        said = _one_of([_type_words(label) for label in kept])
        merged.append(
            {"type": "union_type", "loc": item, "msg": f"expected {said}",
             "input": group[0].get("input")}
        )  # fmt: skip
    return merged


def _member_at(loc: tuple[str | int, ...], model: type[BaseModel] | None) -> int | None:
    """Where a union member's label is in an error's location (never its first part)."""
    for index, part in enumerate(loc):
        if (
            index > 0
            and isinstance(part, str)
            and _UNION_MEMBER.fullmatch(part)
            and (model is not None or not part[:1].isupper())  # a key, as like as not
            and _plain_union_at(model, loc[:index])
        ):
            return index
    return None


def first_error(
    errors: list[ErrorDetails], model: type[BaseModel] | None = None
) -> tuple[str, tuple[str | int, ...]]:
    """The message and location of the first of pydantic's ``errors`` (below ``model``),
    worded as a file's problems are: a union's members said once, a typo's nearest key."""
    return _message_and_loc(_merged_unions(errors, model)[0], model)


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
    for error in _merged_unions(exc.errors(), model):
        message, loc = _message_and_loc(error, model)
        line, col, names = _walk(tree, loc) if tree is not None else (0, 0, [str(p) for p in loc])
        problems.append(Problem(path, line + 1, col + 1, ".".join(names), message, case_id=case_id))
    return problems


def jsonl_validation_problems(
    path: Path,
    line_no: int,
    line_text: str,
    exc: ValidationError,
    case_id: str | None,
    model: type[BaseModel] | None = None,
) -> list[Problem]:
    """Problems for one JSONL line; the column is where the field's key appears in the line."""
    problems = []
    for error in _merged_unions(exc.errors(), model):
        message, loc = _message_and_loc(error, model)
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
