"""Reading a file of records: JSON, JSONL, CSV, Parquet, and a Hugging Face dataset saved to
disk, each record a mapping with where it is (``line 4``, ``row 3``) for the report and for
error messages.

JSON and JSONL and CSV are read with the standard library. Parquet and the Arrow files of a
``datasets.save_to_disk`` folder (``dataset_info.json``, ``state.json``,
``data-00000-of-00001.arrow``) are read with pyarrow, loaded only then (the ``tables``
extra). A record that is not a mapping, or a line that is not JSON, is one error naming the
file and the line.
"""

from __future__ import annotations

import csv
import importlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from caseforge.errors import DatasetError, EnvError, UsageError
from caseforge.files import json_kind

FORMATS = ("json", "jsonl", "csv", "parquet", "arrow")
SUFFIXES = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".arrow": "arrow",
}


@dataclass(frozen=True)
class Record:
    """One record of the file: its fields, and where it is (``line 4``, ``row 3``)."""

    where: str
    fields: dict[str, object]
    number: int  # 1-based position among the file's records


def optional(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module`` of an optional extra, or say which extra to install (exit 5)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise EnvError(
            f"{what} needs {module.split('.')[0]}: pip install 'caseforge[{extra}]'"
        ) from None


def file_format(path: Path, allowed: tuple[str, ...] = FORMATS) -> str:
    """The format of ``path`` by its suffix (a folder: a saved Hugging Face dataset)."""
    if not path.exists():
        raise UsageError(f"{path}: not found; check the path")
    if path.is_dir():
        if "arrow" in allowed and (path / "state.json").is_file():
            return "arrow"
        raise UsageError(
            f"{path}: a folder, but not a Hugging Face dataset saved to disk (no state.json)"
        )
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None or fmt not in allowed:
        known = ", ".join(s for s, f in SUFFIXES.items() if f in allowed)
        raise UsageError(f"{path}: cannot tell its format by its suffix; give one of {known}")
    return fmt


def read_records(path: Path, fmt: str | None = None) -> list[Record]:
    """Every record of ``path`` (format by suffix unless ``fmt``), in order."""
    fmt = fmt or file_format(path)
    reader = {
        "json": _json,
        "jsonl": _jsonl,
        "csv": _csv,
        "parquet": _parquet,
        "arrow": _arrow,
    }[fmt]
    return list(reader(path))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _json(path: Path) -> Iterator[Record]:
    text = _text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    if isinstance(data, dict):  # one record, as Inspect reads a single object
        data = [data]
    if not isinstance(data, list):
        raise DatasetError(
            f"{path}: expected an array of objects, the file holds {json_kind(data)}"
        )
    for number, value in enumerate(data, start=1):
        if not isinstance(value, dict):
            raise DatasetError(
                f"{path}: record {number}: expected an object, got {json_kind(value)}"
            )
        yield Record(f"record {number}", value, number)


def _jsonl(path: Path) -> Iterator[Record]:
    number = 0
    for line_no, line in enumerate(_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{line_no}:{exc.colno}: not JSON: {exc.msg}") from None
        if not isinstance(value, dict):
            raise DatasetError(f"{path}:{line_no}: expected an object, got {json_kind(value)}")
        number += 1
        yield Record(f"line {line_no}", value, number)


def _csv(path: Path) -> Iterator[Record]:
    lines = _text(path).splitlines(keepends=True)
    reader = csv.DictReader(lines)
    if not reader.fieldnames:
        raise DatasetError(f"{path}: no header row")
    number = 0
    start = reader.line_num + 1
    try:
        for row in reader:
            number += 1
            extra = row.pop(None, None)
            if extra:
                raise DatasetError(
                    f"{path}:{start}: {len(extra)} more cell(s) than the header has columns"
                )
            yield Record(f"line {start}", {k: v for k, v in row.items() if k}, number)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DatasetError(f"{path}:{reader.line_num}: not CSV: {exc}") from None


def _parquet(path: Path) -> Iterator[Record]:
    parquet = optional("pyarrow.parquet", "tables", "reading Parquet")
    try:
        table = parquet.read_table(path)
    except Exception as exc:  # pyarrow's own errors: a damaged or foreign file
        raise DatasetError(f"{path}: not a Parquet file pyarrow reads: {exc}") from None
    yield from _rows(table.to_pylist())


def _arrow(path: Path) -> Iterator[Record]:
    """A ``datasets.save_to_disk`` folder (its ``state.json`` lists the Arrow files), or one
    Arrow file: the IPC stream format ``datasets`` writes, else the IPC file format."""
    ipc = optional("pyarrow.ipc", "tables", "reading Arrow files")
    if path.is_dir():
        state = path / "state.json"
        try:
            files = [path / f["filename"] for f in json.loads(_text(state))["_data_files"]]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise DatasetError(f"{state}: not a saved dataset's state ({exc!r})") from None
    else:
        files = [path]
    rows: list[dict[str, object]] = []
    for file in files:
        rows += _arrow_file(ipc, file).to_pylist()
    yield from _rows(rows)


def _arrow_file(ipc: ModuleType, file: Path) -> Any:
    if not file.is_file():
        raise DatasetError(f"{file}: listed in state.json, but not there")
    errors = []
    for opener in (ipc.open_stream, ipc.open_file):
        try:
            with open(file, "rb") as handle:
                return opener(handle).read_all()
        except Exception as exc:  # pyarrow's ArrowInvalid: try the other format
            errors.append(str(exc))
    raise DatasetError(f"{file}: not an Arrow file pyarrow reads: {errors[-1]}")


def _rows(rows: list[dict[str, object]]) -> Iterator[Record]:
    for number, row in enumerate(rows, start=1):
        yield Record(f"row {number}", dict(row), number)
