"""Intervals and estimators for pass rates (see shared notes on statistics).

- Wilson score interval for a proportion (Wald collapses at 0/n and n/n).
- Case-clustered standard error: trials of one case are not independent, so average each
  case's trials first, then apply the CLT over the case means.
- pass@k (at least one of k trials passes) and pass^k (all k pass), unbiased from n ≥ k
  trials with c passes, averaged over cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist


def z_value(confidence: float = 0.95) -> float:
    """The two-sided normal quantile for ``confidence`` (1.959964 for 0.95)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n`` (``(0, 1)`` when n is 0)."""
    if n <= 0:
        return (0.0, 1.0)
    z = z_value(confidence)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def clustered_se(case_means: Sequence[float]) -> float:
    """Standard error of the mean over cases: sd(case means, ddof=1) / sqrt(n cases)."""
    n = len(case_means)
    if n < 2:
        return 0.0
    mean = sum(case_means) / n
    variance = sum((x - mean) ** 2 for x in case_means) / (n - 1)
    return math.sqrt(variance / n)


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k trials drawn from n passes), given c of n passed (Chen et al.)."""
    if k > n:
        raise ValueError(f"k={k} is more than the {n} trials")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1 - k / i
    return 1.0 - product


def pass_hat_k(n: int, c: int, k: int) -> float:
    """P(all k trials drawn from n pass), given c of n passed: C(c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"k={k} is more than the {n} trials")
    if c < k:
        return 0.0
    product = 1.0
    for i in range(k):
        product *= (c - i) / (n - i)
    return product
