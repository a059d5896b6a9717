"""Deprecated: ``caseforge.synth.private`` moved to ``caseforge.privacy.private``.

The old path goes in 0.3.0; until then it re-exports the new module's names, and the private
store's key under its old names: ``SuiteIdentity`` is ``PrivateStoreKey`` and
``suite_identity`` is ``private_store_key`` (the suite's identity that runs and reports carry
is ``case.identity.SuiteIdentity``)."""

from caseforge.privacy.private import *  # noqa: F403
from caseforge.privacy.private import PrivateStoreKey, private_store_key
from caseforge.synth._moved import warn_moved

SuiteIdentity = PrivateStoreKey
suite_identity = private_store_key

warn_moved(__name__)
