"""Near-duplicate detection: exact pairs, and MinHash LSH confirmed against them."""

from __future__ import annotations

import random

from caseforge.case.neardup import exact_pairs, jaccard, lsh_pairs, near_duplicates, shingles


def planted(n_base: int, n_dupes: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    alphabet = [chr(c) for c in range(0x4E00, 0x4E00 + 2000)]
    base = [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(40, 90))) for _ in range(n_base)
    ]
    texts = list(base)
    for i in range(n_dupes):
        chars = list(base[i])
        chars[rng.randrange(len(chars))] = rng.choice(alphabet)  # one character changed
        texts.append("".join(chars))
    return texts


def test_shingles_ignore_whitespace_and_handle_short_text() -> None:
    assert shingles("ab c d") == {"abc", "bcd"}
    assert shingles("ab") == {"ab"}
    assert shingles("   ") == set()
    assert jaccard(set(), set()) == 0.0
    assert jaccard({"a", "b"}, {"b", "c"}) == 1 / 3


def test_exact_pairs_match_brute_force() -> None:
    texts = planted(60, 10)
    found = {(d.a, d.b) for d in exact_pairs(texts, 0.8)}
    brute = {
        (i, j)
        for i in range(len(texts))
        for j in range(i + 1, len(texts))
        if jaccard(shingles(texts[i]), shingles(texts[j])) >= 0.8
    }
    assert found == brute
    assert len(found) == 10


def test_lsh_finds_the_planted_pairs_and_reports_no_false_ones() -> None:
    texts = planted(400, 40)
    exact = {(d.a, d.b) for d in exact_pairs(texts, 0.8)}
    approx = {(d.a, d.b) for d in lsh_pairs(texts, 0.8)}
    assert approx <= exact  # every reported pair is confirmed exactly
    assert len(approx) >= 0.95 * len(exact)


def test_near_duplicates_switches_to_lsh_above_the_limit() -> None:
    texts = planted(50, 5)
    assert {(d.a, d.b) for d in near_duplicates(texts, exact_max=10)} == {
        (d.a, d.b) for d in near_duplicates(texts, exact_max=1000)
    }
