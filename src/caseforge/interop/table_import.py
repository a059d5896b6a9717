"""``caseforge import table``: a table of examples as cases, one row each.

The table is CSV, JSONL, JSON, Parquet, or a Hugging Face dataset saved to disk (a folder
with ``state.json`` and Arrow files), read by ``interop/records.py``. What each column
becomes is said on the command line:

- ``--map input.ticket=body``: the case's ``input.ticket`` is the row's ``body`` (a dotted
  path nests: ``input.customer.id=customer``); ``--map tags=labels`` (a list, or text
  split at ``;``), ``--map note=…``, ``--map group=…``, ``--map split=…`` too.
- ``--expect category=exact:label``: a check on the agent's ``category``, mode ``exact``,
  its expected value the row's ``label``. Any mode: ``exact``, ``number`` (the cell read
  as a number), ``regex``, ``must_include`` / ``must_not_include`` / ``exact_set`` (a list,
  or text split at ``;``), ``judge`` (the cell is the rubric; a list, the facts),
  ``outcome`` (JSON text is read as JSON).
- ``--expect refund=number:oracle=refund_due``: the expected value computed by the suite's
  oracle from the case's input (an existing suite whose ``caseforge.yaml`` names its
  ``oracles`` module), as ``caseforge validate`` will compute it again.
- ``--id col``: the case id (default: the ``id`` column if there is one, else the row).

An empty cell under ``--expect`` leaves that check out for the row (reported); a row left
with no check gets an ``ignore`` check saying so. Columns nothing maps are kept in each
case's ``provenance.row`` and named in the report.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from caseforge.case.load import load_config, suite_modes
from caseforge.errors import CaseforgeError, DatasetError, UsageError
from caseforge.interop.ids import join, slugify
from caseforge.interop.records import Record, file_format, read_records
from caseforge.interop.report import ImportReport, Item
from caseforge.interop.suite import SuiteWriter, source_name

FORMAT = "table"
META_TARGETS = ("tags", "note", "group", "split")
LIST_MODES = {"must_include", "must_not_include", "exact_set"}
VALUE_FIELD = {
    "exact": "value", "number": "value", "regex": "value", "outcome": "value",
    "must_include": "values", "must_not_include": "values", "exact_set": "values",
    "judge": "rubric",
}  # fmt: skip


@dataclass(frozen=True)
class Expectation:
    """``--expect FIELD=MODE:COLUMN`` or ``FIELD=MODE:oracle=NAME``."""

    field: str
    mode: str
    column: str | None = None
    oracle: str | None = None

    @classmethod
    def parse(cls, spec: str) -> Expectation:
        name, eq, rest = spec.partition("=")
        mode, colon, source = rest.partition(":")
        if not (eq and colon and name.strip() and mode.strip() and source.strip()):
            raise UsageError(
                f"--expect {spec!r}: write FIELD=MODE:COLUMN (category=exact:label) or "
                "FIELD=MODE:oracle=NAME"
            )
        if source.startswith("oracle="):
            oracle = source.removeprefix("oracle=").strip()
            if not oracle:
                raise UsageError(f"--expect {spec!r}: name the oracle (oracle=NAME)")
            return cls(name.strip(), mode.strip(), oracle=oracle)
        return cls(name.strip(), mode.strip(), column=source.strip())


@dataclass(frozen=True)
class TableImport:
    """What ``caseforge import table`` was asked for."""

    table: Path
    suite: Path
    maps: dict[str, str] = field(default_factory=dict)  # target (input.x, tags…) -> column
    expects: tuple[Expectation, ...] = ()
    id_column: str | None = None
    prefix: str | None = None

    @classmethod
    def from_options(
        cls,
        table: Path,
        suite: Path,
        maps: list[str],
        expects: list[str],
        id_column: str | None = None,
        prefix: str | None = None,
    ) -> TableImport:
        """From the command line's ``--map TARGET=COLUMN`` and ``--expect`` strings."""
        mapped: dict[str, str] = {}
        for spec in maps:
            target, eq, column = spec.partition("=")
            target, column = target.strip(), column.strip()
            if not (eq and target and column):
                raise UsageError(f"--map {spec!r}: write TARGET=COLUMN (input.ticket=body)")
            if not (target.startswith("input.") and len(target) > 6) and target not in META_TARGETS:
                raise UsageError(
                    f"--map {spec!r}: the target is input.NAME or one of {', '.join(META_TARGETS)}"
                )
            if target in mapped:
                raise UsageError(f"--map {spec!r}: {target} is mapped twice")
            mapped[target] = column
        if not any(t.startswith("input.") for t in mapped):
            raise UsageError("give at least one --map input.NAME=COLUMN: a case needs its input")
        parsed = tuple(Expectation.parse(spec) for spec in expects)
        fields = [e.field for e in parsed]
        for name in fields:
            if fields.count(name) > 1:
                raise UsageError(f"--expect: {name} is expected twice")
        return cls(table, suite, mapped, parsed, id_column, prefix)


def _known_modes(request: TableImport) -> None:
    """An ``--expect`` mode neither built in nor the suite's own is a usage error (2), said
    before anything is read further or written."""
    if not request.expects:
        return
    try:
        modes = suite_modes(request.suite)
    except CaseforgeError:
        return  # the suite's own config is broken: validating after the import says so
    for expectation in request.expects:
        if expectation.mode not in modes:
            known = ", ".join(sorted(modes))
            raise UsageError(
                f"--expect {expectation.field}={expectation.mode}:…: no check mode "
                f"{expectation.mode!r} (the modes: {known})"
            )


def import_table(request: TableImport, dry_run: bool = False) -> ImportReport:
    """Read the table, write the suite (unless ``dry_run``), return the report.

    Raises:
        UsageError: a column no row has, an unreadable file name, an oracle without a suite.
        DatasetError: a cell that is not what its mode needs (file, line or row, column).
    """
    path = request.table
    fmt = file_format(path)
    records = read_records(path, fmt)
    columns = _columns(records)
    id_column = request.id_column or ("id" if "id" in columns else None)
    used = [*request.maps.values(), *(e.column for e in request.expects if e.column)]
    if id_column:
        used.append(id_column)
    for column in used:
        if records and column not in columns:
            raise UsageError(
                f"{path}: no column {column!r}; the columns are {', '.join(sorted(columns))}"
            )
    _known_modes(request)
    report = ImportReport(FORMAT, str(path), str(request.suite))
    writer = SuiteWriter(
        request.suite,
        FORMAT,
        source_name(path, request.suite),
        report,
        config={"description": f"Imported from the table {path.name}."},
    )
    mapping = [f"{target} <- {column}" for target, column in request.maps.items()]
    mapping += [
        f"{e.field}: {e.mode} <- " + (f"oracle {e.oracle}" if e.oracle else e.column or "")
        for e in request.expects
    ]
    report.notes.append(f"each row: {'; '.join(mapping)}")
    unmapped = sorted(columns - set(used))
    if unmapped:
        report.notes.append(
            f"columns nothing maps ({', '.join(unmapped)}): kept in each case's provenance.row"
        )
    if fmt == "csv":
        report.notes.append(
            "CSV cells are text: input fields are strings; number checks read their cell as a "
            "number; list checks split their cell at ';'"
        )
    computed = _oracle_values(request, records)
    prefix = slugify(path.stem if path.is_file() else path.name)
    if request.prefix is not None:
        prefix = slugify(request.prefix, "")
    for record in records:
        original = record.fields.get(id_column) if id_column else None
        original = None if original in (None, "") else _plain(original)
        item = report.item(record.where, original)
        case = _case(request, record, path, computed.get(record.number, {}), unmapped, item)
        wanted = join(prefix, slugify(original) if original is not None else str(record.number))
        writer.add(item, wanted or "row", case, original)
    return writer.write(dry_run)


def _columns(records: list[Record]) -> set[str]:
    found: set[str] = set()
    for record in records:
        found.update(record.fields)
    return found


def _fail(path: Path, record: Record, column: str, message: str) -> DatasetError:
    line = record.where.removeprefix("line ")
    where = f"{path}:{line}" if line.isdigit() else f"{path}: {record.where}"
    return DatasetError(f"{where}: column {column!r}: {message}")


def _plain(value: object) -> object:
    """A cell as YAML and JSON hold it: Arrow's decimals, times and bytes made plain."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _empty(value: object) -> bool:
    return value is None or value == "" or value == []


def _inputs(maps: dict[str, str], cells: dict[str, object]) -> dict[str, object]:
    """The case's input from the row's cells, as ``--map input.…`` says."""
    inputs: dict[str, object] = {}
    for target, column in maps.items():
        if target.startswith("input."):
            _put(inputs, target.removeprefix("input.").split("."), cells.get(column))
    return inputs


def _case(
    request: TableImport,
    record: Record,
    path: Path,
    computed: dict[str, tuple[object, list[object]]],
    unmapped: list[str],
    item: Item,
) -> dict[str, object]:
    cells = {k: _plain(v) for k, v in record.fields.items()}
    case: dict[str, object] = {"input": _inputs(request.maps, cells)}
    for target, column in request.maps.items():
        value = cells.get(column)
        if target.startswith("input.") or _empty(value):
            continue
        case[target] = _as_list(value) if target == "tags" else str(value)
    expect: dict[str, object] = {}
    for expectation in request.expects:
        if expectation.oracle is not None:
            value, others = computed[expectation.field]
            check: dict[str, object] = {"mode": expectation.mode}
            check[VALUE_FIELD.get(expectation.mode, "value")] = value
            if others:
                check["any_of"] = others
            check.update(oracle=expectation.oracle, args={})
            expect[expectation.field] = check
            continue
        assert expectation.column is not None
        cell = cells.get(expectation.column)
        if _empty(cell):
            item.note(f"{expectation.field}: column {expectation.column!r} is empty: no check")
            continue
        expect[expectation.field] = _check(expectation, cell, path, record)
    if not expect:
        expect["output"] = {"mode": "ignore", "reason": "the row gives no expectation"}
        item.map("no expectation in the row -> an ignore check")
    case["expect"] = expect
    if unmapped:
        case["provenance"] = {"row": {c: cells.get(c) for c in unmapped}}
    return case


def _put(target: dict[str, object], keys: list[str], value: object) -> None:
    for key in keys[:-1]:
        inner = target.setdefault(key, {})
        assert isinstance(inner, dict)
        target = inner
    target[keys[-1]] = value


def _as_list(value: object) -> list[object]:
    if isinstance(value, list):
        return value
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            return parsed
    return [part.strip() for part in text.split(";") if part.strip()]


def _check(expectation: Expectation, cell: object, path: Path, record: Record) -> dict[str, object]:
    mode, column = expectation.mode, expectation.column or ""
    check: dict[str, object] = {"mode": mode}
    if mode == "number":
        try:
            number = float(cell) if isinstance(cell, str | int | float) else math.nan
        except ValueError:
            number = math.nan
        if isinstance(cell, bool) or not math.isfinite(number):
            raise _fail(path, record, column, f"{cell!r} is not a number (mode number)")
        check["value"] = number
    elif mode in LIST_MODES:
        check["values"] = _as_list(cell)
    elif mode == "judge":
        if isinstance(cell, list):
            check["values"] = [str(v) for v in cell]
        else:
            check["rubric"] = str(cell)
    elif mode == "outcome" and isinstance(cell, str) and cell.strip()[:1] in ("{", "["):
        try:
            check["value"] = json.loads(cell)
        except json.JSONDecodeError as exc:
            raise _fail(path, record, column, f"not JSON ({exc.msg})") from None
    elif mode == "regex":
        check["value"] = str(cell)
    else:  # exact, outcome, and a suite's own mode: the value as the cell holds it
        check["value"] = cell
    return check


def _oracle_values(
    request: TableImport, records: list[Record]
) -> dict[int, dict[str, tuple[object, list[object]]]]:
    """Each row's oracle-computed expectations, by record number and field, computed in the
    suite's oracle worker processes (never in caseforge's own)."""
    wanted = [e for e in request.expects if e.oracle is not None]
    if not wanted:
        return {}
    from caseforge.oracle.pool import OracleCall, OraclePool, pool_size

    suite = request.suite
    config_file = suite / "caseforge.yaml"
    if not config_file.is_file():
        raise UsageError(
            f"--expect {wanted[0].field}=…:oracle={wanted[0].oracle}: an oracle is the suite's "
            f"code: import into an existing suite whose caseforge.yaml names its oracles module"
        )
    config = load_config(suite)
    if not config.oracles:
        raise UsageError(f"{config_file}: sets no `oracles` module, so no oracle can compute")
    module = suite / config.oracles
    calls: list[OracleCall] = []
    for record in records:
        case_input = _inputs(request.maps, {k: _plain(v) for k, v in record.fields.items()})
        for index, expectation in enumerate(wanted):
            assert expectation.oracle is not None
            calls.append(
                OracleCall(record.number * 1000 + index, expectation.oracle, case_input, {})
            )
    values: dict[int, dict[str, tuple[object, list[object]]]] = {}
    with OraclePool(module, suite, config.oracle_timeout_s, pool_size(len(calls))) as pool:
        info = pool.module_info()
        if info.names is None:
            raise CaseforgeError(info.error or f"{module}: the oracles module did not load")
        for expectation in wanted:
            if expectation.oracle not in info.names:
                raise UsageError(
                    f"--expect {expectation.field}: {config.oracles} has no oracle "
                    f"{expectation.oracle!r} (it has {', '.join(sorted(info.names)) or 'none'})"
                )
        for call, answer in pool.run(calls):
            number, index = divmod(call.key, 1000)
            if answer.error is not None:
                record = next(r for r in records if r.number == number)
                why = answer.error.removeprefix("failed: ")  # the pool's word, said once
                raise DatasetError(
                    f"{request.table}: {record.where}: oracle {call.name!r} failed: {why}"
                )
            values.setdefault(number, {})[wanted[index].field] = (answer.value, list(answer.others))
    return values
