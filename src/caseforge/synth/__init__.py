"""Synthesis: two-step tuples and drafts, the review queue, identifiers, surrogates,
structure-preserving re-synthesis, its verification, and the private store."""
