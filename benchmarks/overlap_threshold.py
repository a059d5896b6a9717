"""How long a shared run must be before a variant fails: the measurement behind the defaults
(``privacy.cjk_run: 7``, ``privacy.word_run: 6``).

For every honest rewrite and every copied clause of the fictional corpora, the longest run
of Han characters and of words it shares with its source (after the folds of the overlap
check). A threshold n rejects an honest rewrite whose longest shared run is at least n, and
catches a copy whose run is at least n. The printed table is the false-reject rate and the
catch rate per threshold, each a ratio against the ideal (0 and 1).

    python benchmarks/overlap_threshold.py [CORPUS_DIR ...]   # default: the three test corpora
"""

from __future__ import annotations

import sys
from pathlib import Path

from ruamel.yaml import YAML

from caseforge.privacy.overlap import Settings, run_units

ROOT = Path(__file__).resolve().parents[1]


def longest_shared(a: str, b: str) -> tuple[int, int]:
    """(longest shared Han run, longest shared word run) of two texts."""
    best = [0, 0]
    for n in range(2, 30):
        settings = Settings(cjk_run=n, word_run=n)
        left, right = run_units(a, settings), run_units(b, settings)
        found = False
        for index in (0, 1):
            if left[index] & right[index]:  # type: ignore[operator]
                best[index] = n
                found = True
        if not found:
            break
    return best[0], best[1]


def main() -> None:
    corpora = ROOT / "tests" / "privacy"
    folders = [Path(p) for p in sys.argv[1:]] or [
        corpora / name for name in ("corpus", "corpus_b", "corpus_c")
    ]
    yaml = YAML(typ="safe", pure=True)
    honest: list[tuple[str, int, int]] = []
    copies: list[tuple[str, int, int]] = []
    for folder in folders:
        sources = {t["id"]: t for t in yaml.load((folder / "sensitive.yaml").read_text("utf-8"))}
        for variant in yaml.load((folder / "variants.yaml").read_text("utf-8")):
            source = sources[variant["source"]]
            cjk, words = longest_shared(source["text"], variant["text"])
            row = (source["lang"], cjk, words)
            if variant["kind"] == "honest":
                honest.append(row)
            elif variant["kind"] in ("copied_run", "broken_run"):
                copies.append(row)
    han = [r for r in honest if r[0].startswith("zh")]
    latin = [r for r in honest if not r[0].startswith("zh")]
    han_copies = [r for r in copies if r[0].startswith("zh")]
    latin_copies = [r for r in copies if not r[0].startswith("zh")]
    print(f"{len(honest)} honest rewrites, {len(copies)} copied or broken-up clauses")
    print(" n   Han: false rejects  catches    words: false rejects  catches")
    for n in range(4, 11):
        h_fr = sum(r[1] >= n for r in han) / max(1, len(han))
        h_c = sum(r[1] >= n for r in han_copies) / max(1, len(han_copies))
        w_fr = sum(r[2] >= n for r in latin) / max(1, len(latin))
        w_c = sum(r[2] >= n for r in latin_copies) / max(1, len(latin_copies))
        mark = {7: "  ← default for Han", 6: "  ← default for words"}.get(n, "")
        print(
            f"{n:2d}        {h_fr:6.1%}        {h_c:6.1%}            {w_fr:6.1%}       "
            f"{w_c:6.1%}{mark}"
        )
    print(
        "longest shared run, honest: Han "
        f"{max((r[1] for r in han), default=0)}, words {max((r[2] for r in latin), default=0)}; "
        f"shortest copy: Han {min((r[1] for r in han_copies), default=0)}, words "
        f"{min((r[2] for r in latin_copies), default=0)}"
    )


if __name__ == "__main__":
    main()
