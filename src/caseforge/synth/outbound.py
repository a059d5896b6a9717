"""Deprecated: ``caseforge.synth.outbound`` moved to ``caseforge.privacy.outbound``.

The old path goes in 0.3.0; until then it re-exports the new module's names."""

from caseforge.privacy.outbound import *  # noqa: F403
from caseforge.synth._moved import warn_moved

warn_moved(__name__)
