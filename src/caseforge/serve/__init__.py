"""``caseforge serve``: the local web app over suites and their run stores.

Needs the ``serve`` extra (``pip install 'caseforge[serve]'``).

Names are imported on first use, so importing one module of the package does not
load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.serve.app import create_app as create_app
    from caseforge.serve.catalog import Catalog as Catalog
    from caseforge.serve.security import Guard as Guard

_WHERE = {
    "create_app": "caseforge.serve.app",
    "Catalog": "caseforge.serve.catalog",
    "Guard": "caseforge.serve.security",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.serve", _WHERE)
