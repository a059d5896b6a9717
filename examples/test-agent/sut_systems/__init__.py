"""Simulated systems under test for the ``test-agent`` example suite.

A case names a system and an opaque build label; :func:`open_system` maps the label to a
variant through :data:`BUILDS` and returns a fresh, deterministic instance for the case's
seed and frozen clock. The agent under evaluation must use only the systems' public
methods (``describe()`` lists them); :data:`BUILDS` is the answer key of this suite and
is read by the tests, never by an agent.

The package is called ``sut_systems`` rather than ``systems``: the runner puts the suite
folder on ``sys.path`` and several suites run in one process, so a generic top-level name
would clash with another suite's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._common import as_clock
from .booking import BookingSystem
from .payment import PaymentSystem
from .tenant import TenantSystem
from .wallet import WalletSystem

SYSTEMS: dict[str, type[Any]] = {
    "wallet": WalletSystem,
    "booking": BookingSystem,
    "payment": PaymentSystem,
    "tenant": TenantSystem,
}


@dataclass(frozen=True)
class Build:
    """One build of a system and the bug ids planted in it (empty for a clean build)."""

    system: str
    planted: tuple[str, ...]


BUILDS: dict[str, Build] = {
    "wallet@b41": Build("wallet", ("rounding-0.005",)),
    "wallet@b57": Build("wallet", ()),
    "wallet@b63": Build("wallet", ("rounding-0.005",)),
    "booking@r7": Build("booking", ("double-booking-race",)),
    "booking@r8": Build("booking", ()),
    "payment@2.3.0": Build("payment", ("double-charge-no-idempotency",)),
    "payment@2.3.1": Build("payment", ()),
    "payment@2.4.0": Build("payment", ("double-charge-no-idempotency", "refund-off-by-one-cent")),
    "payment@2.4.2": Build("payment", ("refund-off-by-one-cent",)),
    "tenant@t19": Build("tenant", ("cross-tenant-leak",)),
    "tenant@t20": Build("tenant", ()),
}


def open_system(name: str, build: str, *, seed: int, clock: datetime | str) -> Any:
    """A fresh instance of system ``name`` at ``build``, deterministic for ``seed``/``clock``.

    Raises ``ValueError`` for an unknown system or build, or a build of another system.
    """
    if name not in SYSTEMS:
        raise ValueError(f"unknown system {name!r}; known: {sorted(SYSTEMS)}")
    entry = BUILDS.get(build)
    if entry is None:
        raise ValueError(f"unknown build {build!r} of {name!r}")
    if entry.system != name:
        raise ValueError(f"build {build!r} belongs to {entry.system!r}, not {name!r}")
    return SYSTEMS[name](seed=int(seed), clock=as_clock(clock), faults=frozenset(entry.planted))


__all__ = ["BUILDS", "SYSTEMS", "Build", "open_system"]
