"""The leak audit's time on this repository, before and after a change (issue 24's budget:
at most 2× its time before the issue).

A private store for examples/support-refund holds one sensitive case (a chat log of
tests/privacy/corpus_d, so the audit has names, amounts, dates and ids to search for), and
``caseforge audit examples/support-refund --private STORE`` runs over the repository and its
whole history, at HEAD and at ``--before COMMIT`` (a worktree of it), alternating, median
of 3.

    python benchmarks/audit_time.py --before cd0dcf3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]


def make_store(base: Path, source: Path) -> None:
    """The store as caseforge keys it for the suite at ``source``'s examples/support-refund."""
    sys.path.insert(0, str(source / "src"))
    from caseforge.privacy.private import PrivateStore

    log = YAML(typ="safe", pure=True).load(
        (ROOT / "tests" / "privacy" / "corpus_d" / "sensitive.yaml").read_text(encoding="utf-8")
    )[0]
    store = PrivateStore.for_suite(source / "examples" / "support-refund", "support-refund", base)
    text = log["text"].replace("'", "''")
    store.write(
        "cases/chat-001.yaml",
        f"id: chat-001\ninput:\n  log: '{text}'\nexpect:\n  x: {{mode: exact, value: 1}}\n",
    )


def timed(source: Path, store: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(source / "src")}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "caseforge", "audit", "examples/support-refund", "--private",
         str(store)],
        cwd=source, env=env, capture_output=True, check=False,
    )  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the commit to compare with")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(before), args.before],
                       cwd=ROOT, check=True)  # fmt: skip
        try:
            store = Path(tmp) / "private"
            make_store(store, ROOT)
            times: dict[str, list[float]] = {"before": [], "now": []}
            for _ in range(args.repeat):
                times["before"].append(timed(before, store))
                times["now"].append(timed(ROOT, store))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=ROOT,
                           check=False)  # fmt: skip
    old, new = statistics.median(times["before"]), statistics.median(times["now"])
    print(f"caseforge audit examples/support-refund: {args.before} {old:.2f} s, HEAD {new:.2f} s")
    print(f"ratio {new / old:.2f}× (budget ≤ 2×: {'met' if new / old <= 2 else 'not met'})")


if __name__ == "__main__":
    main()
