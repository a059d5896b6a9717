"""What the corpus tests share: a corpus file read, a benchmark script loaded as a module
(the benchmarks are scripts, not a package), and the checks every blind corpus is held to."""

from __future__ import annotations

import collections
import importlib.util
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[2]


def load(folder: Path, name: str) -> list[dict[str, Any]]:
    return list(YAML(typ="safe", pure=True).load((folder / name).read_text(encoding="utf-8")))


def benchmark(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_blind_corpus(folder: Path, min_items: int) -> None:
    """A blind corpus of issue 24 holds what its brief asked: 40 logs, 10 a language, at least
    ``min_items`` private items in 15 classes each found in its log, one honest and three
    disguised rewrites a log whose disguised item is in it and whose original is in the
    source, and 8 clean logs."""
    logs, clean, variants = (
        load(folder, n) for n in ("sensitive.yaml", "clean.yaml", "variants.yaml")
    )
    assert collections.Counter(log["lang"] for log in logs) == {
        "zh-TW": 10,
        "zh-CN": 10,
        "vi": 10,
        "en": 10,
    }
    classes = collections.Counter(cls for log in logs for cls, _ in log["identifiers"])
    assert sum(classes.values()) >= min_items and len(classes) >= 15
    for log in logs:
        for cls, value in log["identifiers"]:
            assert str(value) in log["text"], (log["id"], cls, value)
    by_id = {log["id"]: log for log in logs}
    kinds = collections.Counter(v["kind"] for v in variants)
    assert kinds["honest"] == 40 and sum(kinds.values()) == 160
    for variant in variants:
        if variant["kind"] != "honest":
            assert variant["disguised"] in variant["text"], variant["source"]
            assert variant["of"] in by_id[variant["source"]]["text"], variant["source"]
    assert len(clean) == 8 and all(log["identifiers"] == [] for log in clean)


def check_no_worse(folder: Path, pinned: dict[str, int]) -> None:
    """Scan, verify and the audit on ``folder`` do no worse than the ``pinned`` figures."""
    figures = benchmark("privacy_corpus").measure(folder)
    assert figures["scan_with_glossary"]["found"] >= pinned["scan_with_glossary"]
    assert figures["verify_with_glossary"]["caught"] >= pinned["caught_with_glossary"]
    assert figures["verify_without_glossary"]["caught"] >= pinned["caught_without_glossary"]
    with_glossary = len(figures["verify_with_glossary"]["honest_rejected"])
    without = len(figures["verify_without_glossary"]["honest_rejected"])
    assert with_glossary <= pinned["honest_rejected_with_glossary"]
    assert without <= pinned["honest_rejected_without_glossary"]


def check_audit_no_worse(folder: Path, pinned: dict[str, int]) -> None:
    result = benchmark("audit_recall").measure(folder)
    assert result["found"] >= pinned["audit_found"]
    assert len(result["false_alarms"]) <= pinned["audit_false_alarms"]
