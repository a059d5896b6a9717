"""`python -m caseforge` in a process of its own: a shard, a separate store, another user,
or a defect that only shows in a real process (an exit, a signal, peak memory)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

# Generous: a hang fails the test, a busy machine does not (`make test-loaded`).
TIMEOUT_S = 600


def caseforge_process(
    *argv: str,
    env: Mapping[str, str | None] | None = None,
    prefix: Sequence[str] = (),
    cwd: Path | str | None = None,
    timeout: float = TIMEOUT_S,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m caseforge ARGV...`` and return it finished, its output as text.

    ``PYTHONPATH`` is the checkout, so a suite's ``tests.run.toy_agent:run`` imports. ``env``
    changes this process's environment for the child (a ``None`` value removes a variable);
    ``prefix`` goes before the interpreter (``setpriv`` to another user). The exit code is
    the caller's to assert: it never raises for one.
    """
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for key, value in (env or {}).items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    return subprocess.run(
        [*prefix, sys.executable, "-m", "caseforge", *argv],
        env=environment,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
