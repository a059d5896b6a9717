"""scipy, imported on first use: it costs a third of a second, which every CLI call would
otherwise pay."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType


def scipy_stats() -> ModuleType:
    """``scipy.stats``."""
    from scipy import stats

    module: ModuleType = stats
    return module


def brentq(f: Callable[[float], float], a: float, b: float, **options: float) -> float:
    """``scipy.optimize.brentq`` (a root of ``f`` in ``[a, b]``; ``xtol``, ``rtol``,
    ``maxiter`` as scipy takes them) as a float."""
    from scipy import optimize

    return float(optimize.brentq(f, a, b, **options))
