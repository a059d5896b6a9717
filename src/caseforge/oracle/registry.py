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

import hashlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from caseforge.errors import DatasetError

OracleFn = Callable[..., object]
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
    """Import a suite's oracles module from ``path`` and return the oracles it registered.

    Each file is imported once per process under a name derived from its absolute path,
    so two suites with an ``oracles.py`` each do not clash.
    """
    path = path.resolve()
    if not path.is_file():
        raise OracleError(f"{path}: oracles module not found")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    module_name = f"caseforge_suite_oracles_{digest}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise OracleError(f"{path}: cannot import oracles module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        # The suite folder goes on sys.path so the module can import its neighbours.
        suite_dir = str(path.parent)
        added = suite_dir not in sys.path
        if added:
            sys.path.insert(0, suite_dir)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise OracleError(f"{path}: importing the oracles module failed: {exc!r}") from exc
        finally:
            if added:
                sys.path.remove(suite_dir)
    return oracles_in(vars(sys.modules[module_name]))
