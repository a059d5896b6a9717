"""Deprecated: ``caseforge.synth.overlap`` moved to ``caseforge.privacy.overlap``.

The old path goes in 0.3.0; until then it re-exports the new module's names."""

from caseforge.privacy.overlap import *  # noqa: F403
from caseforge.synth._moved import warn_moved

warn_moved(__name__)
