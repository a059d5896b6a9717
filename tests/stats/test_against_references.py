"""caseforge.stats against scipy and statsmodels on the same inputs (within 1e-6)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import comb
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from caseforge.stats import (
    ItemCounts,
    bootstrap_items,
    bootstrap_paired_ratio,
    clustered_se,
    half_width,
    mcnemar_chi2,
    mcnemar_exact,
    mcnemar_exact_power,
    mde_paired,
    mde_unpaired,
    paired_difference,
    pass_at_k,
    pass_hat_k,
    sample_size_mcnemar_exact,
    sample_size_paired,
    sample_size_unpaired,
    wilson_interval,
)

TOL = 1e-6


@pytest.mark.parametrize(("k", "n"), [(17, 20), (0, 10), (10, 10), (1, 3), (45, 80), (511, 1000)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    ours = wilson_interval(k, n)
    assert ours == pytest.approx((lo, hi), abs=TOL)
    assert ours == pytest.approx(sps.binomtest(k, n).proportion_ci(method="wilson"), abs=TOL)


def test_wilson_17_of_20() -> None:
    assert wilson_interval(17, 20) == pytest.approx((0.6396, 0.9476), abs=5e-5)


def test_clustered_se_equals_the_cr1_sandwich_for_equal_clusters() -> None:
    rng = random.Random(4)
    for cases, trials in ((4, 3), (30, 5), (12, 2)):
        y = [float(rng.random() < 0.6) for _ in range(cases * trials)]
        groups = [i // trials for i in range(cases * trials)]
        fit = OLS(np.array(y), np.ones((len(y), 1))).fit(
            cov_type="cluster", cov_kwds={"groups": np.array(groups)}
        )
        means = [sum(y[c * trials : (c + 1) * trials]) / trials for c in range(cases)]
        assert clustered_se(means) == pytest.approx(float(fit.bse[0]), abs=TOL)


@pytest.mark.parametrize(("n", "c", "k"), [(10, 3, 5), (8, 6, 3), (3, 2, 2), (20, 0, 4), (5, 5, 5)])
def test_pass_at_k_and_pass_hat_k_match_scipy_comb(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=TOL)
    assert pass_hat_k(n, c, k) == pytest.approx(comb(c, k) / comb(n, k), abs=TOL)


def test_pass_k_reference_values() -> None:
    assert pass_at_k(10, 3, 5) == pytest.approx(0.9167, abs=5e-5)
    assert pass_hat_k(8, 6, 3) == pytest.approx(0.3571, abs=5e-5)
    # Numerically stable where the combinations are astronomically large.
    exact = 1 - Fraction(comb(1997, 1000, exact=True), comb(2000, 1000, exact=True))
    assert pass_at_k(2000, 3, 1000) == pytest.approx(float(exact), abs=TOL)


@pytest.mark.parametrize(("b", "c"), [(6, 0), (8, 0), (2, 1), (0, 0), (12, 30), (40, 61), (3, 3)])
def test_mcnemar_matches_statsmodels(b: int, c: int) -> None:
    table = [[10, b], [c, 10]]
    assert mcnemar_exact(b, c) == pytest.approx(mcnemar(table, exact=True).pvalue, abs=TOL)
    if b + c:
        reference = mcnemar(table, exact=False, correction=True)
        statistic, p = mcnemar_chi2(b, c)
        assert statistic == pytest.approx(reference.statistic, abs=TOL)
        assert p == pytest.approx(reference.pvalue, abs=TOL)
    assert mcnemar_exact(6, 0) == pytest.approx(0.03125, abs=TOL)


def test_paired_difference_matches_scipy_ttest_rel() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, 25) / 3
    b = np.clip(a + rng.normal(0.1, 0.3, 25), 0, 1)
    ours = paired_difference(list(a), list(b))
    reference = sps.ttest_rel(b, a)
    assert ours.p_value == pytest.approx(reference.pvalue, abs=TOL)
    low, high = reference.confidence_interval(0.95)
    assert ours.ci == pytest.approx((low, high), abs=TOL)
    assert ours.difference == pytest.approx(float(np.mean(b - a)), abs=TOL)
    same = paired_difference([1.0, 0.0], [1.0, 0.0])
    assert (same.difference, same.p_value) == (0.0, 1.0)


def test_bootstrap_items_matches_scipy_bootstrap() -> None:
    counts = [
        ItemCounts(3, 0, 1),
        ItemCounts(2, 1, 0),
        ItemCounts(0, 0, 2),
        ItemCounts(4, 0, 0),
        ItemCounts(1, 1, 1),
        ItemCounts(2, 0, 0),
        ItemCounts(0, 2, 0),
    ]
    ours = bootstrap_items(counts, resamples=999, seed=11)
    tp = np.array([c.tp for c in counts], float)
    fn = np.array([c.fn for c in counts], float)
    reference = sps.bootstrap(
        (tp, fn),
        lambda t, f, axis=-1: t.sum(axis) / (t.sum(axis) + f.sum(axis)),
        paired=True,
        vectorized=True,
        n_resamples=999,
        method="percentile",
        rng=np.random.default_rng(11),
    ).confidence_interval
    assert ours["recall"] == pytest.approx((reference.low, reference.high), abs=TOL)
    point = sum(c.tp for c in counts) / sum(c.tp + c.fn for c in counts)
    assert ours["recall"] is not None and ours["recall"][0] <= point <= ours["recall"][1]


def test_bootstrap_paired_ratio_sees_a_clear_drop() -> None:
    before = [ItemCounts(2, 0, 0)] * 20
    after = [ItemCounts(1, 0, 1)] * 15 + [ItemCounts(2, 0, 0)] * 5
    diff, interval = bootstrap_paired_ratio(before, after, "recall", seed=1)
    assert diff == pytest.approx(-0.375)
    assert interval is not None and interval[1] < 0


def test_power_reference_values() -> None:
    widths = [round(100 * half_width(0.85, n), 1) for n in (20, 50, 100, 200, 400)]
    assert widths == [15.6, 9.9, 7.0, 4.9, 3.5]
    assert sample_size_paired(0.05, 0.15) == 469
    assert [round(100 * mde_paired(n, 0.15), 1) for n in (50, 100, 200)] == [15.0, 10.7, 7.6]
    # The exact test is conservative: it first reaches 80 % power near 498 pairs.
    assert sample_size_mcnemar_exact(0.05, 0.15) == pytest.approx(498, abs=5)
    assert mcnemar_exact_power(469, 0.05, 0.15) < 0.8


def test_unpaired_sample_size_and_mde_agree() -> None:
    n = sample_size_unpaired(0.85, 0.10)
    assert 0.099 < mde_unpaired(0.85, n) <= 0.10
    z_a, z_b = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    p1, p2 = 0.85, 0.75
    pbar = (p1 + p2) / 2
    expected = (
        z_a * math.sqrt(2 * pbar * (1 - pbar)) + z_b * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    ) ** 2 / 0.01
    assert n == math.ceil(expected)
    with pytest.raises(ValueError):
        sample_size_paired(0.5, 0.1)
