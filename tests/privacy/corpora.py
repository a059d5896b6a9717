"""What the corpus tests share: a corpus file read, and a benchmark script loaded as a module
(the benchmarks are scripts, not a package)."""

from __future__ import annotations

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
