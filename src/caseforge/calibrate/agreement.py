"""Agreement between two raters: raw agreement, Cohen's κ and the confusion matrix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Agreement:
    n: int
    agreement: float | None
    kappa: float | None
    labels: tuple[str, ...]
    confusion: list[list[int]]  # rows: first rater (people), columns: second (the judge)


def cohen_kappa(first: Sequence[str], second: Sequence[str], labels: Sequence[str]) -> Agreement:
    """κ = (p_o − p_e) / (1 − p_e), with p_e from the two raters' marginals."""
    if len(first) != len(second):
        raise ValueError("both raters must rate the same items")
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    matrix = [[0] * k for _ in range(k)]
    for a, b in zip(first, second, strict=True):
        matrix[index[a]][index[b]] += 1
    n = len(first)
    if n == 0:
        return Agreement(0, None, None, tuple(labels), matrix)
    observed = sum(matrix[i][i] for i in range(k)) / n
    rows = [sum(matrix[i]) / n for i in range(k)]
    cols = [sum(matrix[i][j] for i in range(k)) / n for j in range(k)]
    expected = sum(rows[i] * cols[i] for i in range(k))
    kappa = 1.0 if expected == 1 else (observed - expected) / (1 - expected)
    return Agreement(n, observed, kappa, tuple(labels), matrix)
