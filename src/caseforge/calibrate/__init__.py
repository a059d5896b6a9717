"""Calibrating the LLM judge against human labels: labels, agreement, κ, bias probes.

Names are imported on first use (the calibration itself loads the model client).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.calibrate.agreement import Agreement as Agreement
    from caseforge.calibrate.agreement import cohen_kappa as cohen_kappa
    from caseforge.calibrate.calibrate import CalibrationResult as CalibrationResult
    from caseforge.calibrate.calibrate import calibrate as calibrate
    from caseforge.calibrate.calibrate import calibration_text as calibration_text
    from caseforge.calibrate.labels import CaseLabels as CaseLabels
    from caseforge.calibrate.labels import LabeledOutput as LabeledOutput
    from caseforge.calibrate.labels import load_labels as load_labels
    from caseforge.calibrate.labels import save_item as save_item

_WHERE = {
    "Agreement": "agreement",
    "cohen_kappa": "agreement",
    "CalibrationResult": "calibrate",
    "calibrate": "calibrate",
    "calibration_text": "calibrate",
    "CaseLabels": "labels",
    "LabeledOutput": "labels",
    "load_labels": "labels",
    "save_item": "labels",
}

__all__ = sorted(_WHERE)


__getattr__ = lazy_names(
    "caseforge.calibrate",
    {name: f"caseforge.calibrate.{module}" for name, module in _WHERE.items()},
)
