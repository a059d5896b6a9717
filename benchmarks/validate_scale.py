"""How `caseforge validate` scales, and how well the near-duplicate detector recalls.

Prints:
  (a) 100,000 generated cases in one JSONL file: wall time and peak RSS of validate
      (targets: under 60 s, under 1 GB);
  (b) 10,000 one-per-file YAML cases: wall time (target: under 15 s);
  (c) the MinHash LSH detector's recall against exact Jaccard on a planted sample
      (target: at least 0.95), and its speed-up over comparing every pair.

Each validate runs in a fresh process (`python -m caseforge validate --json`) so its peak
RSS is its own. Usage: python benchmarks/validate_scale.py [--jsonl N] [--yaml N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from caseforge.case.neardup import exact_pairs, jaccard, lsh_pairs, shingles

PHRASES = [
    "我上个月",
    "被扣了两次",
    "发票抬头",
    "写错了",
    "能不能退",
    "年付的",
    "席位数",
    "导出报表",
    "一直报错",
    "验证码",
    "过期了",
    "登录不了",
    "升级套餐",
    "怎么计费",
    "麻烦尽快",
    "处理一下",
    "谢谢",
    "急",
    "客服你好",
    "我们公司",
    "财务说",
    "对不上账",
    "the invoice",
    "was charged twice",
    "please refund",
    "cancel my plan",
    "seats",
    "下个月起",
    "不用了",
    "剩下的钱",
    "重新开一张",
    "专票",
    "普票",
    "税号",
    "老板催",
]
ORACLES = """
from caseforge.oracle import oracle

@oracle("seat_price")
def seat_price(input, *, seats):
    return {"basic": 49, "pro": 99, "enterprise": 299}[input["plan"]] * seats
"""
PRICE = {"basic": 49, "pro": 99, "enterprise": 299}
CATEGORIES = ["refund", "billing", "invoice", "bug", "account", "other"]


def ticket(rng: random.Random) -> str:
    return (
        "，".join(rng.choice(PHRASES) for _ in range(rng.randint(6, 18)))
        + f" #{rng.randrange(10**6)}"
    )


def make_case(i: int, rng: random.Random, text: str) -> dict[str, object]:
    plan = rng.choice(list(PRICE))
    seats = rng.randint(1, 20)
    return {
        "id": f"gen-{i:06d}",
        "input": {"ticket": text, "plan": plan},
        "expect": {
            "category": {"mode": "exact", "value": rng.choice(CATEGORIES)},
            "price": {
                "mode": "number",
                "value": PRICE[plan] * seats,
                "oracle": "seat_price",
                "args": {"seats": seats},
            },
            "reply": {"must_include": [str(seats)], "must_not_include": ["全额"]},
            "tool_calls": {"must_call": ["get_subscription"]},
            "wording": {"mode": "ignore", "reason": "free text"},
        },
        "tags": ["generated"],
        "source": "synthetic",
        "split": "test" if i % 10 < 3 else "dev",
    }


def generate(n: int, seed: int = 42) -> list[dict[str, object]]:
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        # Every 50th case is a near-duplicate of the one before: one phrase appended.
        previous = cases[-1]["input"]["ticket"] if i % 50 == 49 else None  # type: ignore[index]
        text = f"{previous}，谢谢" if previous else ticket(rng)
        cases.append(make_case(i, rng, text))
    return cases


def write_suite(root: Path, cases: list[dict[str, object]], as_yaml: bool) -> None:
    (root / "cases").mkdir(parents=True)
    (root / "caseforge.yaml").write_text(
        "name: scale\noracles: oracles.py\ndedup: {fields: [ticket]}\n"
    )
    (root / "oracles.py").write_text(ORACLES)
    if as_yaml:
        from ruamel.yaml import YAML

        yaml = YAML(typ="safe", pure=False)
        yaml.default_flow_style = None
        for case in cases:
            with (root / "cases" / f"{case['id']}.yaml").open("w", encoding="utf-8") as f:
                yaml.dump(case, f)
    else:
        with (root / "cases" / "bulk.jsonl").open("w", encoding="utf-8") as f:
            for case in cases:
                f.write(json.dumps(case, ensure_ascii=False) + "\n")


def planted_pairs_found(cases: list[dict[str, object]], report: dict[str, object]) -> str:
    """How many planted pairs reach Jaccard 0.8 exactly, and how many validate reported."""
    texts = {c["id"]: c["input"]["ticket"] for c in cases}  # type: ignore[index]
    truth = set()
    for i in range(49, len(cases), 50):
        a, b = cases[i - 1]["id"], cases[i]["id"]
        if jaccard(shingles(texts[a]), shingles(texts[b])) >= 0.8:  # type: ignore[arg-type]
            truth.add((a, b))
    found = {(d["a"], d["b"]) for d in report["near_duplicates"]}  # type: ignore[attr-defined]
    recall = len(found & truth) / len(truth) if truth else 1.0
    return f"{len(found & truth)} of the {len(truth)} planted pairs at >= 0.8 (recall {recall:.3f})"


def run_validate(root: Path) -> tuple[float, float, dict[str, object]]:
    """Wall seconds, peak RSS in MB, and the JSON report of one validate process."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "caseforge", "validate", str(root), "--json"], stdout=out
        )
        _, _, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS, in KiB on Linux
        proc.returncode = 0
        wall = time.perf_counter() - start
        out.seek(0)
        report = json.load(out)
    return wall, usage.ru_maxrss / 1024, report


def recall_sample(n: int = 4000, seed: int = 7) -> None:
    rng = random.Random(seed)
    alphabet = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(30, 150))) for _ in range(n)]
    for i in range(n // 10):  # plant pairs across the whole similarity range near 0.8
        chars = list(texts[i])
        for _ in range(rng.randint(0, max(1, len(chars) // 12))):
            chars[rng.randrange(len(chars))] = rng.choice(alphabet)
        texts.append("".join(chars))
    start = time.perf_counter()
    truth = {(d.a, d.b) for d in exact_pairs(texts, 0.8)}
    exact_s = time.perf_counter() - start
    start = time.perf_counter()
    found = {(d.a, d.b) for d in lsh_pairs(texts, 0.8)}
    lsh_s = time.perf_counter() - start
    recall = len(found & truth) / len(truth) if truth else 1.0
    precision = len(found & truth) / len(found) if found else 1.0
    print(
        f"(c) near-duplicates on {len(texts)} texts, {len(truth)} true pairs (Jaccard >= 0.8): "
        f"LSH recall {recall:.3f} (target >= 0.95), precision {precision:.3f}; "
        f"all-pairs {exact_s:.2f} s vs LSH {lsh_s:.2f} s ({exact_s / lsh_s:.1f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jsonl", type=int, default=100_000)
    parser.add_argument("--yaml", type=int, default=10_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "jsonl"
        cases = generate(args.jsonl)
        write_suite(root, cases, as_yaml=False)
        wall, rss, report = run_validate(root)
        print(
            f"(a) {args.jsonl} JSONL cases: {wall:.1f} s (target < 60 s, {wall / 60:.2f} of it), "
            f"peak RSS {rss:.0f} MB (target < 1024 MB, {rss / 1024:.2f} of it); "
            f"{len(report['errors'])} errors, {report['oracle_checks']} oracle checks; "
            f"near-duplicates: {planted_pairs_found(cases, report)}"
        )
        root = Path(tmp) / "yaml"
        cases = generate(args.yaml, seed=1)
        write_suite(root, cases, as_yaml=True)
        wall, rss, report = run_validate(root)
        print(
            f"(b) {args.yaml} YAML files: {wall:.1f} s (target < 15 s, {wall / 15:.2f} of it), "
            f"peak RSS {rss:.0f} MB; {len(report['errors'])} errors; "
            f"near-duplicates: {planted_pairs_found(cases, report)}"
        )
    recall_sample()


if __name__ == "__main__":
    main()
