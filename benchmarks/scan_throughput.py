"""Scanner throughput and memory: a 10 MB ticket dump and a 1 MB text on one line.

The text is the fictional test corpus (tests/privacy/corpus: sensitive and clean tickets in
four languages, about one identifier every 60 characters) repeated, scanned with the union
of its glossaries. Each workload runs in a fresh process so its peak RSS is its own. Targets
(issue 9): 10 MB in under 10 s, memory bounded on a single 1 MB line.

Figures are CPU seconds (best and worst of three runs: this machine's speed varies by a
third from run to run), and the ratio against the floor measured in the same run: one pass
of Python's ``re`` finding every word (``\\w+``) in the same text, the least any regex
scanner must do.

    python benchmarks/scan_throughput.py
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "privacy" / "corpus"


def corpus_text() -> tuple[str, dict[str, list[str]]]:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    tickets = yaml.load((CORPUS / "sensitive.yaml").read_text(encoding="utf-8"))
    tickets += yaml.load((CORPUS / "clean.yaml").read_text(encoding="utf-8"))
    glossary: dict[str, list[str]] = {}
    for ticket in tickets:
        for cls, values in (ticket.get("glossary") or {}).items():
            glossary.setdefault(cls, []).extend(str(v) for v in values)
    return "\n\n".join(t["text"] for t in tickets) + "\n\n", glossary


def workload(size: int, one_line: bool) -> dict[str, float]:
    from caseforge.privacy.identifiers import Glossary, IdentifierDetector

    base, glossary = corpus_text()
    per_char = len(base.encode("utf-8")) / len(base)
    chars = int(size / per_char)  # ``size`` is in bytes of UTF-8
    text = (base * (chars // len(base) + 1))[:chars]
    if one_line:
        text = text.replace("\n", " ")
    detector = IdentifierDetector(Glossary.from_mapping(glossary))
    detector.scan(base)  # warm: compile the patterns, import OpenCC and the automaton
    runs = []
    for _ in range(3):  # this machine's CPU time varies run to run: report the best
        start = time.process_time()
        spans = detector.scan(text)
        runs.append(time.process_time() - start)
    seconds = min(runs)
    start = time.process_time()
    words = sum(1 for _ in re.finditer(r"\w+", text))
    floor = time.process_time() - start
    return {
        "mb": len(text.encode("utf-8")) / 1e6,
        "chars": len(text),
        "seconds": seconds,
        "worst": max(runs),
        "floor_seconds": floor,
        "spans": len(spans),
        "words": words,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def command_rss(size: int, folder: Path) -> dict[str, float]:
    """``caseforge scan FILE --glossary G`` on a ``size``-byte dump written to disk: its wall
    time and its peak RSS, in a process of its own (what a user runs)."""
    base, glossary = corpus_text()
    data = base.encode("utf-8")
    path = folder / f"dump-{size}.txt"
    with path.open("wb") as handle:
        written = 0
        while written < size:
            chunk = data[: size - written]
            handle.write(chunk)
            written += len(chunk)
    terms = folder / "glossary.json"  # JSON is YAML: load_glossary reads it
    terms.write_text(json.dumps(glossary, ensure_ascii=False), encoding="utf-8")
    probe = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    caseforge = [sys.executable, "-m", "caseforge", "scan", str(path), "--glossary", str(terms)]
    done = subprocess.run(
        [sys.executable, "-c", probe, *caseforge], capture_output=True, text=True, check=True
    )
    wall, rss = done.stdout.split()
    return {"mb": size / 1e6, "wall": float(wall), "peak_rss_mb": int(rss) / 1024}


def main() -> None:
    if len(sys.argv) == 3:
        print(json.dumps(workload(int(sys.argv[1]), sys.argv[2] == "line")))
        return
    print("workload                  MB   best  worst   MB/s   spans  ×floor  peak RSS")
    for label, size, kind in (
        ("10 MB ticket dump", 10_000_000, "text"),
        ("1 MB on a single line", 1_000_000, "line"),
    ):
        out = subprocess.run(
            [sys.executable, __file__, str(size), kind], capture_output=True, text=True, check=True
        )
        r = json.loads(out.stdout)
        print(
            f"{label:24s} {r['mb']:5.1f} {r['seconds']:6.2f} {r['worst']:6.2f} "
            f"{r['mb'] / r['seconds']:6.2f} {r['spans']:7d} "
            f"{r['seconds'] / r['floor_seconds']:7.1f}"
            f"  {r['peak_rss_mb']:.0f} MB"
        )
    print(
        "target: 10 MB in under 10 s; memory bounded on one long line (chunks of 32,768 "
        "characters); CPU seconds, best and worst of 3 runs"
    )
    import tempfile

    print("\n`caseforge scan FILE` (a process of its own)   wall   peak RSS")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [command_rss(size, Path(tmp)) for size in (1_000_000, 10_000_000, 50_000_000)]
    for r in rows:
        print(f"  {r['mb']:4.0f} MB dump{'':32s}{r['wall']:6.1f} s  {r['peak_rss_mb']:5.0f} MB")
    growth = rows[-1]["peak_rss_mb"] / rows[0]["peak_rss_mb"]
    print(
        f"peak RSS 50 MB / 1 MB: {growth:.2f}× (flat is 1.0; target: under 250 MB for 50 MB: "
        f"{'met' if rows[-1]['peak_rss_mb'] < 250 else 'not met'})"
    )


if __name__ == "__main__":
    main()
