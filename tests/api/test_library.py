"""The docs' library example (docs/how-to/library.md) runs as written, and the public API is
what ``caseforge.__all__`` says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import caseforge

ROOT = Path(__file__).parents[2]


PAGE = ROOT / "docs" / "how-to" / "library.md"


def _example() -> str:
    page = PAGE.read_text(encoding="utf-8")
    return page.split("```python\n", 1)[1].split("```", 1)[0]


def _what_the_page_says_it_prints() -> list[str]:
    after = PAGE.read_text(encoding="utf-8").split(_example(), 1)[1]
    return after.split("```text\n", 1)[1].split("```", 1)[0].splitlines()


def test_the_docs_library_example_runs_offline_and_gates_the_regression(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CASEFORGE"))}
    done = subprocess.run(
        [sys.executable, "-c", _example()],
        cwd=ROOT,
        env={**env, "CASEFORGE_STORE": f"sqlite:///{tmp_path / 'unused.db'}"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("support-refund: ")
    assert lines[-1] == "gate: regression"
    assert "newly failing" in lines[2]
    assert lines == _what_the_page_says_it_prints()


@pytest.mark.parametrize("name", caseforge.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(caseforge, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = caseforge.nope  # type: ignore[attr-defined]
