"""How many cases a suite needs, and the smallest difference it can detect.

Unpaired (two independent pass rates): the usual normal approximation,
    n per group = (z_{1−α/2}·√(2·p̄·q̄) + z_{1−β}·√(p₁q₁ + p₂q₂))² / δ².
Paired (the same cases, two agents; Connor 1987), with ψ the discordance rate:
    n = (z_{1−α/2}·√ψ + z_{1−β}·√(ψ − δ²))² / δ².
Connor's formula is for the normal approximation; the exact McNemar test is conservative and
needs somewhat more pairs (δ = 5 points, ψ = 15 %: 469 by the formula, about 498 for the
exact test), so :func:`mcnemar_exact_power` computes the exact test's power directly.
"""

from __future__ import annotations

import math

import numpy as np

from caseforge.stats.lazy import brentq, scipy_stats


def _z(q: float) -> float:
    return float(scipy_stats().norm.ppf(q))


def half_width(p: float, n: int, confidence: float = 0.95) -> float:
    """The normal-approximation half-width z·√(p(1−p)/n) of a pass rate."""
    return _z(0.5 + confidence / 2) * math.sqrt(p * (1 - p) / n)


def sample_size_unpaired(p: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Cases per run to tell pass rate ``p`` from ``p − delta`` with two independent runs."""
    p2 = p - delta
    if not (0 < p2 < 1 and 0 < p < 1) or delta <= 0:
        raise ValueError("need 0 < p − delta < p < 1")
    pbar = (p + p2) / 2
    za, zb = _z(1 - alpha / 2), _z(power)
    n = (za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p * (1 - p) + p2 * (1 - p2))) ** 2
    return math.ceil(n / delta**2)


def sample_size_paired(
    delta: float, discordance: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Paired cases (Connor) to detect a difference ``delta`` at discordance rate ψ."""
    if not 0 < delta**2 < discordance <= 1:
        raise ValueError("need 0 < delta² < discordance ≤ 1 (delta cannot exceed ψ)")
    za, zb = _z(1 - alpha / 2), _z(power)
    n = (za * math.sqrt(discordance) + zb * math.sqrt(discordance - delta**2)) ** 2 / delta**2
    return math.ceil(n)


def mde_unpaired(p: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest drop from ``p`` that ``n`` cases per run detect (unpaired)."""

    def excess(delta: float) -> float:
        return sample_size_unpaired_exact(p, delta, alpha, power) - n

    upper = p - 1e-9
    if excess(upper) > 0:
        return math.nan
    return float(brentq(excess, 1e-6, upper, xtol=1e-7))


def sample_size_unpaired_exact(p: float, delta: float, alpha: float, power: float) -> float:
    """The unrounded unpaired sample size (for root finding)."""
    p2 = p - delta
    pbar = (p + p2) / 2
    za, zb = _z(1 - alpha / 2), _z(power)
    num = za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p * (1 - p) + p2 * (1 - p2))
    return float(num**2 / delta**2)


def mde_paired(n: int, discordance: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest paired difference ``n`` cases detect at discordance rate ψ (Connor)."""
    za, zb = _z(1 - alpha / 2), _z(power)

    def excess(delta: float) -> float:
        return (
            za * math.sqrt(discordance) + zb * math.sqrt(discordance - delta**2)
        ) ** 2 / delta**2 - n

    upper = math.sqrt(discordance) - 1e-9
    if excess(upper) > 0:
        return math.nan
    return float(brentq(excess, 1e-6, upper, xtol=1e-7))


def mcnemar_exact_power(n: int, delta: float, discordance: float, alpha: float = 0.05) -> float:
    """Power of the two-sided exact McNemar test with ``n`` pairs.

    The number of discordant pairs is Binomial(n, ψ); given m of them, b (passed in A only)
    is Binomial(m, (ψ − δ)/(2ψ)) and the test rejects where the exact p-value ≤ α.
    """
    pb = (discordance - delta) / (2 * discordance)
    ms = np.arange(n + 1)
    weights = scipy_stats().binom.pmf(ms, n, discordance)
    total = 0.0
    for m, weight in zip(ms, weights, strict=True):
        if weight < 1e-12 or m == 0:
            continue
        ks = np.arange(m + 1)
        pvalues = np.minimum(1.0, 2 * scipy_stats().binom.cdf(np.minimum(ks, m - ks), m, 0.5))
        reject = pvalues <= alpha
        total += weight * float(scipy_stats().binom.pmf(ks[reject], m, pb).sum())
    return total


def sample_size_mcnemar_exact(
    delta: float, discordance: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """The first n (from Connor's n upwards) whose exact McNemar power reaches ``power``.

    The exact test's power is saw-toothed in n, so a slightly larger n can dip below again.
    """
    n = sample_size_paired(delta, discordance, alpha, power)
    while mcnemar_exact_power(n, delta, discordance, alpha) < power:
        n += 1
    return n
