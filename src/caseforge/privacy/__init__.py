"""Privacy: finding identifiers (the scanner), folding text and reading values in any
notation, overlap between a rewrite and its original, verifying a rewrite, surrogates, the
privacy policy, the private store, and what a synthesis request may send.

``synth`` (re-synthesis) and ``audit`` (leaks) build on it; it imports neither."""

__all__ = [
    "fold",
    "identifiers",
    "outbound",
    "overlap",
    "patterns",
    "policy",
    "pools",
    "private",
    "scan",
    "surrogates",
    "values",
    "verify",
]
