"""Check modes of your own: one small class with one ``grade`` method.

A suite names a module in ``caseforge.yaml`` (``checks: checks.py``); an installed package
may expose modes under the ``caseforge.checks`` entry-point group. Either way each mode is a
subclass of :class:`CheckMode`::

    from typing import Literal
    from caseforge import CheckMode, Verdict, failed, passed

    class AtMost(CheckMode):
        \"\"\"The field is a number no greater than ``limit``.\"\"\"

        strength = 60                      # where it sits in the audit's order (exact is 70)
        options = {"limit": OptionOrder("higher")}   # raising the limit loosens the check

        mode: Literal["at_most"]
        limit: float

        def grade(self, actual: object) -> Verdict:
            ...

The module lists its modes in ``CHECKS = [...]``, or else every ``CheckMode`` subclass it
defines is one. Each declaration is checked when the suite loads.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import ClassVar

from caseforge.checks.base import BaseCheck, OptionOrder, Reads, Verdict
from caseforge.checks.table import BUILTIN_MODES, FORMS, ModeSpec, ModeTable, mode_name_of
from caseforge.errors import CaseforgeError, Problem, suite_exit
from caseforge.imports import SuiteImportError, import_suite_file

ENTRY_POINT_GROUP = "caseforge.checks"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_CUSTOM_READS = (Reads.FIELD, Reads.WORKSPACE)


class CheckMode(BaseCheck):
    """The base class of a user-defined check mode.

    Declare ``mode: Literal["name"]``, the fields of the expectation, ``strength`` (0–100,
    required) and a ``grade(self, actual) -> Verdict`` method; optionally ``reads``
    (``Reads.FIELD`` or ``Reads.WORKSPACE``), ``expected_field`` (the field an oracle
    computes), ``items_field`` and ``feeds_items``, and ``options``. On ``replies`` the mode
    is graded reply by reply: a ``forbids`` property returning ``True`` makes it pass only
    when every reply passes, and ``per_reply = False`` refuses ``replies``.
    """

    # The field an oracle may compute (``validate`` recomputes it); none unless declared.
    expected_field: ClassVar[str | None] = None

    @property
    def expected(self) -> object:
        """The ``expected_field``'s value, else the mode's own fields (for the reports)."""
        if self.expected_field is not None:
            return getattr(self, self.expected_field, None)
        own = self.model_dump(mode="json", exclude=set(BaseCheck.model_fields))
        return own or None

    def grade(self, actual: object) -> Verdict:  # pragma: no cover - replaced by each mode
        raise NotImplementedError


def declare(model: object, where: Path | str) -> ModeSpec:
    """Check one user-defined mode and return its spec; ``CaseforgeError`` names the class and
    what is wrong with it."""
    path = Path(str(where))
    if not (isinstance(model, type) and issubclass(model, BaseCheck)):
        raise CaseforgeError(
            Problem(path, 0, 0, "checks", f"{model!r} is not a CheckMode subclass")
        )
    line = _line_of(model)

    def problem(message: str) -> CaseforgeError:
        return CaseforgeError(Problem(path, line, 1, f"checks.{model.__name__}", message))

    name = mode_name_of(model)
    if name is None:
        raise problem('declare the mode\'s name as `mode: Literal["name"]`')
    if not _NAME.match(name):
        raise problem(f"mode name {name!r}: use lower-case letters, digits and _")
    if name in BUILTIN_MODES or name in FORMS:
        raise problem(f"mode {name!r} is built in; give yours another name")
    if "strength" not in vars(model):
        raise problem("declare `strength` (0-100; exact is 70, judge 20), which the audit uses")
    if not isinstance(model.strength, int) or not 0 <= model.strength <= 100:
        raise problem(f"strength must be a whole number from 0 to 100, not {model.strength!r}")
    if model.reads not in _CUSTOM_READS:
        raise problem(f"reads must be Reads.FIELD or Reads.WORKSPACE, not {model.reads!r}")
    if model.grade is BaseCheck.grade or model.grade is CheckMode.grade:
        raise problem("define `grade(self, actual) -> Verdict`")
    fields = set(model.model_fields)
    for option, order in model.options.items():
        if option not in fields:
            raise problem(f"options names {option!r}, which is not a field of the mode")
        if not isinstance(order, OptionOrder):
            raise problem(f"options[{option!r}] must be an OptionOrder, not {order!r}")
    if model.expected_field is not None and model.expected_field not in fields:
        raise problem(f"expected_field {model.expected_field!r} is not a field of the mode")
    if model.items_field is not None and model.items_field not in fields:
        raise problem(f"items_field {model.items_field!r} is not a field of the mode")
    if model.feeds_items and model.items_field is None:
        raise problem("feeds_items needs items_field (the field holding the expected items)")
    return ModeSpec.of(model, source=f"{path}:{model.__name__}")


def checks_in_module(module: ModuleType, where: Path | str) -> list[ModeSpec]:
    """The modes a module declares: its ``CHECKS`` list, else the subclasses it defines."""
    listed = getattr(module, "CHECKS", None)
    if listed is not None:
        if not isinstance(listed, list | tuple):
            raise CaseforgeError(
                Problem(Path(str(where)), 0, 0, "checks.CHECKS", "CHECKS must be a list")
            )
        return [declare(model, where) for model in listed]
    defined = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, BaseCheck)
        and value not in (BaseCheck, CheckMode)
        and value.__module__ == module.__name__
    ]
    return [declare(model, where) for model in defined]


def load_checks_file(path: Path, config_path: Path) -> list[ModeSpec]:
    """Import a suite's checks module (once per content) and declare its modes."""
    path = path.resolve()
    if not path.is_file():
        raise CaseforgeError(
            Problem(config_path, 0, 0, "checks", f"checks module {path} not found")
        )
    module = _import_file(path, config_path)
    return checks_in_module(module, path)


def _import_file(path: Path, config_path: Path) -> ModuleType:
    try:
        return import_suite_file(path, "checks")
    except SuiteImportError as exc:
        what = f"{type(exc.error).__name__}: {exc.error}" if exc.error else "cannot import it"
        raise CaseforgeError(Problem(path, exc.line, 0, "checks", what)) from None


@cache
def entry_point_modes() -> tuple[ModeSpec, ...]:
    """The modes installed packages expose under the ``caseforge.checks`` entry points."""
    found: list[ModeSpec] = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {point.name} ({point.value})"
        try:
            loaded = point.load()
        except Exception as exc:
            raise CaseforgeError(f"{where}: cannot load: {type(exc).__name__}: {exc}") from None
        except (SystemExit, KeyboardInterrupt) as exc:
            failure = suite_exit(exc)
            if failure is None:
                raise
            raise CaseforgeError(f"{where}: cannot load: it {failure}") from None
        if isinstance(loaded, ModuleType):
            found += checks_in_module(loaded, where)
        elif isinstance(loaded, list | tuple):
            found += [declare(model, where) for model in loaded]
        else:
            found.append(declare(loaded, where))
    return tuple(found)


def mode_table(extra: Iterable[ModeSpec] = ()) -> ModeTable:
    """The built-in modes, the installed packages' and ``extra`` (a suite's)."""
    try:
        return BUILTIN_MODES.plus([*entry_point_modes(), *extra])
    except ValueError as exc:
        raise CaseforgeError(str(exc)) from None


def _line_of(model: type) -> int:
    try:
        return inspect.getsourcelines(model)[1]
    except (OSError, TypeError):
        return 0
