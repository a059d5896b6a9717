"""Deprecated: ``caseforge.synth.fold`` moved to ``caseforge.privacy.fold``.

The old path goes in 0.3.0; until then it re-exports the new module's names."""

from caseforge.privacy.fold import *  # noqa: F403
from caseforge.synth._moved import warn_moved

warn_moved(__name__)
