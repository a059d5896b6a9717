"""``caseforge serve``: the local web app over suites and their run stores.

Needs the ``serve`` extra (``pip install 'caseforge[serve]'``)."""

from caseforge.serve.app import create_app
from caseforge.serve.catalog import Catalog
from caseforge.serve.security import Guard

__all__ = ["Catalog", "Guard", "create_app"]
