"""Pieces shared by the simulated systems: seeded randomness, a frozen clock, amounts."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import ClassVar


def make_rng(seed: int, salt: str) -> random.Random:
    """A random generator that depends only on ``seed`` and ``salt``.

    String seeds are hashed with SHA-512 by :class:`random.Random`, so the stream does not
    depend on ``PYTHONHASHSEED`` and is the same on every machine.
    """
    return random.Random(f"{salt}:{int(seed)}")


def as_clock(value: datetime | str) -> datetime:
    """A timezone-aware datetime from a datetime or an ISO 8601 string (naive means UTC)."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    if not isinstance(moment, datetime):
        raise TypeError(f"clock must be a datetime or an ISO 8601 string, not {value!r}")
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class SimClock:
    """A frozen clock that moves forward one second per recorded operation."""

    def __init__(self, start: datetime | str) -> None:
        self._now = as_clock(start)

    def now(self) -> datetime:
        return self._now

    def tick(self, seconds: int = 1) -> str:
        self._now += timedelta(seconds=seconds)
        return self._now.isoformat()


def parse_amount(value: object, places: int) -> Decimal:
    """An exact decimal amount with at most ``places`` decimals.

    Accepts ``Decimal``, ``int``, ``str`` (``"100.005"``) and ``float`` (read through its
    shortest ``repr``, so ``100.005`` means ``Decimal("100.005")``).
    """
    if isinstance(value, bool):
        raise ValueError(f"not an amount: {value!r}")
    try:
        amount = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))
    except InvalidOperation as exc:
        raise ValueError(f"not an amount: {value!r}") from exc
    if not amount.is_finite():
        raise ValueError(f"not an amount: {value!r}")
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -places:
        raise ValueError(f"{value!r} has more than {places} decimals")
    return amount.quantize(Decimal(1).scaleb(-places))


def check_faults(faults: frozenset[str] | set[str], known: tuple[str, ...], system: str) -> None:
    unknown = sorted(set(faults) - set(known))
    if unknown:
        raise ValueError(f"{system}: unknown bug ids {unknown}; known: {list(known)}")


class SimulatedSystem:
    """What every simulated system starts from: its name, the bugs a build of it may plant,
    the faults this build plants, and a frozen clock."""

    name: ClassVar[str]
    bug_ids: ClassVar[tuple[str, ...]]

    def __init__(
        self, *, seed: int, clock: datetime | str, faults: frozenset[str] = frozenset()
    ) -> None:
        check_faults(faults, self.bug_ids, self.name)
        self._faults = frozenset(faults)
        self._clock = SimClock(clock)
