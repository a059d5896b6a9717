"""Item counts of one ``exact_set`` field: true and false positives, false negatives.

Apart from ``paired.py`` (which needs NumPy), so grading can count items without loading it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ItemCounts:
    """One case's item counts (summed over its trials) for one ``exact_set`` field."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: ItemCounts) -> ItemCounts:
        return ItemCounts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)
