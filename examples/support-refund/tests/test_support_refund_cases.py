"""Pins on the support-refund cases: every oracle-backed value recomputes, and the dataset
keeps the mix it was built with (sources, refund / no-refund balance, the 12 edge kinds).

``caseforge validate`` recomputes the oracle values too; this test keeps the check in
``pytest examples`` as well.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from ruamel.yaml import YAML

from caseforge.oracle import AnyOf

SUITE = Path(__file__).resolve().parent.parent
CASE_FILES = sorted((SUITE / "cases").glob("*.yaml"))

EDGE_KINDS = {
    "customer-wrong", "policy-edge", "tool-error", "cross-customer", "prompt-injection",
    "out-of-scope", "too-little-info", "english", "very-short", "very-long", "abusive",
    "unknown-customer",
}  # fmt: skip
CATEGORIES = {"refund", "billing", "invoice", "bug", "account", "other"}
TOOLS = {"get_subscription", "list_invoices", "create_refund_request"}


def _oracles() -> ModuleType:
    name = "support_refund_test_oracles"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SUITE / "oracles.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _raw_cases() -> list[dict[str, Any]]:
    yaml = YAML(typ="safe")
    return [yaml.load(path.read_text(encoding="utf-8")) for path in CASE_FILES]


ALL_RAW = _raw_cases()
# The 80 one-ticket cases; the multi-turn ones (a `conversation:`, no `input.ticket`) are
# pinned by test_multi_turn_cases.
RAW = [raw for raw in ALL_RAW if "conversation" not in raw]


def _oracle_checks() -> list[tuple[str, str, dict[str, Any], str, dict[str, Any], Any]]:
    """(case id, check name, input, oracle, args, expected) for every oracle-backed check.

    Read through ``caseforge.testing.load_suite`` when the library has it (the same loader
    as ``caseforge validate``), else straight from the YAML.
    """
    try:
        from caseforge.testing import load_suite
    except ImportError:
        load_suite = None
    found = []
    if load_suite is not None:
        for loaded in load_suite(SUITE).cases:
            case = loaded.case
            for name, check in case.expect.items():
                oracle = getattr(check, "oracle", None)
                if oracle:
                    expected = check.expected
                    if getattr(check, "any_of", None):  # the oracle returned AnyOf
                        expected = AnyOf(expected, check.any_of)
                    found.append((case.id, name, case.input, oracle, check.args, expected))
        return found
    for raw in RAW:
        for name, check in raw["expect"].items():
            if isinstance(check, dict) and check.get("oracle"):
                expected = check.get("values", check.get("value"))
                if check.get("any_of"):
                    expected = AnyOf(expected, check["any_of"])
                found.append(
                    (
                        raw["id"],
                        name,
                        raw["input"],
                        check["oracle"],
                        check.get("args", {}),
                        expected,
                    )
                )
    return found


ORACLE_CHECKS = _oracle_checks()


@pytest.mark.parametrize(
    ("case_id", "name", "input", "oracle", "args", "expected"),
    ORACLE_CHECKS,
    ids=[f"{c[0]}:{c[1]}" for c in ORACLE_CHECKS],
)
def test_oracle_values_recompute(
    case_id: str, name: str, input: dict[str, Any], oracle: str, args: dict[str, Any], expected: Any
) -> None:
    fn = getattr(_oracles(), oracle)
    assert fn(input, **args) == expected


def test_multi_turn_cases() -> None:
    talks = [raw for raw in ALL_RAW if "conversation" in raw]
    assert len(talks) == 6
    for raw in talks:
        assert "multi-turn" in raw["tags"] and raw["expect"]["category"]["mode"] == "exact"
        assert "refund" in raw["expect"], raw["id"]  # the end state, from the oracle
        assert raw["expect"]["refund"].get("oracle") == "refund_policy", raw["id"]


def test_file_names_and_ids() -> None:
    ids = [raw["id"] for raw in ALL_RAW]
    assert len(ids) == len(set(ids))
    for path, raw in zip(CASE_FILES, ALL_RAW, strict=True):
        assert path.stem == raw["id"]
        assert raw.get("split") in {"dev", "test"}, f"{raw['id']}: run `caseforge split --write`"


def test_every_case_has_the_common_checks() -> None:
    for raw in RAW:
        expect = raw["expect"]
        assert expect["category"]["mode"] == "exact", raw["id"]
        assert expect["category"]["value"] in CATEGORIES, raw["id"]
        calls = expect["tool_calls"]
        named = [*calls.get("must_call", []), *calls.get("must_not_call", [])]
        assert {c["name"] if isinstance(c, dict) else c for c in named} <= TOOLS, raw["id"]
        facts = expect["facts"]
        assert facts["mode"] == "judge" and 1 <= len(facts["values"]) <= 3, raw["id"]
        assert str(raw["added"]) == "2026-10-12"
        assert raw["clock"].isoformat() == "2026-10-12T10:00:00+08:00"


def test_refund_cases() -> None:
    refund = [raw for raw in RAW if "refund" in raw["expect"]]
    assert len(refund) >= 20
    none = [raw for raw in refund if raw["expect"]["refund"]["value"] is None]
    assert len(none) * 3 >= len(refund), "no-refund cases must be at least a third"
    for raw in refund:
        expect = raw["expect"]
        assert expect["refund"]["mode"] == "outcome"
        assert expect["needs_approval"]["value"] is (expect["refund"]["value"] is not None)
        calls = expect["tool_calls"]
        if expect["refund"]["value"] is None:
            if raw["id"] != "edge-tool-error-c013":  # the tool's error is the point there
                assert "create_refund_request" in calls["must_not_call"], raw["id"]
        elif raw["id"] != "refund-yearly-023":  # kept exactly as the case-file reference shows it
            banned = expect["reply"]["must_not_include"]
            assert {"已退款", "已经退给您"} <= set(banned) or "has been refunded" in banned


def test_customer_is_wrong_cases_check_the_invoices() -> None:
    for raw in RAW:
        if "kind:customer-wrong" in raw.get("tags", []):
            assert "list_invoices" in raw["expect"]["tool_calls"]["must_call"], raw["id"]


def test_sources_and_edge_kinds() -> None:
    sources = Counter(raw.get("source", "manual") for raw in RAW)
    assert sources["synthetic"] >= 45
    assert sources["manual"] >= 15
    assert 10 <= sources["error-analysis"] <= 15
    assert sum(sources.values()) >= 75
    kinds = {
        tag.removeprefix("kind:")
        for raw in RAW
        if raw.get("source") == "manual"
        for tag in raw["tags"]
    }
    assert kinds >= EDGE_KINDS
    for raw in RAW:
        if raw.get("source") == "manual":
            assert {"edge", "adversarial"} & set(raw["tags"]), raw["id"]
        if raw.get("source") == "error-analysis":
            assert raw.get("note"), f"{raw['id']}: say what went wrong in the trace"
        if raw.get("source") == "synthetic":
            assert set(raw["provenance"]["tuple"]) == {"scenario", "persona", "shape"}


def test_synthetic_tuples_come_from_the_dimensions() -> None:
    dims = YAML(typ="safe").load((SUITE / "dimensions.yaml").read_text(encoding="utf-8"))
    for raw in RAW:
        if raw.get("source") != "synthetic":
            continue
        t = raw["provenance"]["tuple"]
        assert t["scenario"] in dims["scenarios"], raw["id"]
        assert t["persona"] in dims["personas"], raw["id"]
        assert t["shape"] in dims["shapes"], raw["id"]
        scenario = dims["scenarios"][t["scenario"]]
        assert raw["expect"]["category"]["value"] == scenario["category"], raw["id"]
        if scenario["oracle"]:
            assert raw["expect"]["refund"]["args"] == scenario["oracle"]["args"], raw["id"]


def test_no_near_duplicate_tickets() -> None:
    def grams(text: str) -> set[str]:
        s = "".join(text.split())
        return {s[i : i + 3] for i in range(max(len(s) - 2, 1))}

    tickets = [(raw["id"], grams(raw["input"]["ticket"])) for raw in RAW]
    for i, (a, ga) in enumerate(tickets):
        for b, gb in tickets[i + 1 :]:
            assert len(ga & gb) / len(ga | gb) < 0.8, (a, b)


def test_must_pass_cases() -> None:
    tagged = {raw["id"] for raw in RAW if "must-pass" in raw.get("tags", [])}
    assert 3 <= len(tagged) <= 5
    assert {"refund-yearly-023", "syn-duplicate-001"} <= tagged
