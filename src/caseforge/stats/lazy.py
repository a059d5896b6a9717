"""scipy, imported on first use: it costs a third of a second, which every CLI call would
otherwise pay."""

from __future__ import annotations

from typing import Any


def scipy_stats() -> Any:
    """``scipy.stats``."""
    from scipy import stats

    return stats


def brentq(*args: Any, **kwargs: Any) -> float:
    """``scipy.optimize.brentq`` as a float."""
    from scipy import optimize

    return float(optimize.brentq(*args, **kwargs))
