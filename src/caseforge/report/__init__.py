"""Reports: the typed run report built from the store, and its renderings.

Names are imported on first use, so importing one module of the package does not
load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.report.build import build_report as build_report
    from caseforge.report.build import load_report as load_report
    from caseforge.report.model import RunReport as RunReport
    from caseforge.report.render import FORMATS as FORMATS

_WHERE = {
    "build_report": "caseforge.report.build",
    "load_report": "caseforge.report.build",
    "RunReport": "caseforge.report.model",
    "FORMATS": "caseforge.report.render",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.report", _WHERE)
