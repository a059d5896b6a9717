"""``caseforge validate --fix``: move case files off the retired ``alt_<key>s`` convention.

An outcome value used to list other right values of one key beside it::

    value: {invoice_id: INV-2026-0123, amount_yuan: 2392.0, alt_invoice_ids: [INV-2026-0026]}

The value is now whole, and every other right outcome is written out whole under
``any_of``::

    value: {invoice_id: INV-2026-0123, amount_yuan: 2392.0}
    any_of: [{invoice_id: INV-2026-0026, amount_yuan: 2392.0}]

Several ``alt_`` keys in one value meant any combination of them, so each combination
becomes an entry. An ``alt_`` list for a key the value does not hold was never compared,
and is dropped. The verdicts stay the same.

YAML files keep their comments, quotes and layout (ruamel's round trip, in the file's own
indentation); a JSONL file has only its changed lines rewritten. Every file is computed
before any is written, and all are written or none.
"""

from __future__ import annotations

import io
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError

from caseforge.case.load import case_files, read_text, read_yaml
from caseforge.errors import CaseforgeError, Problem
from caseforge.files import write_all_atomic


@dataclass(frozen=True)
class Fix:
    """One outcome check moved to ``any_of``."""

    path: Path
    line: int
    check: str  # where in the case: expect.refund, conversation.script.1.expect.refund
    retired: tuple[str, ...]  # the alt_ keys removed
    alternatives: int  # any_of entries added
    oracle: str | None  # the check's oracle, which must now return AnyOf itself

    def format(self) -> str:
        added = (
            f"{self.alternatives} alternative(s) under any_of"
            if self.alternatives
            else "removed (it listed no alternative)"
        )
        note = (
            f"; its oracle {self.oracle!r} must now return AnyOf(value, [others])"
            if self.oracle
            else ""
        )
        return f"{self.path}:{self.line}: {self.check}: {', '.join(self.retired)} -> {added}{note}"


def fix_suite(suite_dir: Path, write: bool = True) -> list[Fix]:
    """Find every outcome check still written the old way, and (``write``) rewrite it."""
    fixes: list[Fix] = []
    texts: dict[Path, str] = {}
    for path in case_files(suite_dir):
        try:
            text = read_text(path)
            if "alt_" in text and path.suffix != ".jsonl":
                read_yaml(path)  # within the limits (an alias bomb is not rewritten)
        except CaseforgeError:
            continue  # a dangling link, not UTF-8, too deep or too large: validate names it
        if "alt_" not in text:
            continue
        found, new_text = (_fix_jsonl if path.suffix == ".jsonl" else _fix_yaml)(path, text)
        if found:
            fixes += found
            texts[path] = new_text
    if write and texts:
        write_all_atomic(texts)
    return fixes


def retired_keys(value: object) -> list[str]:
    """The ``alt_<key>s`` keys of a mapping (those holding a list), in order."""
    if not isinstance(value, dict):
        return []
    return [
        key
        for key, inner in value.items()
        if isinstance(key, str) and key.startswith("alt_") and key.endswith("s")
        and isinstance(inner, list)
    ]  # fmt: skip


def expand(value: dict[Any, Any]) -> list[dict[Any, Any]]:
    """``value`` without its ``alt_`` keys, then each other combination they allowed."""
    retired = retired_keys(value)
    plain = {k: v for k, v in value.items() if k not in retired}
    options: list[tuple[str, list[Any]]] = []
    for key in retired:
        base = key[len("alt_") : -1]
        if base in plain:  # else it was never compared
            options.append((base, [plain[base], *value[key]]))
    combos: list[dict[Any, Any]] = []
    for chosen in itertools.product(*(values for _, values in options)):
        combo = dict(plain)
        for (base, _), picked in zip(options, chosen, strict=True):
            combo[base] = picked
        if combo not in combos:
            combos.append(combo)
    return combos


def _checks(case: Any) -> list[tuple[str, Any]]:
    """``(where, check mapping)`` of each check: the case's and each scripted turn's."""
    found: list[tuple[str, Any]] = []
    if not isinstance(case, dict):
        return found
    expect = case.get("expect")
    if isinstance(expect, dict):
        found += [(f"expect.{key}", check) for key, check in expect.items()]
    conversation = case.get("conversation")
    script = conversation.get("script") if isinstance(conversation, dict) else None
    for index, turn in enumerate(script if isinstance(script, list) else [], start=1):
        turn_expect = turn.get("expect") if isinstance(turn, dict) else None
        if isinstance(turn_expect, dict):
            found += [
                (f"conversation.script.{index}.expect.{key}", check)
                for key, check in turn_expect.items()
            ]
    return found


def _old_outcome(check: Any) -> bool:
    if not isinstance(check, dict) or check.get("mode") != "outcome":
        return False
    return any(retired_keys(v) for v in (check.get("value"), *(check.get("any_of") or [])))


def _retired_of(check: dict[Any, Any]) -> tuple[str, ...]:
    values = (check.get("value"), *(check.get("any_of") or []))
    return tuple(dict.fromkeys(key for value in values for key in retired_keys(value)))


def _new_alternatives(check: dict[Any, Any]) -> tuple[Any, list[Any]]:
    """The check's new ``value`` and ``any_of`` (every old entry expanded too, in order,
    without repeats or the value itself)."""
    value = check.get("value")
    first = expand(value) if isinstance(value, dict) and retired_keys(value) else [value]
    entries: list[Any] = first[1:]
    for old in check.get("any_of") or []:
        entries += expand(old) if isinstance(old, dict) and retired_keys(old) else [old]
    unique: list[Any] = []
    for entry in entries:
        if entry != first[0] and entry not in unique:
            unique.append(entry)
    return first[0], unique


# -- YAML ----------------------------------------------------------------------------------


def _yaml_for(text: str) -> YAML:
    """A round-trip YAML that writes ``text`` back as it was, if one of the usual
    indentations does."""
    candidates = []
    for mapping, sequence, offset in ((2, 4, 2), (2, 2, 0), (4, 4, 2), (4, 6, 4), (4, 4, 0)):
        yaml = YAML(typ="rt")
        yaml.width = 4096
        yaml.allow_unicode = True
        yaml.preserve_quotes = True
        yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
        if _dump(yaml, yaml.load(text)) == text:
            return yaml
        candidates.append(yaml)
    return candidates[0]  # none writes it back exactly: the usual layout, the same data


def _dump(yaml: YAML, tree: object) -> str:
    buffer = io.StringIO()
    yaml.dump(tree, buffer)
    return buffer.getvalue()


def _fix_yaml(path: Path, text: str) -> tuple[list[Fix], str]:
    try:
        yaml = _yaml_for(text)
        tree = yaml.load(text)
    except MarkedYAMLError:
        return [], text  # not YAML: validate reports it where it is
    fixes: list[Fix] = []
    for where, check in _checks(tree):
        if not _old_outcome(check):
            continue
        assert isinstance(check, CommentedMap)
        line = check.lc.line + 1
        if "value" in check:
            line = check.lc.value("value")[0] + 1
        retired = _retired_of(check)
        value, others = _new_alternatives(_plain(check))
        old = check.get("value")
        flow = _is_flow(old)
        if isinstance(old, CommentedMap) and retired_keys(old):
            for key in retired_keys(old):  # in place: the comments on the other keys stay
                del old[key]
        else:
            check["value"] = _styled(value, flow)
        if others:
            styled = CommentedSeq(_styled(o, flow) for o in others)
            if flow:
                styled.fa.set_flow_style()
            if "any_of" in check:
                check["any_of"] = styled
            else:
                check.insert(list(check).index("value") + 1, "any_of", styled)
        elif "any_of" in check:
            del check["any_of"]
        oracle = check.get("oracle")
        fixes.append(Fix(path, line, where, retired, len(others), str(oracle) if oracle else None))
    if not fixes:
        return [], text
    new_text = _dump(yaml, tree)
    _same_elsewhere(path, text, new_text)
    return fixes, new_text


def _plain(node: Any) -> Any:
    """ruamel's commented containers as plain dicts and lists (for comparing)."""
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _is_flow(node: object) -> bool:
    return isinstance(node, CommentedMap | CommentedSeq) and bool(node.fa.flow_style())


def _styled(value: Any, flow: bool) -> Any:
    if isinstance(value, dict):
        styled = CommentedMap((k, _styled(v, flow)) for k, v in value.items())
        if flow:
            styled.fa.set_flow_style()
        return styled
    if isinstance(value, list):
        seq = CommentedSeq(_styled(v, flow) for v in value)
        if flow:
            seq.fa.set_flow_style()
        return seq
    return value


def _same_elsewhere(path: Path, old: str, new: str) -> None:
    """The rewrite changed nothing but the outcome checks it fixed."""
    safe = YAML(typ="safe")
    before, after = safe.load(old), safe.load(new)
    for tree in (before, after):
        for _, check in _checks(tree):
            if isinstance(check, dict) and check.get("mode") == "outcome":
                check.pop("value", None)
                check.pop("any_of", None)
    if before != after:
        raise CaseforgeError(
            Problem(path, 1, 1, "expect", "cannot rewrite this file without changing more "
                    "than its outcome checks: move it to any_of by hand")
        )  # fmt: skip


# -- JSONL ---------------------------------------------------------------------------------


def _fix_jsonl(path: Path, text: str) -> tuple[list[Fix], str]:
    fixes: list[Fix] = []
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        if "alt_" not in line or not line.strip():
            continue
        try:
            case = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue  # validate reports it
        changed = False
        for where, check in _checks(case):
            if not _old_outcome(check):
                continue
            retired = _retired_of(check)
            value, others = _new_alternatives(check)
            check["value"] = value
            if others:
                check["any_of"] = others
            else:
                check.pop("any_of", None)
            oracle = check.get("oracle")
            fixes.append(Fix(path, number, where, retired, len(others), oracle or None))
            changed = True
        if changed:
            ending = line[len(line.rstrip("\r\n")) :]
            lines[number - 1] = json.dumps(case, ensure_ascii=False) + ending
    return fixes, "".join(lines)
