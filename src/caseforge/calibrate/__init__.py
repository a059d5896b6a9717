"""Calibrating the LLM judge against human labels: labels, agreement, κ, bias probes."""

from caseforge.calibrate.agreement import Agreement, cohen_kappa
from caseforge.calibrate.calibrate import CalibrationResult, calibrate, calibration_text
from caseforge.calibrate.labels import CaseLabels, LabeledOutput, load_labels, save_item

__all__ = [
    "Agreement",
    "CalibrationResult",
    "CaseLabels",
    "LabeledOutput",
    "calibrate",
    "calibration_text",
    "cohen_kappa",
    "load_labels",
    "save_item",
]
