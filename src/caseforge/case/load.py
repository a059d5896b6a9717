"""Loading case files and suites, with every problem pinned to ``path:line:col``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from caseforge.case.model import Case, case_model
from caseforge.case.positions import (
    bad_scalar_problem,
    jsonl_validation_problems,
    yaml_syntax_problem,
    yaml_validation_problems,
)
from caseforge.case.suite import SuiteConfig
from caseforge.checks import BUILTIN_MODES, ModeTable, load_checks_file, mode_table
from caseforge.errors import CaseforgeError, EnvError, Problem

CONFIG_FILE = "caseforge.yaml"
CASES_DIR = "cases"
CASE_SUFFIXES = (".yaml", ".yml", ".jsonl")

M = TypeVar("M", bound=BaseModel)

# One loader for the whole process: the C parser, YAML 1.2 (so `no` stays a string).
_FAST = YAML(typ="safe", pure=False)


@dataclass(frozen=True)
class LoadedCase:
    """A case and where it was read from (``line`` is 1 for a YAML file)."""

    case: Case
    path: Path
    line: int = 1


@dataclass
class Suite:
    """A suite folder: its configuration, its check modes and its cases."""

    root: Path
    config: SuiteConfig
    cases: list[LoadedCase] = field(default_factory=list)
    modes: ModeTable = BUILTIN_MODES

    @property
    def case_model(self) -> type[Case]:
        """The case model that knows this suite's check modes."""
        return case_model(self.modes)

    @property
    def name(self) -> str:
        return self.config.name

    def case(self, case_id: str) -> Case:
        """The case with this id (``KeyError`` if there is none)."""
        for loaded in self.cases:
            if loaded.case.id == case_id:
                return loaded.case
        raise KeyError(case_id)


def read_yaml(path: Path) -> tuple[str, object]:
    """Read and parse a YAML file with the fast loader; raise ``CaseforgeError`` on bad YAML."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        what = (
            f"a dangling link (to {path.readlink()}): fix or remove it"
            if path.is_symlink()
            else "file not found"
        )
        raise CaseforgeError(Problem(path, 0, 0, "", what)) from None
    except OSError as exc:
        raise EnvError(Problem(path, 0, 0, "", f"cannot read it: {exc.strerror or exc}")) from None
    except UnicodeDecodeError as exc:
        raise CaseforgeError(Problem(path, 0, 0, "", f"not UTF-8 text: {exc.reason}")) from None
    try:
        return text, _FAST.load(text)
    except MarkedYAMLError as exc:
        raise CaseforgeError(yaml_syntax_problem(path, exc)) from None
    except YAMLError as exc:
        raise CaseforgeError(Problem(path, 1, 1, "", f"YAML error: {exc}")) from None
    except ValueError as exc:  # a scalar YAML reads as a date or time that does not exist
        raise CaseforgeError(bad_scalar_problem(path, text, exc)) from None


def parse_model(path: Path, text: str, data: object, model: type[M], what: str) -> M:
    """Validate parsed YAML as ``model``; raise ``CaseforgeError`` naming line, col and field."""
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise CaseforgeError(Problem(path, 1, 1, "", f"{what} must be a mapping, got {kind}"))
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        case_id = data.get("id") if isinstance(data.get("id"), str) else None
        raise CaseforgeError(yaml_validation_problems(path, text, exc, case_id)) from None


def load_config(suite_dir: Path) -> SuiteConfig:
    """Load ``SUITE/caseforge.yaml``."""
    path = suite_dir / CONFIG_FILE
    if not path.is_file():
        if not suite_dir.is_dir():
            raise CaseforgeError(Problem(suite_dir, 0, 0, "", "suite folder not found"))
        raise CaseforgeError(
            Problem(path, 0, 0, "", "no suite config here; a suite folder has caseforge.yaml")
        )
    text, data = read_yaml(path)
    return parse_model(path, text, data, SuiteConfig, "the suite config")


def case_files(suite_dir: Path) -> list[Path]:
    """Every case file under ``SUITE/cases/``, in a stable order."""
    folder = suite_dir / CASES_DIR
    if not folder.is_dir():
        return []
    # A dangling link is listed too (is_file() is false for it): loading it reports it.
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix in CASE_SUFFIXES and (p.is_file() or (p.is_symlink() and not p.exists()))
    )


def suite_modes(suite_dir: Path, config: SuiteConfig | None = None) -> ModeTable:
    """The check modes a suite's cases may use: the built-in ones, those of installed
    ``caseforge.checks`` entry points, and those of the suite's ``checks:`` module."""
    if config is None:
        config = load_config(suite_dir) if (suite_dir / CONFIG_FILE).is_file() else None
    extra = []
    if config is not None and config.checks:
        extra = load_checks_file(suite_dir / config.checks, suite_dir / CONFIG_FILE)
    return mode_table(extra)


def iter_case_file(path: Path, model: type[Case] = Case) -> Iterator[LoadedCase | Problem]:
    """Yield each case in a file, or a problem for each case that does not load."""
    if path.suffix == ".jsonl":
        yield from _iter_jsonl(path, model)
        return
    try:
        text, data = read_yaml(path)
        yield LoadedCase(parse_model(path, text, data, model, "a case file"), path)
    except CaseforgeError as exc:
        yield from exc.problems


def _iter_jsonl(path: Path, model: type[Case]) -> Iterator[LoadedCase | Problem]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        yield Problem(path, 0, 0, "", f"cannot read: {exc.strerror}")
        return
    with handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:  # the fast path: pydantic parses and validates the JSON in one go
                yield LoadedCase(model.model_validate_json(line), path, line_no)
                continue
            except ValidationError:
                pass  # parse again below to say exactly what is wrong, and where
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                yield Problem(path, line_no, exc.colno, "", f"invalid JSON: {exc.msg}")
                continue
            if not isinstance(data, dict):
                yield Problem(path, line_no, 1, "", "each JSONL line must be a JSON object")
                continue
            try:
                yield LoadedCase(model.model_validate(data), path, line_no)
            except ValidationError as exc:
                case_id = data.get("id") if isinstance(data.get("id"), str) else None
                yield from jsonl_validation_problems(path, line_no, line, exc, case_id)


def iter_cases(suite_dir: Path, model: type[Case] = Case) -> Iterator[LoadedCase | Problem]:
    """Every case of a suite, or a problem for each one that does not load."""
    for path in case_files(suite_dir):
        yield from iter_case_file(path, model)


def load_case(path: str | Path, model: type[Case] | None = None) -> Case:
    """Load one YAML case file (or a one-line JSONL file); raise ``CaseforgeError`` if bad.

    Without ``model``, the modes are those of the suite the file is in (if it is in one)."""
    path = Path(path)
    if model is None:
        model = case_model(_suite_modes_around(path))
    results = list(iter_case_file(path, model))
    problems = [r for r in results if isinstance(r, Problem)]
    if problems:
        raise CaseforgeError(problems)
    cases = [r for r in results if isinstance(r, LoadedCase)]
    if len(cases) != 1:
        raise CaseforgeError(
            Problem(Path(path), 0, 0, "", f"expected one case, found {len(cases)}")
        )
    return cases[0].case


def load_suite(suite_dir: str | Path) -> Suite:
    """Load a suite's config and all its cases; raise ``CaseforgeError`` listing every problem.

    This checks each file on its own; ``caseforge validate`` also checks the suite as a whole
    (duplicate and retired ids, near-duplicates, oracle drift).
    """
    root = Path(suite_dir)
    config = load_config(root)
    suite = Suite(root=root, config=config, modes=suite_modes(root, config))
    problems: list[Problem] = []
    for item in iter_cases(root, suite.case_model):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            suite.cases.append(item)
    if problems:
        raise CaseforgeError(problems)
    return suite


def _suite_modes_around(path: Path) -> ModeTable:
    """The modes of the suite a case file sits in (``SUITE/cases/…``), else the default ones."""
    for folder in path.resolve().parents:
        if folder.name == CASES_DIR and (folder.parent / CONFIG_FILE).is_file():
            return suite_modes(folder.parent)
    return mode_table()
