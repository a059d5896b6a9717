"""The modules that moved from ``caseforge.synth`` to ``caseforge.privacy``: each old path
still imports for one release, re-exports the new module's names, and warns once, naming the
new path and the release that removes the old one, at the line that imported it."""

from __future__ import annotations

import importlib
import sys

import pytest

from caseforge.case.identity import SuiteIdentity as PortableSuiteIdentity
from caseforge.privacy.private import PrivateStoreKey, private_store_key
from caseforge.synth._moved import MOVED
from caseforge.synth.contract import check_structure

SHIMS = sorted(MOVED.items())


def test_every_module_that_left_synth_has_a_shim() -> None:
    moved = ("identifiers", "patterns", "fold", "values", "overlap", "verify", "surrogates")
    moved += ("pools", "policy", "private", "scan", "outbound")
    assert sorted(MOVED) == sorted(f"caseforge.synth.{name}" for name in moved)
    assert all(new == old.replace(".synth.", ".privacy.") for old, new in SHIMS)


@pytest.mark.parametrize(("old", "new"), SHIMS)
def test_each_shim_warns_and_re_exports_the_new_modules_names(old: str, new: str) -> None:
    module = importlib.import_module(new)
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning) as caught:
        __import__(old)  # as an import statement does: the warning names this file
    shim = sys.modules[old]
    assert [str(w.message) for w in caught] == [f"{old} moved to {new}; the old path goes in 0.3.0"]
    assert caught[0].filename == __file__
    names = getattr(module, "__all__", None) or [n for n in vars(module) if n[0] != "_"]
    assert len(names) > 3
    assert [n for n in names if getattr(shim, n, None) is not getattr(module, n)] == []


def test_the_verify_and_private_shims_keep_the_names_that_moved_elsewhere() -> None:
    with pytest.warns(DeprecationWarning):
        sys.modules.pop("caseforge.synth.verify", None)
        from caseforge.synth.verify import check_structure as old_check_structure
    assert old_check_structure is check_structure
    with pytest.warns(DeprecationWarning):
        sys.modules.pop("caseforge.synth.private", None)
        from caseforge.synth.private import SuiteIdentity, suite_identity
    assert SuiteIdentity is PrivateStoreKey and suite_identity is private_store_key
    assert SuiteIdentity is not PortableSuiteIdentity
