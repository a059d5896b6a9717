"""Deprecated: ``caseforge.synth.values`` moved to ``caseforge.privacy.values``.

The old path goes in 0.3.0; until then it re-exports the new module's names."""

from caseforge.privacy.values import *  # noqa: F403
from caseforge.synth._moved import warn_moved

warn_moved(__name__)
