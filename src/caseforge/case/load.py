"""Loading case files and suites, with every problem pinned to ``path:line:col``."""

from __future__ import annotations

import errno
import json
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from caseforge.case.limits import (
    exceeded,
    json_too_deep,
    limit_message,
    may_exceed_json,
    yaml_limit_problem,
)
from caseforge.case.model import Case, case_model
from caseforge.case.parsed import ParsedCases
from caseforge.case.positions import (
    bad_scalar_problem,
    jsonl_validation_problems,
    locate_in_yaml,
    yaml_syntax_problem,
    yaml_validation_problems,
)
from caseforge.case.suite import SuiteConfig
from caseforge.checks import (
    BUILTIN_MODES,
    BaseCheck,
    ModeTable,
    SuiteFileError,
    load_checks_file,
    mode_table,
)
from caseforge.errors import CaseforgeError, EnvError, Problem, UsageError

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
    """A suite folder (``suite_dir``): its configuration, its check modes and its cases."""

    suite_dir: Path
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

    @property
    def root(self) -> Path:
        """The old name of :attr:`suite_dir`, kept until 0.3.0."""
        warnings.warn(
            "Suite.root is now Suite.suite_dir; the old name goes in caseforge 0.3.0",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.suite_dir

    def case(self, case_id: str) -> Case:
        """The case with this id (``KeyError`` if there is none)."""
        for loaded in self.cases:
            if loaded.case.id == case_id:
                return loaded.case
        raise KeyError(case_id)


def read_yaml(path: Path) -> tuple[str, object]:
    """Read and parse a YAML file with the fast loader; raise ``CaseforgeError`` on bad YAML,
    on text that is not UTF-8, and on a value past the limits of :mod:`caseforge.case.limits`
    (too deep, or an alias bomb), each with its line and column."""
    text = read_text(path)
    try:
        data = _FAST.load(text)
    except MarkedYAMLError as exc:
        raise CaseforgeError(yaml_syntax_problem(path, exc, text=text)) from None
    except YAMLError as exc:
        raise CaseforgeError(Problem(path, 1, 1, "", f"YAML error: {exc}")) from None
    except ValueError as exc:  # a scalar YAML reads as a date or time that does not exist
        raise CaseforgeError(bad_scalar_problem(path, text, exc)) from None
    except RecursionError:  # deeper than even the loader goes: the depth limit, found
        raise CaseforgeError(yaml_limit_problem(path, text, "depth")) from None
    limit = exceeded(data)
    if limit is not None:
        raise CaseforgeError(yaml_limit_problem(path, text, limit))
    return text, data


def read_text(path: Path) -> str:
    """A user file's text; one line for a file that is not there, not UTF-8 (naming the
    line and column of the first bad byte), a dangling link or a link loop (dataset errors,
    1), or that cannot be read (an environment error, 5)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        what = (
            f"a dangling link (to {path.readlink()}): fix or remove it"
            if path.is_symlink()
            else "file not found"
        )
        raise CaseforgeError(Problem(path, 0, 0, "", what)) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            loop = "a symlink loop (it leads back to itself): fix or remove it"
            raise CaseforgeError(Problem(path, 0, 0, "", loop)) from None
        raise EnvError(Problem(path, 0, 0, "", f"cannot read it: {exc.strerror or exc}")) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaseforgeError(not_utf8_problem(path, raw, exc)) from None


def not_utf8_problem(path: Path, raw: bytes, exc: UnicodeDecodeError, line_no: int = 1) -> Problem:
    """Where the first byte that is not UTF-8 is: its line (counted from ``line_no``) and
    its column in characters, as an editor shows it."""
    before = raw[: exc.start]
    line = line_no + before.count(b"\n")
    start = before.rfind(b"\n") + 1
    col = len(before[start:].decode("utf-8", errors="replace")) + 1
    return Problem(
        path, line, col, "", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} ({exc.reason}); "
        "save the file as UTF-8",
    )  # fmt: skip


def parse_model(path: Path, text: str, data: object, model: type[M], what: str) -> M:
    """Validate parsed YAML as ``model``; raise ``CaseforgeError`` naming line, col and field."""
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise CaseforgeError(Problem(path, 1, 1, "", f"{what} must be a mapping, got {kind}"))
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        case_id = data.get("id") if isinstance(data.get("id"), str) else None
        raise CaseforgeError(yaml_validation_problems(path, text, exc, case_id, model)) from None


def require_suite_folder(suite_dir: Path) -> None:
    """A suite argument that is not there, or is not a folder, is a usage error (2): the
    command was given the wrong path, which says nothing about any dataset."""
    if suite_dir.is_dir():
        return
    if suite_dir.exists():
        raise UsageError(
            f"{suite_dir}: is a file, not a suite folder (give the folder holding caseforge.yaml)"
        )
    raise UsageError(
        f"{suite_dir}: suite folder not found (give the folder holding caseforge.yaml)"
    )


def load_config(suite_dir: Path) -> SuiteConfig:
    """Load ``SUITE/caseforge.yaml``."""
    require_suite_folder(suite_dir)
    path = suite_dir / CONFIG_FILE
    if not path.is_file():
        raise CaseforgeError(
            Problem(path, 0, 0, "", "no suite config here; a suite folder has caseforge.yaml")
        )
    text, data = read_yaml(path)
    return parse_model(path, text, data, SuiteConfig, "the suite config")


# Files editors and tools leave beside the one being edited: an Emacs lock (`.#a.yaml`, a
# dangling link) or autosave (`#a.yaml#`), a macOS resource fork (`._a.yaml`), an office
# lock (`~$a.yaml`, `.~lock.a.yaml#`). Vim's `.a.yaml.swp` and `a.yaml~` backups never had
# a case suffix.
EDITOR_PREFIXES = (".#", "#", "._", ".~", "~$")


def is_editor_file(name: str) -> bool:
    """Whether a file name is an editor's lock, autosave or backup, never a case."""
    return name.startswith(EDITOR_PREFIXES) or name.endswith(("~", "#"))


def case_files(suite_dir: Path) -> list[Path]:
    """Every case file under ``SUITE/cases/``, in a stable order (editors' lock and backup
    files left out)."""
    folder = suite_dir / CASES_DIR
    if not folder.is_dir():
        return []
    # A dangling link is listed too (is_file() is false for it): loading it reports it.
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix in CASE_SUFFIXES
        and not is_editor_file(p.name)
        and (p.is_file() or (p.is_symlink() and not p.exists()))
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


def iter_case_file(
    path: Path, model: type[Case] = Case, parsed: ParsedCases | None = None
) -> Iterator[LoadedCase | Problem]:
    """Yield each case in a file, or a problem for each case that does not load. With
    ``parsed``, a YAML file unchanged since it was last parsed is not parsed again."""
    if path.suffix == ".jsonl":
        yield from _iter_jsonl(path, model)
        return
    if parsed is not None:
        found, data = parsed.get(path)
        if found and isinstance(data, dict):
            try:
                yield LoadedCase(model.model_validate(data), path)
                return
            except ValidationError:
                pass  # read it again below, for the error's line and column
    try:
        text, data = read_yaml(path)
        if parsed is not None:
            parsed.put(path, data)
        yield LoadedCase(parse_model(path, text, data, model, "a case file"), path)
    except CaseforgeError as exc:
        yield from exc.problems


def _iter_jsonl(path: Path, model: type[Case]) -> Iterator[LoadedCase | Problem]:
    try:
        handle = path.open("rb")
    except OSError:
        try:
            read_text(path)  # names what is wrong with it: missing, a link loop, unreadable
        except CaseforgeError as exc:
            yield from exc.problems
        return
    with handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield not_utf8_problem(path, raw, exc, line_no)
                continue
            if not line.strip():
                continue
            if may_exceed_json(line):  # rare: measured before anything nests into it
                column = json_too_deep(line)
                if column is not None:
                    yield Problem(path, line_no, column, "", limit_message("depth"))
                    continue
            else:
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
            if exceeded(data) is not None:
                yield Problem(path, line_no, 1, "", limit_message("nodes"))
                continue
            if not isinstance(data, dict):
                yield Problem(path, line_no, 1, "", "each JSONL line must be a JSON object")
                continue
            try:
                yield LoadedCase(model.model_validate(data), path, line_no)
            except ValidationError as exc:
                case_id = data.get("id") if isinstance(data.get("id"), str) else None
                yield from jsonl_validation_problems(path, line_no, line, exc, case_id, model)


def iter_cases(suite_dir: Path, model: type[Case] = Case) -> Iterator[LoadedCase | Problem]:
    """Every case of a suite, or a problem for each one that does not load (a YAML file
    unchanged since a command last parsed it is not parsed again: ``case/parsed.py``). A
    check naming a file of the suite (a schema, a script) reads it here: a file that is
    missing or wrong is a problem of its case."""
    files = case_files(suite_dir)
    parsed = ParsedCases.of(suite_dir) if any(p.suffix != ".jsonl" for p in files) else None
    for path in files:
        for item in iter_case_file(path, model, parsed):
            problems = bind_problems(item, suite_dir) if isinstance(item, LoadedCase) else []
            if problems:
                yield from problems
            else:
                yield item
    if parsed is not None:
        parsed.save({str(p) for p in files})


def bind_suite_files(case: Case, suite_dir: Path) -> list[tuple[tuple[str | int, ...], str]]:
    """Have each check of ``case`` read the files of the suite it names (``BaseCheck.bind``);
    ``(where, message)`` for each that cannot, ``where`` the path of the field in the case
    (``("expect", "summary", "schema")``)."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    places: list[tuple[tuple[str | int, ...], object]] = [
        (("expect", key), check) for key, check in case.expect.items()
    ]
    if case.conversation is not None:
        for index, step in enumerate(case.conversation.script):
            places += [
                (("conversation", "script", index, "expect", key), check)
                for key, check in step.expect.items()
            ]
    # The checks graded are these, or copies made from them (a turn's): bind both.
    places += [((name,), check) for name, _, check in case.checks()]
    for where, check in places:
        if not isinstance(check, BaseCheck) or type(check).bind is BaseCheck.bind:
            continue
        try:
            check.bind(suite_dir)
        except SuiteFileError as exc:
            if len(where) > 1:  # a copy's problem is its original's, already reported
                found.append(((*where, exc.field), str(exc)))
    return found


def bind_problems(loaded: LoadedCase, suite_dir: Path) -> list[Problem]:
    """:func:`bind_suite_files` for a loaded case, as problems pinned to its file."""
    problems = []
    for where, message in bind_suite_files(loaded.case, suite_dir):
        if loaded.path.suffix == ".jsonl":
            line, col = loaded.line, 1
        else:
            line, col = locate_in_yaml(loaded.path, where)
        field = ".".join(str(part) for part in where)
        problems.append(Problem(loaded.path, line, col, field, message, case_id=loaded.case.id))
    return problems


def load_case(path: str | Path, model: type[Case] | None = None) -> Case:
    """Load one YAML case file (or a one-line JSONL file).

    Args:
        path: The case file.
        model: The case model to read it with (default: the one knowing the modes of the
            suite the file is in, if it is in one).

    Returns:
        The case.

    Raises:
        CaseforgeError: The file is not a valid case, each problem naming its line."""
    path = Path(path)
    suite_dir = _suite_around(path)
    if model is None:
        model = case_model(suite_modes(suite_dir) if suite_dir is not None else mode_table())
    results = list(iter_case_file(path, model))
    if suite_dir is not None:
        bound: list[LoadedCase | Problem] = []
        for item in results:
            problems = bind_problems(item, suite_dir) if isinstance(item, LoadedCase) else []
            bound += problems or [item]
        results = bound
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
    """Load a suite's config and all its cases.

    This checks each file on its own; ``caseforge validate`` (``validate_suite``) also checks
    the suite as a whole (duplicate and retired ids, near-duplicates, oracle drift).

    Args:
        suite_dir: The suite folder (it holds ``caseforge.yaml``).

    Returns:
        The suite: its ``config``, its ``cases`` and its check ``modes``.

    Raises:
        CaseforgeError: Listing every problem, each with its file, line and field.
    """
    suite_dir = Path(suite_dir)
    config = load_config(suite_dir)
    suite = Suite(suite_dir=suite_dir, config=config, modes=suite_modes(suite_dir, config))
    problems: list[Problem] = []
    for item in iter_cases(suite_dir, suite.case_model):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            suite.cases.append(item)
    if problems:
        raise CaseforgeError(problems)
    return suite


def _suite_around(path: Path) -> Path | None:
    """The suite a case file sits in (``SUITE/cases/…``), if it is in one."""
    for folder in path.resolve().parents:
        if folder.name == CASES_DIR and (folder.parent / CONFIG_FILE).is_file():
            return folder.parent
    return None
