"""The example's agent, run by caseforge: its OpenInference spans arrive with each trial, and
the ``spans`` checks pass on v2 and catch v1, whose replies are the same."""

from __future__ import annotations

from pathlib import Path

from caseforge.api import run_suite
from caseforge.report.build import load_report
from caseforge.testing import assert_valid

SUITE = Path(__file__).resolve().parents[1]


def test_the_suite_is_valid() -> None:
    assert_valid(SUITE)


def test_the_spans_arrive_with_each_trial_and_the_spans_checks_grade_them(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    v2, v1 = run_suite(SUITE, store=store, configs=["v2", "v1"], trials=1)
    assert v2.summary.pass_rate == 1.0

    full = load_report(v2.run_id, store, raw=True)
    shipped = next(c for c in full.cases if c.id == "shipped-order").trials[0]
    assert shipped.spans is not None
    [root] = shipped.spans
    assert root.name == "LangGraph" and root.attributes["openinference.span.kind"] == "CHAIN"
    names = []

    def walk(node: object) -> None:
        names.append(node.name)  # type: ignore[attr-defined]
        for child in node.children:  # type: ignore[attr-defined]
            walk(child)

    walk(root)
    assert names.count("lookup_order") == 1 and names.count("ScriptedModel") == 2

    failing = {c.id: c.trials[0] for c in v1.cases}
    trace = next(c for c in failing["shipped-order"].checks if c.name == "trace")
    assert trace.status.value == "fail"
    assert 'lookup_order(openinference.span.kind="TOOL"): 2 spans, expected 1×' in trace.reason
    assert failing["shipped-order"].reply == shipped.reply  # the same answer: only the spans differ
    unknown = next(c for c in failing["unknown-order"].checks if c.name == "trace")
    assert "2 error spans named lookup_order, at most 1 allowed" in unknown.reason
    assert "\n" not in unknown.reason
