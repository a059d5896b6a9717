"""Suite oracles: code that computes an expectation from the business data and policy.

A suite's ``oracles.py`` registers functions with the :func:`oracle` decorator::

    from caseforge.oracle import oracle

    @oracle("refund_policy")
    def refund_policy(input: dict, *, scenario: str) -> dict | None:
        ...

A check that says ``oracle: refund_policy`` and ``args: {scenario: cancel}`` stores the
value the oracle returned; ``caseforge validate`` calls the oracle again with the case's
``input`` and those ``args`` and reports any difference as drift.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from caseforge.errors import DatasetError, SuiteExit
from caseforge.imports import SuiteImportError, import_suite_file

OracleFn = Callable[..., object]


@dataclass(frozen=True)
class AnyOf:
    """What an oracle returns when more than one answer is right: ``value`` and the
    ``alternatives``, which a case stores as ``value`` and ``any_of``."""

    value: object
    alternatives: tuple[object, ...] = ()

    def __init__(self, value: object, alternatives: Sequence[object] = ()) -> None:
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "alternatives", tuple(alternatives))


def expectation(computed: object) -> tuple[object, list[object]]:
    """An oracle's answer as ``(value, any_of)``."""
    if isinstance(computed, AnyOf):
        return computed.value, list(computed.alternatives)
    return computed, []


F = TypeVar("F", bound=OracleFn)

ORACLE_ATTRIBUTE = "__caseforge_oracle__"


class OracleError(DatasetError):
    """An oracle module could not be loaded, or an oracle is unknown or failed."""


def oracle(name: str) -> Callable[[F], F]:
    """Register ``fn`` as the oracle called ``name``.

    The function is called as ``fn(input, **args)`` where ``input`` is the case's input
    mapping and ``args`` the check's ``args``. It must be deterministic.
    """

    def register(fn: F) -> F:
        setattr(fn, ORACLE_ATTRIBUTE, name)
        return fn

    return register


def oracles_in(namespace: Mapping[str, object]) -> dict[str, OracleFn]:
    """The oracles registered with :func:`oracle` among the values of ``namespace``."""
    found: dict[str, OracleFn] = {}
    for value in namespace.values():
        name = getattr(value, ORACLE_ATTRIBUTE, None)
        if isinstance(name, str) and callable(value):
            found[name] = value
    return found


def load_oracles(path: Path) -> dict[str, OracleFn]:
    """Import a suite's oracles module from ``path`` and return the oracles it registered."""
    path = path.resolve()
    if not path.is_file():
        raise OracleError(f"{path}: oracles module not found")
    try:
        module = import_suite_file(path, "oracles")
    except SuiteImportError as exc:
        what = str(exc.error) if isinstance(exc.error, SuiteExit) else repr(exc.error)
        raise OracleError(f"{path}: importing the oracles module failed: {what}") from exc
    return oracles_in(vars(module))
