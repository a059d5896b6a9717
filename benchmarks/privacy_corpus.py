"""How verify and scan hold up on a privacy corpus (tests/privacy/corpus_*): the figures
issue 24 is measured by.

For each corpus folder (sensitive.yaml, clean.yaml, variants.yaml):

- scan recall: planted identifiers whose text the scanner covers (80 % of it), with the log's
  glossary and without one, by class;
- false alarms: scanner spans on the clean logs;
- verify: each variant checked against its source log as ``caseforge verify`` checks a
  rewrite (``privacy.verify.know_original`` then ``check_overlap``), with the glossary and
  without: disguises rejected (by kind), honest rewrites wrongly rejected (with the classes).

    python benchmarks/privacy_corpus.py tests/privacy/corpus_d [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from caseforge.privacy.identifiers import CLASSES, Glossary, IdentifierDetector
from caseforge.privacy.verify import check_overlap, know_original


def _load(folder: Path, name: str) -> list[dict[str, Any]]:
    path = folder / name
    if not path.is_file():
        return []
    data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    return list(data or [])


def _glossary(log: dict[str, Any]) -> Glossary:
    """The log's glossary; a class the scanner has no name for (``place``) is read as a
    name the glossary still protects (``organization``)."""
    merged: dict[str, list[str]] = {}
    for key, values in (log.get("glossary") or {}).items():
        cls = key if key in CLASSES else "organization"
        merged.setdefault(cls, []).extend(str(v) for v in values)
    return Glossary.from_mapping(merged)


def _case(log: dict[str, Any]) -> dict[str, Any]:
    case: dict[str, Any] = {"id": "x", "input": {"log": log["text"]}, "expect": {}}
    if log.get("clock"):
        case["clock"] = str(log["clock"])
    return case


def scan_recall(
    logs: list[dict[str, Any]], glossary: bool
) -> tuple[dict[str, int], dict[str, int]]:
    found: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    for log in logs:
        text = log["text"]
        spans = IdentifierDetector(_glossary(log) if glossary else None).scan(text, log.get("lang"))
        position = 0
        for cls, value in log.get("identifiers") or []:
            value = str(value)
            start = text.find(value, position)
            if start < 0:
                start = text.find(value)
            end = start + len(value)
            position = max(position, end)
            total[cls] += 1
            covered = sum(
                min(s.end, end) - max(s.start, start)
                for s in spans
                if s.start < end and start < s.end
            )
            found[cls] += covered >= 0.8 * len(value)
    return dict(found), dict(total)


def verify_figures(
    logs: list[dict[str, Any]], variants: list[dict[str, Any]], glossary: bool
) -> dict[str, Any]:
    by_id = {log["id"]: log for log in logs}
    known = {
        source: know_original(_case(by_id[source]), _glossary(by_id[source]) if glossary else None)
        for source in {v["source"] for v in variants}
    }
    caught: collections.Counter[str] = collections.Counter()
    kinds: collections.Counter[str] = collections.Counter()
    passed: list[str] = []
    honest_rejected: list[tuple[str, list[str]]] = []
    honest = 0
    for variant in variants:
        result = check_overlap(known[variant["source"]].original, [("input.log", variant["text"])])
        if variant["kind"] == "honest":
            honest += 1
            if not result.passed:
                honest_rejected.append((variant["source"], result.findings))
            continue
        kinds[variant["kind"]] += 1
        if result.passed:
            passed.append(f"{variant['source']} {variant['kind']}: {variant.get('disguised')!r}")
        else:
            caught[variant["kind"]] += 1
    return {
        "disguises": sum(kinds.values()),
        "caught": sum(caught.values()),
        "by_kind": {k: f"{caught[k]}/{n}" for k, n in sorted(kinds.items())},
        "passed": passed,
        "honest": honest,
        "honest_rejected": honest_rejected,
    }


def measure(folder: Path) -> dict[str, Any]:
    logs, clean, variants = (
        _load(folder, n) for n in ("sensitive.yaml", "clean.yaml", "variants.yaml")
    )
    out: dict[str, Any] = {"corpus": folder.name, "logs": len(logs), "clean": len(clean)}
    for glossary in (True, False):
        found, total = scan_recall(logs, glossary)
        key = "with_glossary" if glossary else "without_glossary"
        out[f"scan_{key}"] = {
            "found": sum(found.values()),
            "total": sum(total.values()),
            "by_class": {c: f"{found.get(c, 0)}/{n}" for c, n in sorted(total.items())},
        }
        out[f"verify_{key}"] = verify_figures(logs, variants, glossary)
    alarms = [
        (log["id"], s.cls, s.text)
        for log in clean
        for s in IdentifierDetector().scan(log["text"], log.get("lang"))
    ]
    out["clean_alarms"] = alarms
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for folder in args.folders:
        figures = measure(folder)
        if args.json:
            json.dump(figures, sys.stdout, ensure_ascii=False, indent=1)
            print()
            continue
        print(f"== {figures['corpus']}: {figures['logs']} logs, {figures['clean']} clean")
        for key in ("with_glossary", "without_glossary"):
            scan = figures[f"scan_{key}"]
            pct = scan["found"] / max(scan["total"], 1)
            print(
                f"scan recall {key.replace('_', ' ')}: {scan['found']}/{scan['total']} = {pct:.1%}"
            )
            print("   ", ", ".join(f"{c} {v}" for c, v in scan["by_class"].items()))
        print(f"clean logs: {len(figures['clean_alarms'])} false alarms {figures['clean_alarms']}")
        for key in ("with_glossary", "without_glossary"):
            v = figures[f"verify_{key}"]
            print(
                f"verify {key.replace('_', ' ')}: disguises rejected {v['caught']}/{v['disguises']}"
                f" = {v['caught'] / max(v['disguises'], 1):.1%}; honest rejected "
                f"{len(v['honest_rejected'])}/{v['honest']}"
            )
            print("    by kind:", ", ".join(f"{k} {n}" for k, n in v["by_kind"].items()))
            for line in v["passed"]:
                print("    passed:", line)
            for source, findings in v["honest_rejected"]:
                print(f"    honest rejected: {source}: {findings}")


if __name__ == "__main__":
    main()
