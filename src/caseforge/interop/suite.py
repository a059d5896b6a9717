"""Writing what an importer made into a suite: ids, ownership, all or nothing, validation.

An importer reads its source and hands a :class:`SuiteWriter` one case (a plain mapping, as
its YAML file will hold it) per source item, each with the :class:`~caseforge.interop.report.Item`
the report keeps for it. The writer does the rest, the same for every format:

- **Ids.** The item's wanted slug becomes a free id (``interop/ids.py``); an item this
  importer made a case of before, from the same source, keeps that case's id.
- **Ownership.** Each case carries ``provenance.imported_from`` (format, source, the item's
  own id, where it was). Re-importing the same source rewrites the cases it made and touches
  no other file; a case of its own the source no longer has is left as it is, and listed.
  An item is known again by its own id; one without is known by what it holds (its case's
  ``input`` and ``conversation``, less the fields ``derived`` names, such as a prompt
  rendered from the others), never by its position: a row inserted above it, or rows
  reordered, leave each case with its own item. An item whose content changed is a new
  case, and the old one is listed as no longer in the source.
  A rewrite replaces ``input``, ``conversation`` and ``expect`` with what the source says,
  and keeps every other key of the case file unless the import writes it too (``split``
  always; ``group``, ``note``…; ``tags`` and ``provenance`` are merged), so ``caseforge
  split --write`` and hand-added keys survive a re-import. An item whose case was retired
  (``caseforge retire``) is skipped, and said so.
- **Validation.** Each case is validated with the suite's check modes before anything is
  written: one that does not validate is written all the same, and named with its error.
  After writing, the whole suite goes through ``caseforge validate``; the result joins the
  report, and an error fails the import (exit 1).
- **All or nothing.** A new suite is built in a temporary folder beside ``--out`` and moved
  into place; in an existing one, every file is staged beside its target first and moved
  only when all are staged. ``--dry-run`` writes nothing and prints the report.
- **The report.** ``SUITE/IMPORT.md`` and the printed lines (``interop/report.py``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from caseforge.case.load import (
    CASES_DIR,
    CONFIG_FILE,
    case_files,
    iter_case_file,
    load_config,
    suite_modes,
)
from caseforge.case.model import Case, case_model
from caseforge.case.retire import retired_entries
from caseforge.case.suite import SuiteConfig
from caseforge.errors import CaseforgeError, Problem, UsageError
from caseforge.files import write_all_atomic, yaml_text
from caseforge.interop.ids import IdAllocator
from caseforge.interop.report import REPORT_FILE, ImportReport, Item, ItemStatus

PROVENANCE_KEY = "imported_from"
# A new suite's gate rule, as `caseforge init`'s suite has it (its must-pass rule needs tags).
DEFAULT_GATE_RULE = {"metric": "pass_rate", "no_significant_drop": True}
# The order of a case file's keys, as people write them; others follow in the order given.
KEY_ORDER = (
    "id", "input", "conversation", "expect", "tags", "group", "source", "split", "added",
    "note", "provenance",
)  # fmt: skip


@dataclass
class _Owned:
    """A case this importer made from this source before."""

    case_id: str
    path: Path
    added: object
    kept: dict[str, object]  # the case file's keys an import does not write, kept as they are


@dataclass
class _Pending:
    item: Item
    case_id: str
    data: dict[str, object]
    path: Path


@dataclass
class SuiteWriter:
    """Collects an importer's cases for ``suite_dir`` and writes them (see the module).

    ``format`` and ``source`` say which import owns a case: the source is the path as seen
    from the suite folder, so a re-import from another working folder is the same import.
    ``config`` is the new suite's ``caseforge.yaml`` (an existing suite's is never
    touched); ``files`` are other files the importer owns, by path under the suite
    (rewritten by every import)."""

    suite_dir: Path
    format: str
    source: str
    report: ImportReport
    config: dict[str, object] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    derived: frozenset[str] = frozenset()  # input fields made from the others, not content

    def __post_init__(self) -> None:
        if self.suite_dir.exists() and not self.suite_dir.is_dir():
            raise UsageError(f"--out {self.suite_dir}: is a file; name a suite folder")
        self.existing = (self.suite_dir / CONFIG_FILE).is_file()
        if (
            not self.existing
            and self.suite_dir.is_dir()
            and any(p for p in self.suite_dir.iterdir() if not p.name.startswith("."))
        ):
            raise UsageError(
                f"--out {self.suite_dir}: a folder that is not a suite (no {CONFIG_FILE}) and "
                "not empty; name a new folder or a suite"
            )
        self._owned: dict[str, _Owned] = {}
        taken: set[str] = set()
        self._paths: set[Path] = set()
        self._retired: dict[str, str] = {}  # an item's key -> the id its case was retired as
        if self.existing:
            for entry in retired_entries(self.suite_dir):
                taken.add(entry.id)
                mark = _mapping(_mapping(entry.case).get("provenance")).get(PROVENANCE_KEY)
                if self._is_ours(mark):
                    assert isinstance(mark, dict)
                    content = self._content(_mapping(entry.case))
                    self._retired[_key(mark.get("id"), content)] = entry.id
            lenient = case_model(lenient=True)
            # Read without the parse cache, which would write .caseforge/ (a dry run writes
            # nothing).
            loaded_cases = (
                c for p in case_files(self.suite_dir) for c in iter_case_file(p, lenient)
            )
            for loaded in loaded_cases:
                if isinstance(loaded, Problem):
                    self._paths.add(loaded.path.resolve())
                    continue
                case = loaded.case
                self._paths.add(loaded.path.resolve())
                mark = case.provenance.get(PROVENANCE_KEY)
                ours = self._is_ours(mark) and loaded.path.suffix != ".jsonl"
                raw = _raw(loaded.path)
                content = self._content(raw)
                key = _key(mark.get("id"), content) if isinstance(mark, dict) else ""
                if ours and key in self._owned:  # the same content twice: the second's turn
                    key = _nth(key, self._owned)
                if ours and key not in self._owned:
                    self._owned[key] = _Owned(case.id, loaded.path, case.added, _kept(raw))
                else:
                    taken.add(case.id)
        self._ids = IdAllocator(taken)
        for owned in self._owned.values():
            self._ids.reserve(owned.case_id)
        self._pending: list[_Pending] = []
        self._claimed: set[str] = set()

    def _content(self, case: Mapping[str, object]) -> str:
        """What an item without an id of its own is known by: its case's input (less the
        derived fields) and conversation, as a digest."""
        given = case.get("input")
        shown = (
            {k: v for k, v in given.items() if k not in self.derived}
            if isinstance(given, dict)
            else given
        )
        text = json.dumps(
            [shown, case.get("conversation")], sort_keys=True, ensure_ascii=False, default=str
        )
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def _is_ours(self, mark: object) -> bool:
        """Whether a case's ``provenance.imported_from`` says this import made it."""
        return (
            isinstance(mark, dict)
            and mark.get("format") == self.format
            and mark.get("source") == self.source
        )

    def add(
        self, item: Item, slug: str, data: dict[str, object], original_id: object = None
    ) -> str | None:
        """Add the case ``data`` (no ``id``, ``source`` or ``added``) made from ``item``,
        wanting the id ``slug``. ``original_id`` is the item's own id in its source, which a
        re-import finds the case by (an item without one is found by what it holds).
        Returns the case's id (None: its case was retired, and the item is skipped)."""
        content = self._content(data)
        key = _key(original_id, content)
        if key in self._claimed and original_id is not None:
            # two items with one id: the second is known by what it holds
            item.note(f"id {original_id!r} is used by an earlier item too")
            key = _key(None, content)
        if key in self._claimed:  # the same content twice: known by its turn
            key = _nth(key, self._claimed)
        self._claimed.add(key)
        retired = self._retired.get(key)
        if retired is not None and key not in self._owned:
            item.skip(f"its case {retired!r} was retired (retired.yaml); not imported again")
            return None
        owned = self._owned.get(key)
        if owned is not None:
            case_id, path, added = owned.case_id, owned.path, owned.added
        else:
            case_id = self._ids.claim(slug)
            path = self.suite_dir / CASES_DIR / f"{case_id}.yaml"
            while path.resolve() in self._paths:  # a file of that name that is not ours
                case_id = self._ids.claim(slug)
                path = self.suite_dir / CASES_DIR / f"{case_id}.yaml"
            added = dt.date.today()
        if case_id != slug and owned is None:
            item.map(f"id: {slug!r} is taken, so the case is {case_id!r}")
        data = _fresh(data)  # no shared values: YAML would write them as anchors and aliases
        kept = _fresh(owned.kept) if owned is not None else {}
        provenance = {**_mapping(kept.pop("provenance", None)), **_mapping(data.get("provenance"))}
        tags = kept.pop("tags", None)
        if isinstance(tags, list) and tags:  # the import's tags, and those added by hand
            new = data.get("tags") if isinstance(data.get("tags"), list) else []
            assert isinstance(new, list)
            data["tags"] = [*new, *(t for t in tags if t not in new)]
        data = {**{k: v for k, v in kept.items() if k not in data}, **data}
        mark: dict[str, object] = {"format": self.format, "source": self.source}
        if original_id is not None and key == _key(original_id, content):
            mark["id"] = original_id
        mark["where"] = item.where
        provenance[PROVENANCE_KEY] = mark
        full = {"id": case_id, **data, "source": "imported", "added": added}
        full["provenance"] = provenance
        ordered = {k: full[k] for k in KEY_ORDER if k in full}
        ordered.update({k: v for k, v in full.items() if k not in ordered})
        item.case_id = case_id
        self._pending.append(_Pending(item, case_id, ordered, path))
        return case_id

    def write(self, dry_run: bool = False) -> ImportReport:
        """Validate, write (unless ``dry_run``), validate the suite, write ``IMPORT.md``.
        A case that does not validate is written all the same, for the user to fix, and
        marked ``invalid`` with why (``report.error()`` is then the import's error)."""
        report = self.report
        report.dry_run = dry_run
        model = self._model()
        texts: dict[Path, str] = {}
        for pending in self._pending:
            item = pending.item
            item.path = _shown(pending.path, self.suite_dir)
            text = yaml_text(pending.data)
            before = _read(pending.path)
            if before is None:
                item.status = ItemStatus.NEW
            else:
                item.status = ItemStatus.UNCHANGED if before == text else ItemStatus.UPDATED
            problem = _invalid(model, pending.data)
            if problem:
                item.status, item.reason = ItemStatus.INVALID, problem
            if before != text:
                texts[pending.path] = text
        claimed = {p.case_id for p in self._pending}
        report.orphans = sorted(
            _shown(o.path, self.suite_dir) for o in self._owned.values() if o.case_id not in claimed
        )
        for name, text in self.files.items():
            path = self.suite_dir / name
            if _read(path) != text:
                texts[path] = text
        if not self.existing:
            config = {"name": self.suite_dir.resolve().name, **self.config}
            if "gate" not in config:  # what `caseforge gate` holds a run to, as init's suite
                config["gate"] = {"rules": [dict(DEFAULT_GATE_RULE)]}
                report.notes.append(
                    "gate: a drop in pass rate beyond noise fails `caseforge gate` "
                    "(more rules go in caseforge.yaml)"
                )
            _check_config(config)
            texts[self.suite_dir / CONFIG_FILE] = yaml_text(config)
        if dry_run:
            return report
        texts[self.suite_dir / REPORT_FILE] = report.markdown()  # rewritten after validation
        if self.existing:
            write_all_atomic(texts)
        else:
            _write_new(self.suite_dir, texts)
        self._validate()
        write_all_atomic({self.suite_dir / REPORT_FILE: report.markdown()})
        return report

    def _model(self) -> type[Case]:
        if not self.existing:
            return Case
        try:
            return case_model(suite_modes(self.suite_dir, load_config(self.suite_dir)))
        except CaseforgeError:
            return Case  # the suite's own config is broken: validate will say so

    def _validate(self) -> None:
        from caseforge.case.validate import validate_suite

        result = validate_suite(self.suite_dir)
        by_path = {p.path.resolve(): p for p in self._pending}
        others = 0
        for problem in result.errors:
            pending = by_path.get(problem.path.resolve())
            if pending is None:
                others += 1
            elif pending.item.status is not ItemStatus.INVALID:
                pending.item.status = ItemStatus.INVALID
                pending.item.reason = problem.format()
        state = "valid" if result.ok() else f"{len(result.errors)} error(s)"
        tail = f" ({others} in files this import did not write)" if others else ""
        warned = f", {len(result.warnings)} warning(s)" if result.warnings else ""
        self.report.validation = f"caseforge validate: {state}{tail}{warned}"


def source_name(path: Path, suite_dir: Path) -> str:
    """A source as the suite sees it: its path relative to the suite folder, so a re-import
    from another working folder is the same import and finds the cases it made."""
    return Path(os.path.relpath(path.resolve(), suite_dir.resolve())).as_posix()


def _fresh(value: object) -> dict[str, object]:
    """A copy of ``value`` sharing nothing, not even within itself (``deepcopy`` keeps a
    value used twice shared)."""

    def fresh(inner: object) -> object:
        if isinstance(inner, dict):
            return {k: fresh(v) for k, v in inner.items()}
        if isinstance(inner, list | tuple):
            return [fresh(v) for v in inner]
        return inner

    copied = fresh(value)
    assert isinstance(copied, dict)
    return copied


def _key(original_id: object, content: str) -> str:
    """How a re-import knows an item again: by its own id, else by what it holds."""
    return f"id:{original_id}" if original_id is not None else f"content:{content}"


def _nth(key: str, taken: Container[str]) -> str:
    """``key`` for the next item holding the same: ``key#2``, ``key#3``…"""
    number = 2
    while f"{key}#{number}" in taken:
        number += 1
    return f"{key}#{number}"


def _raw(path: Path) -> dict[str, object]:
    """A case file as written ({} for a file that is not one YAML mapping)."""
    from caseforge.case.load import read_yaml

    try:
        _, data = read_yaml(path)
    except CaseforgeError:
        return {}
    return _mapping(data)


# What a re-import writes afresh, from the source alone: the rest of the file is kept.
_WRITTEN = frozenset({"id", "source", "added", "input", "conversation", "expect"})


def _kept(raw: Mapping[str, object]) -> dict[str, object]:
    """A case file's keys a re-import keeps unless the import writes them too (``split``,
    ``group``, ``note``…; ``tags`` and ``provenance`` are merged)."""
    return {k: v for k, v in raw.items() if k not in _WRITTEN}


def _mapping(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _shown(path: Path, suite_dir: Path) -> str:
    try:
        return path.relative_to(suite_dir).as_posix()
    except ValueError:
        return str(path)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None


def _invalid(model: type[Case], data: dict[str, object]) -> str:
    """Why ``data`` is not a valid case (the first error), or ``""``."""
    from caseforge.errors import first_validation_error

    try:
        model.model_validate(data)
    except ValidationError as exc:
        return first_validation_error(exc)
    return ""


def _check_config(config: dict[str, object]) -> None:
    try:
        SuiteConfig.model_validate(config)
    except ValidationError as exc:  # the importer's own mistake, never the user's
        raise AssertionError(f"an importer wrote an invalid caseforge.yaml: {exc}") from None


def _write_new(suite_dir: Path, texts: dict[Path, str]) -> None:
    """A new suite: every file written into a temporary folder beside it, then the folder
    moved into place, so an import that fails half way leaves nothing."""
    parent = suite_dir.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{suite_dir.name}.import-", dir=parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)  # mkdtemp's 0700 would make the suite private
        for path, text in texts.items():
            target = staging / path.relative_to(suite_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        (staging / CASES_DIR).mkdir(exist_ok=True)
        if suite_dir.is_dir():  # an empty folder (or one of dot files only) the user made
            for leftover in suite_dir.iterdir():
                os.replace(leftover, staging / leftover.name)
            suite_dir.rmdir()
        os.replace(staging, suite_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
