"""How many planted leak forms the audit finds, and how many honest texts it flags: issue 24's
audit target (at least 95 % of planted leak forms, at most 1 false alarm).

For a privacy corpus (sensitive.yaml, variants.yaml), the private store is every sensitive log
with its glossary, as ``caseforge audit`` builds it (``audit.privacy.private_data``: glossary
terms, the scanner's spans, the logs' text). Every disguised variant is planted as the
repository would hold it, in each carrier the audit decodes:

- ``plain``: a line of a Markdown file (the disguised item inside a sentence of the variant);
- ``json``: the variant as a JSON string with ``\\u`` escapes (what ``json.dumps`` writes);
- ``utf16``: the variant in a UTF-16 file;
- ``gzip``: the variant gzipped (a log archive);
- ``commit``: the variant as a commit message.

A leak form is found when the audit reports anything in its file. Honest rewrites, planted
plain, are the false alarms when reported. By default each variant meets a store holding its
own log, as ``verify`` pairs a rewrite with its original; ``--whole-store`` puts every log in
one store (a team's store of many sensitive cases), where an honest text also meets the other
logs' numbers and names.

    python benchmarks/audit_recall.py tests/privacy/corpus_d [--json]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from caseforge.audit.leaks import Matcher, PrivateData
from caseforge.decoding import Text, decode
from caseforge.privacy.identifiers import IdentifierDetector
from caseforge.privacy.verify import case_day

HERE = Path(__file__).parent
CARRIERS = ("plain", "json", "utf16", "gzip", "commit")


def _corpus() -> Any:
    spec = importlib.util.spec_from_file_location("privacy_corpus", HERE / "privacy_corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def private_data(logs: list[dict[str, Any]]) -> PrivateData:
    corpus = _corpus()
    terms: set[tuple[str, str]] = set()
    for log in logs:
        glossary = corpus._glossary(log)
        terms |= {(cls, term) for cls, values in glossary.items() for term in values}
        terms |= {(s.cls, s.text) for s in IdentifierDetector(glossary).scan(log["text"])}
    clocks = [case_day(str(log["clock"])) if log.get("clock") else None for log in logs]
    return PrivateData(sorted(terms), [log["text"] for log in logs], b"benchmark", clocks)


def carried(carrier: str, origin: str, text: str) -> list[Text]:
    """``text`` as the audit reads it from ``carrier``."""
    if carrier == "commit":
        return [Text(f"commit:{origin}", text)]
    data = {
        "plain": lambda: f"# notes\n\n{text}\n".encode(),
        "json": lambda: json.dumps({"note": text}).encode(),
        "utf16": lambda: text.encode("utf-16"),
        "gzip": lambda: gzip.compress(text.encode()),
    }[carrier]()
    name = {"plain": "md", "json": "json", "utf16": "txt", "gzip": "log.gz"}[carrier]
    return [t for t in decode(f"{origin}.{name}", data) if isinstance(t, Text)]


def measure(folder: Path, whole_store: bool = False) -> dict[str, Any]:
    """Each log's leak forms against a store holding that log (as verify pairs a variant
    with its original); ``whole_store``: against one store holding every log."""
    corpus = _corpus()
    logs = corpus._load(folder, "sensitive.yaml")
    variants = corpus._load(folder, "variants.yaml")
    by_id = {log["id"]: log for log in logs}
    every = Matcher(private_data(logs)) if whole_store else None
    matchers: dict[str, Matcher] = {}
    found: collections.Counter[str] = collections.Counter()
    planted: collections.Counter[str] = collections.Counter()
    missed: list[str] = []
    alarms: list[str] = []
    for index, variant in enumerate(variants):
        source = variant["source"]
        matcher = every or matchers.setdefault(source, Matcher(private_data([by_id[source]])))
        origin = f"{source}-{index}"
        if variant["kind"] == "honest":
            if any(matcher.find(t) for t in carried("plain", origin, variant["text"])):
                alarms.append(source)
            continue
        for carrier in CARRIERS:
            planted[carrier] += 1
            if any(matcher.find(t) for t in carried(carrier, origin, variant["text"])):
                found[carrier] += 1
            elif carrier == "plain":
                missed.append(f"{source} {variant['kind']}: {variant['disguised']!r}")
    total = sum(planted.values())
    return {
        "corpus": folder.name,
        "store": "every log" if whole_store else "the variant's own log",
        "planted": total,
        "found": sum(found.values()),
        "by_carrier": {c: f"{found[c]}/{planted[c]}" for c in CARRIERS},
        "missed_plain": missed,
        "honest": sum(v["kind"] == "honest" for v in variants),
        "false_alarms": alarms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--whole-store", action="store_true", help="one store holding every log of the corpus"
    )
    args = parser.parse_args()
    results = [measure(folder, args.whole_store) for folder in args.folders]
    if args.json:
        json.dump(results, sys.stdout, ensure_ascii=False, indent=1)
        return
    for r in results:
        share = r["found"] / r["planted"] if r["planted"] else 0.0
        print(
            f"== {r['corpus']} (store: {r['store']}): planted leak forms found "
            f"{r['found']}/{r['planted']} = {share:.1%}"
        )
        print("    by carrier: " + ", ".join(f"{c} {v}" for c, v in r["by_carrier"].items()))
        print(f"    false alarms on {r['honest']} honest rewrites: {len(r['false_alarms'])}")
        for line in r["missed_plain"]:
            print(f"    missed: {line}")
        for source in r["false_alarms"]:
            print(f"    false alarm: {source}")


if __name__ == "__main__":
    main()
