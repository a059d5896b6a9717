"""Reports: the typed run report built from the store, and its renderings."""

from caseforge.report.build import build_report, load_report
from caseforge.report.model import RunReport
from caseforge.report.render import FORMATS

__all__ = ["FORMATS", "RunReport", "build_report", "load_report"]
