"""Synthesis: two-step tuples and drafts, the review queue, identifiers, surrogates,
structure-preserving re-synthesis, its verification, and the private store."""

__all__ = [
    "client",
    "contract",
    "fold",
    "identifiers",
    "outbound",
    "overlap",
    "patterns",
    "policy",
    "pools",
    "private",
    "resynth",
    "review",
    "scan",
    "surrogates",
    "tuples",
    "values",
    "verify",
    "writer",
]
