"""Deprecated: ``caseforge.synth.verify`` moved to ``caseforge.privacy.verify``, and its
``check_structure`` to ``caseforge.synth.contract``.

The old path goes in 0.3.0; until then it re-exports the names of both."""

from caseforge.privacy.verify import *  # noqa: F403
from caseforge.synth._moved import warn_moved
from caseforge.synth.contract import check_structure as check_structure

warn_moved(__name__)
