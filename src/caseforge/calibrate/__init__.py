"""Calibrating the LLM judge against human labels: labels, agreement, κ, bias probes.

Names are imported on first use (the calibration itself loads the model client).
"""

from __future__ import annotations

import importlib
from typing import Any

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


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'caseforge.calibrate' has no attribute {name!r}")
    return getattr(importlib.import_module(f"caseforge.calibrate.{_WHERE[name]}"), name)
