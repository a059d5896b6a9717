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

``caseforge label`` and the web app's label screen (of one server or several) write these
files through :func:`save_item`: a read-modify-write under a lock on the file (a file in
``.caseforge/locks/``, as the review queue's), so no labeller's edit overwrites another's,
and an output someone labeled meanwhile is refused rather than labeled twice.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeGuard

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from caseforge.case.load import read_yaml
from caseforge.case.positions import yaml_validation_problems
from caseforge.errors import CaseforgeError, UsageError
from caseforge.files import write_yaml
from caseforge.paths import ensure_state_dir, suite_paths

LABELS_DIR = "labels"
LOCK_WAIT_S = 10.0
# A person's label on one fact (not a check's Verdict, which is a grading result).
LabelVerdict = Literal["conveyed", "missing", "contradicted"]
VERDICTS: tuple[LabelVerdict, ...] = ("conveyed", "missing", "contradicted")


def is_label_verdict(value: object) -> TypeGuard[LabelVerdict]:
    """Whether ``value`` is one of the labels a person may give a fact."""
    return value in VERDICTS


class LabeledOutput(BaseModel):
    """One agent output, labeled fact by fact by a person."""

    model_config = ConfigDict(extra="forbid")

    check: str = Field(description="The judge check (its key under expect).")
    output: str
    source: dict[str, object] = Field(default_factory=dict)
    labeler: str = ""
    labeled_at: dt.date | None = None
    labels: dict[str, LabelVerdict]

    def digest(self) -> str:
        return hashlib.sha256(f"{self.check}\n{self.output}".encode()).hexdigest()[:16]


class CaseLabels(BaseModel):
    model_config = ConfigDict(extra="forbid")

    case: str
    items: list[LabeledOutput] = Field(default_factory=list)


def labels_dir(suite_dir: Path) -> Path:
    return suite_dir / LABELS_DIR


def load_labels(suite_dir: Path, problems: list[str] | None = None) -> list[CaseLabels]:
    """Every labels file of a suite (a malformed one is a one-line located error; given
    ``problems``, it is added there and left out instead, as the web app shows it)."""
    folder = labels_dir(suite_dir)
    result = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            text, data = read_yaml(path)
            try:
                result.append(CaseLabels.model_validate(data))
            except ValidationError as exc:
                raise CaseforgeError(yaml_validation_problems(path, text, exc, None)) from None
        except CaseforgeError as exc:
            if problems is None:
                raise
            problems.append(exc.text)
    return result


class AlreadyLabeledError(UsageError):
    """The output was labeled meanwhile, by another labeller or another server."""


def save_item(suite_dir: Path, case_id: str, item: LabeledOutput) -> Path:
    """Append one labeled output to the case's labels file: read, append, write (atomically)
    under the file's lock. An output of the same check the file holds already is refused
    (:class:`AlreadyLabeledError`, naming who labeled it)."""
    path = labels_dir(suite_dir) / f"{case_id}.yaml"
    with labels_lock(path, suite_dir):
        existing = CaseLabels(case=case_id)
        if path.is_file():
            text, data = read_yaml(path)
            try:
                existing = CaseLabels.model_validate(data)
            except ValidationError as exc:  # never appended to: fix the file first
                raise CaseforgeError(yaml_validation_problems(path, text, exc, None)) from None
        digest = item.digest()
        done = next((i for i in existing.items if i.digest() == digest), None)
        if done is not None:
            by = f" by {done.labeler}" if done.labeler else ""
            raise AlreadyLabeledError(
                f"{path}: this output of {case_id}.{item.check} was already labeled{by}"
            )
        existing.items.append(item)
        write_yaml(path, existing.model_dump(mode="json", exclude_defaults=True))
    return path


@contextmanager
def labels_lock(path: Path, suite_dir: Path) -> Iterator[None]:
    """Hold the lock on one labels file (a file under the suite's ``.caseforge/locks/``, so
    it never shows in git); another holder makes this wait, then fail in one line."""
    folder = suite_paths(suite_dir).state
    ensure_state_dir(folder)
    (folder / "locks").mkdir(exist_ok=True)
    name = hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:16]
    lock = FileLock(folder / "locks" / f"labels-{name}.lock", timeout=LOCK_WAIT_S)
    try:
        lock.acquire()
    except Timeout:
        raise CaseforgeError(
            f"{path}: another labeller is writing it (waited {LOCK_WAIT_S:.0f} s); try again"
        ) from None
    try:
        yield
    finally:
        lock.release()
