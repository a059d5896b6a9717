"""Synthesis: two-step tuples and drafts, the review queue, the model synthesis uses, and
structure-preserving re-synthesis with its structure contract.

What keeps re-synthesis private (the scanner, surrogates, the overlap check, verification,
the private store) is ``caseforge.privacy``."""

__all__ = [
    "client",
    "contract",
    "resynth",
    "review",
    "tuples",
    "writer",
]
