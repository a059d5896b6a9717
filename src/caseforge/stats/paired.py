"""Paired comparison of two runs on the same cases.

- One trial per case: exact McNemar on the discordant cases (b = passed in A only, c =
  passed in B only); the continuity-corrected χ² is reported beside it when b + c is large.
- Several trials: the paired CLT on per-case mean differences, with a t interval (n − 1
  degrees of freedom, which is the honest choice for the small n of most suites).
- Item-level precision and recall: bootstrap over cases (a case's items are not independent).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from caseforge.stats.counts import ItemCounts
from caseforge.stats.lazy import scipy_stats

CHI2_MIN_DISCORDANT = 25


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: min(1, 2·BinomCDF(min(b, c); b + c, ½))."""
    n = b + c
    if n == 0:
        return 1.0
    return float(min(1.0, 2.0 * scipy_stats().binom.cdf(min(b, c), n, 0.5)))


def mcnemar_chi2(b: int, c: int) -> tuple[float, float]:
    """Continuity-corrected χ² statistic (|b − c| − 1)² / (b + c) and its p-value."""
    n = b + c
    if n == 0:
        return 0.0, 1.0
    statistic = (abs(b - c) - 1) ** 2 / n  # as statsmodels: no floor at |b − c| < 1
    return float(statistic), float(scipy_stats().chi2.sf(statistic, 1))


@dataclass(frozen=True)
class PairedDifference:
    """mean(B − A) over cases, its standard error, interval and two-sided p-value."""

    n: int
    difference: float
    se: float
    ci: tuple[float, float]
    p_value: float


def paired_difference(
    a: Sequence[float], b: Sequence[float], confidence: float = 0.95
) -> PairedDifference:
    """The paired difference of per-case means (B − A) with a t interval."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    n = len(a)
    if n == 0:
        return PairedDifference(0, 0.0, 0.0, (0.0, 0.0), 1.0)
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    mean = float(d.mean())
    if n < 2:
        return PairedDifference(n, mean, math.inf, (-math.inf, math.inf), 1.0)
    se = float(d.std(ddof=1) / math.sqrt(n))
    if se == 0.0:
        # Every case moved by the same amount: the t statistic is infinite, but a handful of
        # cases proves little. Fall back to the exact sign test on the cases that moved.
        moved = int(np.count_nonzero(d))
        p = 1.0 if mean == 0.0 else min(1.0, 2 * 0.5**moved)
        return PairedDifference(n, mean, 0.0, (mean, mean), p)
    t = float(scipy_stats().t.ppf(0.5 + confidence / 2, n - 1))
    p = float(2 * scipy_stats().t.sf(abs(mean / se), n - 1))
    return PairedDifference(n, mean, se, (mean - t * se, mean + t * se), p)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _percentile_bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    confidence: float,
    resamples: int,
    seed: int,
) -> tuple[float, float] | None:
    """scipy's paired percentile bootstrap over cases; resamples whose statistic is
    undefined (no items at all) are left out instead of turning the interval into NaN."""
    with warnings.catch_warnings():  # degenerate resamples are handled below
        warnings.simplefilter("ignore")
        result = _bootstrap(data, statistic, confidence, resamples, seed)
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if not (math.isnan(low) or math.isnan(high)):
        return low, high
    values = result.bootstrap_distribution[~np.isnan(result.bootstrap_distribution)]
    if not len(values):
        return None
    tail = 50 * (1 - confidence)
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


class _Interval(Protocol):
    low: float
    high: float


class _BootstrapResult(Protocol):
    """What is read of ``scipy.stats.bootstrap``'s result."""

    confidence_interval: _Interval
    bootstrap_distribution: NDArray[np.float64]


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    confidence: float,
    resamples: int,
    seed: int,
) -> _BootstrapResult:
    result: _BootstrapResult = scipy_stats().bootstrap(
        data,
        statistic,
        paired=True,
        vectorized=True,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return result


def bootstrap_items(
    counts: Sequence[ItemCounts],
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, tuple[float, float] | None]:
    """Percentile bootstrap intervals for precision and recall, resampling cases."""
    if len(counts) < 2:
        return {"precision": None, "recall": None}
    tp = np.array([c.tp for c in counts], dtype=float)
    fp = np.array([c.fp for c in counts], dtype=float)
    fn = np.array([c.fn for c in counts], dtype=float)

    def precision(tp: np.ndarray, fp: np.ndarray, axis: int = -1) -> np.ndarray:
        return _ratio(tp.sum(axis=axis), tp.sum(axis=axis) + fp.sum(axis=axis))

    return {
        "precision": _percentile_bootstrap((tp, fp), precision, confidence, resamples, seed)
        if (tp + fp).sum()
        else None,
        "recall": _percentile_bootstrap((tp, fn), precision, confidence, resamples, seed)
        if (tp + fn).sum()
        else None,
    }


def bootstrap_paired_ratio(
    a: Sequence[ItemCounts],
    b: Sequence[ItemCounts],
    metric: str,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, tuple[float, float] | None]:
    """B − A for ``precision`` or ``recall`` over paired cases, with a bootstrap interval
    that resamples the same cases on both sides."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")

    def arrays(counts: Sequence[ItemCounts]) -> tuple[np.ndarray, np.ndarray]:
        tp = np.array([c.tp for c in counts], dtype=float)
        other = np.array([c.fp if metric == "precision" else c.fn for c in counts], dtype=float)
        return tp, other

    tp_a, other_a = arrays(a)
    tp_b, other_b = arrays(b)

    def difference(
        tp_a: np.ndarray, o_a: np.ndarray, tp_b: np.ndarray, o_b: np.ndarray, axis: int = -1
    ) -> np.ndarray:
        ra = _ratio(tp_a.sum(axis=axis), tp_a.sum(axis=axis) + o_a.sum(axis=axis))
        rb = _ratio(tp_b.sum(axis=axis), tp_b.sum(axis=axis) + o_b.sum(axis=axis))
        diff: np.ndarray = rb - ra
        return diff

    point = float(difference(tp_a, other_a, tp_b, other_b))
    if len(a) < 2:
        return point, None
    interval = _percentile_bootstrap(
        (tp_a, other_a, tp_b, other_b), difference, confidence, resamples, seed
    )
    return point, interval
