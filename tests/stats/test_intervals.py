"""Intervals and estimators against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest

from caseforge.stats import clustered_se, pass_at_k, pass_hat_k, wilson_interval, z_value


def test_wilson_17_of_20() -> None:
    lo, hi = wilson_interval(17, 20)
    assert lo == pytest.approx(0.6396, abs=1e-4) and hi == pytest.approx(0.9476, abs=1e-4)


def test_wilson_edges_stay_inside_0_1() -> None:
    assert wilson_interval(0, 10)[0] == pytest.approx(0.0, abs=1e-12)
    assert wilson_interval(0, 10)[1] > 0.2
    assert wilson_interval(10, 10)[1] == 1.0 and wilson_interval(10, 10)[0] < 0.8
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_clustered_se_from_the_notes() -> None:
    # cases [1,1,1], [1,1,0], [0,0,0], [1,0,0]: naive SE 0.1443, clustered 0.2152
    means = [1.0, 2 / 3, 0.0, 1 / 3]
    assert clustered_se(means) == pytest.approx(0.2152, abs=1e-4)
    naive = math.sqrt(0.5 * 0.5 / 12)
    assert naive == pytest.approx(0.1443, abs=1e-4)
    assert clustered_se([1.0]) == 0.0


def test_pass_hat_k_and_pass_at_k_by_hand() -> None:
    assert pass_hat_k(3, 2, 2) == pytest.approx(1 / 3)  # C(2,2)/C(3,2)
    assert pass_hat_k(8, 6, 3) == pytest.approx(0.3571, abs=1e-4)  # 20/56
    assert pass_hat_k(3, 1, 2) == 0.0
    assert pass_at_k(10, 3, 5) == pytest.approx(0.9167, abs=1e-4)  # 1 - C(7,5)/C(10,5)
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)
    assert pass_at_k(3, 0, 3) == 0.0 and pass_at_k(3, 1, 3) == 1.0
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)


def test_z_value() -> None:
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
