"""What each `caseforge` command costs before it does anything, against a bare interpreter.

Each figure is the median of --repeat fresh processes, measured alternately with `python -c
pass` in the same run; beside it, how many modules the command imported. Measured:
`caseforge --version`, `caseforge --help`, every command's own `--help` (which imports
that command's module and nothing else), and `caseforge validate` of the starter suite
`caseforge init` writes.

Targets (a quiet machine): `--version` within 0.15 s of the bare interpreter; `validate`
of the starter suite under 0.6 s.

Usage: python benchmarks/startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from caseforge.cli.root import COMMANDS

COUNT = """
import contextlib, io, json, sys
sys.argv = ["caseforge", *json.loads(sys.argv[1])]
from caseforge.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(len(sys.modules))
"""


def wall(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=False)
    return time.perf_counter() - started


def modules(args: list[str]) -> int:
    done = subprocess.run(
        [sys.executable, "-c", COUNT, json.dumps(args)], capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    caseforge = [sys.executable, "-m", "caseforge"]
    bare = [sys.executable, "-c", "pass"]
    with tempfile.TemporaryDirectory() as tmp:
        starter = str(Path(tmp) / "starter")
        subprocess.run([*caseforge, "init", starter], capture_output=True, check=True)
        cases: list[tuple[str, list[str]]] = [
            ("--version", ["--version"]),
            ("--help", ["--help"]),
            ("validate (starter suite)", ["validate", starter]),
        ] + [(f"{name} --help", [name, "--help"]) for name in COMMANDS]
        floor: list[float] = []
        times: dict[str, list[float]] = {label: [] for label, _ in cases}
        for _ in range(options.repeat):
            for label, args in cases:
                floor.append(wall(bare))
                times[label].append(wall([*caseforge, *args]))
        base = statistics.median(floor)
        print(f"python -c pass: {base * 1000:.0f} ms (median of {len(floor)})")
        print(f"{'command':28} {'wall':>8} {'over bare':>10} {'modules':>8}")
        for label, args in cases:
            took = statistics.median(times[label])
            print(f"{label:28} {took * 1000:6.0f} ms {(took - base) * 1000:7.0f} ms "
                  f"{modules(args):8d}")  # fmt: skip
        version = statistics.median(times["--version"]) - base
        validate = statistics.median(times["validate (starter suite)"])
        print(f"targets: --version {version:.3f} s over bare (≤ 0.15: "
              f"{'met' if version <= 0.15 else 'NOT met'}); validate {validate:.3f} s (< 0.6: "
              f"{'met' if validate < 0.6 else 'NOT met'})")  # fmt: skip


if __name__ == "__main__":
    main()
