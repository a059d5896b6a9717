"""A small suite written from Python values: ``caseforge.yaml`` and one file per case, each
as JSON (which is YAML), so a test states exactly what it needs."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def write_toy_suite(
    root: Path,
    cases: Iterable[dict[str, Any]],
    config: Mapping[str, Any],
    *,
    expect: Mapping[str, Any] | None = None,
    files: Mapping[str, str] | None = None,
) -> Path:
    """Write ``root/caseforge.yaml`` (``config``) and ``root/cases/ID.yaml`` per case.

    A case without ``expect`` is given ``expect`` (set on the caller's dict, as the runner
    tests read it back). ``files`` (an agent's module, ``oracles.py``) are written as given,
    beside ``caseforge.yaml``. Returns ``root``.
    """
    (root / "cases").mkdir(parents=True, exist_ok=True)
    (root / "caseforge.yaml").write_text(json.dumps(dict(config)), encoding="utf-8")
    for case in cases:
        if expect is not None:
            case.setdefault("expect", copy.deepcopy(dict(expect)))
        (root / "cases" / f"{case['id']}.yaml").write_text(
            json.dumps(case, ensure_ascii=False), encoding="utf-8"
        )
    for name, text in (files or {}).items():
        (root / name).write_text(text, encoding="utf-8")
    return root
