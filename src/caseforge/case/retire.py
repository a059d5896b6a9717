"""Retiring a case: it moves to ``SUITE/retired.yaml`` with a reason and a date.

A retired id is never reused; ``caseforge validate`` fails on a case that takes one.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from caseforge.case.positions import yaml_validation_problems
from caseforge.errors import CaseforgeError, Problem, UsageError
from caseforge.files import write_atomic

RETIRED_FILE = "retired.yaml"
_HEADER = "Retired cases: their ids are never reused (caseforge validate checks).\n"


class RetiredEntry(BaseModel):
    """One retired case."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    retired: dt.date
    case: dict[str, object] | None = None


def _entries(suite_dir: Path) -> list[RetiredEntry]:
    from caseforge.case.load import read_yaml  # load imports this module

    path = suite_dir / RETIRED_FILE
    if not path.is_file():
        return []
    text, data = read_yaml(path)
    if data is None:
        return []
    if not isinstance(data, list):
        raise CaseforgeError(Problem(path, 1, 1, "", "retired.yaml must be a list of entries"))
    entries = []
    for index, item in enumerate(data):
        try:
            entries.append(RetiredEntry.model_validate(item))
        except ValidationError as exc:
            problems = yaml_validation_problems(path, text, exc, None)
            raise CaseforgeError(
                [
                    Problem(p.path, p.line, p.col, f"[{index}].{p.field}", p.message)
                    for p in problems
                ]
            ) from None
    return entries


def retired_ids(suite_dir: Path) -> set[str]:
    """The ids listed in ``SUITE/retired.yaml``."""
    return {entry.id for entry in _entries(suite_dir)}


def retired_entries(suite_dir: Path) -> list[RetiredEntry]:
    """The entries of ``SUITE/retired.yaml``, each with the case as it was when retired."""
    return _entries(suite_dir)


@dataclass(frozen=True)
class Retired:
    """Where a retired case was, and where it went."""

    case_id: str
    source: Path
    retired_file: Path


def retire_case(
    suite_dir: Path, case_id: str, reason: str, today: dt.date | None = None
) -> Retired:
    """Move case ``case_id`` from its file into ``retired.yaml`` with ``reason`` and the date."""
    from caseforge.case.load import case_files, read_yaml, require_suite_folder

    require_suite_folder(suite_dir)
    reason = reason.strip()
    if not reason:
        raise UsageError("retire needs a non-empty --reason")
    if case_id in retired_ids(suite_dir):
        raise CaseforgeError(f"{case_id} is already retired ({suite_dir / RETIRED_FILE})")
    today = today or dt.date.today()
    rt = YAML(typ="rt")
    rt.width = 4096
    rt.preserve_quotes = True  # `"finding:F5"` must stay quoted inside a flow sequence

    for path in case_files(suite_dir):
        if path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            for index, line in enumerate(lines):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(data, dict) and data.get("id") == case_id:
                    _append(suite_dir, rt, case_id, reason, today, data)
                    write_atomic(path, "".join(lines[:index] + lines[index + 1 :]))
                    return Retired(case_id, path, suite_dir / RETIRED_FILE)
        else:
            _, data = read_yaml(path)
            if isinstance(data, dict) and data.get("id") == case_id:
                case_data = rt.load(path.read_text(encoding="utf-8"))
                _append(suite_dir, rt, case_id, reason, today, case_data)
                path.unlink()
                return Retired(case_id, path, suite_dir / RETIRED_FILE)
    raise UsageError(f"no case with id {case_id!r} under {suite_dir / 'cases'}")


def _append(
    suite_dir: Path, rt: YAML, case_id: str, reason: str, today: dt.date, case: dict[str, object]
) -> None:
    path = suite_dir / RETIRED_FILE
    entries = rt.load(path.read_text(encoding="utf-8")) if path.is_file() else None
    if entries is None:
        entries = CommentedSeq()
        entries.yaml_set_start_comment(_HEADER)
    entry = CommentedMap()
    entry["id"] = case_id
    entry["reason"] = reason
    entry["retired"] = today
    entry["case"] = case
    entries.append(entry)
    buffer = io.StringIO()
    rt.dump(entries, buffer)
    write_atomic(path, buffer.getvalue())
