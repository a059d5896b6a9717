"""Human labels for judge checks, kept in the suite (``SUITE/labels/<case_id>.yaml``) and
reviewed like code.

```yaml
case: edge-customer-wrong-c012
items:
  - check: facts
    output: "您好，我们查了您最近的账单……"
    source: {run: 20261129-180139-6b2225, trial: 1, config: v2}
    labeler: example-author
    labeled_at: 2026-11-29
    labels: {查询后未发现重复扣款: conveyed, 不会提交退款申请: missing}
```
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from caseforge.case.load import read_yaml
from caseforge.case.positions import yaml_validation_problems
from caseforge.errors import CaseforgeError
from caseforge.files import write_yaml

LABELS_DIR = "labels"
Verdict = Literal["conveyed", "missing", "contradicted"]
VERDICTS: tuple[str, ...] = ("conveyed", "missing", "contradicted")


class LabeledOutput(BaseModel):
    """One agent output, labeled fact by fact by a person."""

    model_config = ConfigDict(extra="forbid")

    check: str = Field(description="The judge check (its key under expect).")
    output: str
    source: dict[str, object] = Field(default_factory=dict)
    labeler: str = ""
    labeled_at: dt.date | None = None
    labels: dict[str, Verdict]

    def digest(self) -> str:
        return hashlib.sha256(f"{self.check}\n{self.output}".encode()).hexdigest()[:16]


class CaseLabels(BaseModel):
    model_config = ConfigDict(extra="forbid")

    case: str
    items: list[LabeledOutput] = Field(default_factory=list)


def labels_dir(suite_dir: Path) -> Path:
    return suite_dir / LABELS_DIR


def load_labels(suite_dir: Path) -> list[CaseLabels]:
    """Every labels file of a suite (a malformed one is a one-line located error)."""
    folder = labels_dir(suite_dir)
    result = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        text, data = read_yaml(path)
        try:
            result.append(CaseLabels.model_validate(data))
        except ValidationError as exc:
            raise CaseforgeError(yaml_validation_problems(path, text, exc, None)) from None
    return result


def save_item(suite_dir: Path, case_id: str, item: LabeledOutput) -> Path:
    """Append one labeled output to the case's labels file (atomically)."""
    path = labels_dir(suite_dir) / f"{case_id}.yaml"
    existing = CaseLabels(case=case_id)
    if path.is_file():
        _, data = read_yaml(path)
        existing = CaseLabels.model_validate(data)
    existing.items.append(item)
    write_yaml(path, existing.model_dump(mode="json", exclude_defaults=True))
    return path
