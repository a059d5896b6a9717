"""The modules that moved from ``caseforge.synth`` to ``caseforge.privacy``, and the warning
their old paths give.

Each old path (``caseforge.synth.verify``) is a shim module left in ``synth/`` for one release:
it re-exports the public names of the new module and, when imported, emits a
``DeprecationWarning`` naming the new path. caseforge's own code imports the new paths only
(``tests/test_no_deprecated_imports.py`` imports every other module with deprecation
warnings as errors).
"""

from __future__ import annotations

import warnings

REMOVED_IN = "0.3.0"

MOVED: dict[str, str] = {
    f"caseforge.synth.{name}": f"caseforge.privacy.{name}"
    for name in (
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
    )
}


def warn_moved(old: str) -> None:
    """Warn that the module ``old`` moved; called by its shim, so the warning points at the
    code that imported the shim."""
    warnings.warn(
        f"{old} moved to {MOVED[old]}; the old path goes in {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=3,
    )
