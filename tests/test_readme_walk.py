"""The README's "Your own agent" block, run as written: init → run → show → baseline → gate.

A newcomer's walk must take those commands and nothing else, so the test takes them from the
README itself and runs them in an empty folder, stopping at the first that fails."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def walk_block() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Your own agent\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert match, "the section starts with a sh block"
    return match.group(1)


def test_the_walk_starts_from_init_and_ends_with_a_gate() -> None:
    commands = [line.split("#")[0].strip() for line in walk_block().splitlines()]
    commands = [c for c in commands if c]
    assert commands[0].startswith("caseforge init ")
    assert any(c.startswith("caseforge run ") for c in commands)
    assert any(c.startswith("caseforge baseline ") for c in commands)
    assert commands[-2].startswith("caseforge gate ") or commands[-1].startswith("caseforge gate ")


def test_the_readme_walk_runs_as_written(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CASEFORGE_STORE"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    script = "set -euo pipefail\n" + walk_block()
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "fully passing cases  1 of 2" in done.stdout
    assert "[fail] reply.must_include (must_include)" in done.stdout
    assert "gate: pass" in done.stdout
    assert "3 passed" in done.stdout  # the suite's pin tests
    assert "Traceback" not in done.stdout + done.stderr
