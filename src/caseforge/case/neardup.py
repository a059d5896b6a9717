"""Near-duplicate tickets: character n-gram Jaccard similarity.

Small suites compare every pair exactly. Large ones use MinHash LSH (datasketch) to find
candidate pairs, then confirm each candidate with the exact Jaccard, so a reported pair is
always a true near-duplicate and only recall depends on the LSH. The LSH threshold is set
below the reporting threshold to keep that recall high.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class NearDuplicate:
    """Two inputs (by index) whose n-gram Jaccard similarity reaches the threshold."""

    a: int
    b: int
    similarity: float


def shingles(text: str, n: int = 3) -> set[str]:
    """Character n-grams of ``text`` with whitespace removed (CJK has no word boundaries)."""
    compact = "".join(text.split())
    if len(compact) <= n:
        return {compact} if compact else set()
    return {compact[i : i + n] for i in range(len(compact) - n + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def exact_pairs(texts: Sequence[str], threshold: float, n: int = 3) -> list[NearDuplicate]:
    """All pairs with Jaccard ≥ ``threshold``, by comparing every pair (O(N²))."""
    grams = [shingles(t, n) for t in texts]
    sizes = [len(g) for g in grams]
    found = []
    for i in range(len(grams)):
        gi, si = grams[i], sizes[i]
        if not si:
            continue
        for j in range(i + 1, len(grams)):
            sj = sizes[j]
            # Jaccard ≤ min/max of the sizes: skip pairs that cannot reach the threshold.
            if not sj or min(si, sj) < threshold * max(si, sj):
                continue
            inter = len(gi & grams[j])
            sim = inter / (si + sj - inter)
            if sim >= threshold:
                found.append(NearDuplicate(i, j, sim))
    return found


def _hash32(gram: bytes) -> int:
    # CRC-32: fast, in C, and the same in every process (unlike hash()), so results repeat.
    return zlib.crc32(gram)


def lsh_pairs(
    texts: Sequence[str],
    threshold: float,
    n: int = 3,
    num_perm: int = 64,
    lsh_threshold: float | None = None,
) -> list[NearDuplicate]:
    """Pairs with Jaccard ≥ ``threshold``, found by MinHash LSH and confirmed exactly."""
    from datasketch import LeanMinHash, MinHash, MinHashLSH  # only large suites need it

    lsh_threshold = lsh_threshold if lsh_threshold is not None else max(0.05, threshold - 0.15)
    lsh = MinHashLSH(threshold=lsh_threshold, num_perm=num_perm)
    sketches: list[object | None] = []
    for index, text in enumerate(texts):
        grams = shingles(text, n)
        if not grams:
            sketches.append(None)
            continue
        minhash = MinHash(num_perm=num_perm, seed=1, hashfunc=_hash32)
        minhash.update_batch([g.encode("utf-8") for g in grams])
        lean = LeanMinHash(minhash)
        lsh.insert(index, lean, check_duplication=False)
        sketches.append(lean)
    found: list[NearDuplicate] = []
    seen: set[tuple[int, int]] = set()
    for index, sketch in enumerate(sketches):
        if sketch is None:
            continue
        for other in lsh.query(sketch):
            pair = (min(index, other), max(index, other))
            if other == index or pair in seen:
                continue
            seen.add(pair)
            sim = jaccard(shingles(texts[pair[0]], n), shingles(texts[pair[1]], n))
            if sim >= threshold:
                found.append(NearDuplicate(pair[0], pair[1], sim))
    found.sort(key=lambda d: (d.a, d.b))
    return found


def near_duplicates(
    texts: Sequence[str], threshold: float = 0.8, n: int = 3, exact_max: int = 1000
) -> list[NearDuplicate]:
    """Near-duplicate pairs: exact for up to ``exact_max`` texts, MinHash LSH above that.

    All pairs costs about 1 s per 1,000 texts squared on a small machine; LSH is linear.
    """
    if len(texts) <= exact_max:
        return exact_pairs(texts, threshold, n)
    return lsh_pairs(texts, threshold, n)
