"""Labels, κ against scikit-learn, and calibrate with recorded and replayed judge answers."""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from typer.testing import CliRunner

from caseforge.calibrate import cohen_kappa, load_labels
from caseforge.calibrate.calibrate import calibrate
from caseforge.calibrate.labels import VERDICTS, LabeledOutput, save_item
from caseforge.cli import app
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite
from tests.llm.wire import completion

FACTS = ["checked the invoices", "no duplicate charge found"]
runner = CliRunner()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kappa_matches_scikit_learn(seed: int) -> None:
    rng = random.Random(seed)
    first = [rng.choice(VERDICTS) for _ in range(60)]
    second = [v if rng.random() < 0.7 else rng.choice(VERDICTS) for v in first]
    ours = cohen_kappa(first, second, VERDICTS)
    assert ours.kappa == pytest.approx(
        cohen_kappa_score(first, second, labels=list(VERDICTS)), abs=1e-9
    )
    assert ours.confusion == confusion_matrix(first, second, labels=list(VERDICTS)).tolist()
    assert ours.agreement == pytest.approx(
        sum(a == b for a, b in zip(first, second, strict=True)) / 60
    )


def judged_suite(toy_suite: MakeToySuite) -> Path:
    expect = {
        "category": {"mode": "exact", "value": "refund"},
        "facts": {"mode": "judge", "values": FACTS},
    }
    return toy_suite(
        [{"id": "a", "input": {}, "expect": expect}], trials=2, judge={"model": "gpt-4.1-mini"}
    )


def test_label_command_saves_each_output_and_resumes(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    root = judged_suite(toy_suite)
    url = f"sqlite:///{tmp_path / 'l.db'}"
    outcome = asyncio.run(Runner(RunOptions(suite_dir=root, judge="off"), RunStore(url)).run())
    run_id = outcome.runs[0].run_id
    first = runner.invoke(
        app, ["label", run_id, "--store", url, "--labeler", "ana"], input="c\nzz\nm\nq\n"
    )
    assert first.exit_code == 0, first.output
    labels = load_labels(root)
    assert len(labels) == 1 and len(labels[0].items) == 1
    item = labels[0].items[0]
    assert item.labels == {FACTS[0]: "conveyed", FACTS[1]: "missing"} and item.labeler == "ana"
    assert item.source["run"] == run_id and "answer c, m, x, s or q" in first.stdout
    second = runner.invoke(app, ["label", run_id, "--store", url], input="x\nx\n")
    assert "nothing left to label" in second.stdout
    assert [len(cl.items) for cl in load_labels(root)] == [2]


def judge_answers(request: httpx.Request) -> httpx.Response:
    """A recorded-style judge: 'missing' for outputs mentioning 'forgot', else conveyed."""
    body = json.loads(request.content)
    text = body["messages"][-1]["content"]
    if '"winner"' in text:
        return httpx.Response(200, json=completion('{"winner": "first", "reason": "order"}'))
    output = re.search(r"<(agent_output_\w+)>\n(.*?)\n</\1>", text, re.S)
    assert output is not None
    verdict = "missing" if "forgot" in output.group(2) else "conveyed"
    facts = [{"index": i, "verdict": verdict, "reason": "stand-in"} for i in range(len(FACTS))]
    return httpx.Response(200, json=completion(json.dumps({"facts": facts})))


def add_labels(root: Path) -> None:
    outputs: list[tuple[str, dict[str, Any]]] = [
        (
            "I checked the invoices: no duplicate charge.",
            {FACTS[0]: "conveyed", FACTS[1]: "conveyed"},
        ),
        ("I forgot to look, sorry.", {FACTS[0]: "missing", FACTS[1]: "missing"}),
        (
            "Checked invoices; there is a duplicate (forgot details).",
            {FACTS[0]: "conveyed", FACTS[1]: "contradicted"},
        ),
    ]
    for text, labels in outputs:
        save_item(root, "a", LabeledOutput(check="facts", output=text, labels=labels, labeler="t"))


def test_calibrate_records_then_replays_offline(
    toy_suite: MakeToySuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = judged_suite(toy_suite)
    add_labels(root)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://judge.test/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-calibration-key-000")
    with respx.mock:
        route = respx.post("http://judge.test/v1/chat/completions").mock(side_effect=judge_answers)
        recorded = asyncio.run(calibrate(root, record=True))
        assert route.call_count == 3 + 3 + 6  # judge, verbosity probe, 3 pairs × 2 orders
    assert recorded.mode == "record" and recorded.outputs == 3
    humans = ["conveyed", "conveyed", "missing", "missing", "conveyed", "contradicted"]
    judged = ["conveyed", "conveyed", "missing", "missing", "missing", "missing"]
    assert recorded.overall.agreement == pytest.approx(4 / 6)
    assert recorded.overall.kappa == pytest.approx(
        cohen_kappa_score(humans, judged, labels=list(VERDICTS))
    )
    assert len(recorded.disagreements) == 2
    assert recorded.verbosity == {"probes": 3, "flips": 0, "flip_rate": 0.0}
    assert recorded.position["pairs"] == 3 and recorded.position["flips"] == 3  # always "first"
    recordings = list((root / "labels" / "judge-recordings").glob("*.json"))
    assert recordings and "sk-test-calibration-key" not in recordings[0].read_text()

    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    with respx.mock(assert_all_called=False) as mock:  # any real call would fail loudly
        replayed = asyncio.run(calibrate(root))
        assert not mock.calls
    assert replayed.mode == "replay"
    assert replayed.overall.kappa == recorded.overall.kappa
    assert replayed.position == recorded.position

    result = runner.invoke(app, ["calibrate", str(root)])
    assert (
        result.exit_code == 0
        and "Cohen's κ" in result.stdout
        and "disagreements to read (2)" in result.stdout
    )


def test_calibrate_without_labels_or_judge_says_what_to_do(
    toy_suite: MakeToySuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = judged_suite(toy_suite)
    result = runner.invoke(app, ["calibrate", str(root)])
    assert result.exit_code == 1 and "no labels in" in result.output
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    add_labels(root)
    from caseforge.errors import CaseforgeError

    with pytest.raises(CaseforgeError, match="no judge to calibrate"):
        asyncio.run(calibrate(root))


def test_record_again_replaces_the_recordings(
    toy_suite: MakeToySuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = judged_suite(toy_suite)
    add_labels(root)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://judge.test/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-calibration-key-000")

    def always_missing(request: httpx.Request) -> httpx.Response:
        facts = [{"index": i, "verdict": "missing", "reason": "strict"} for i in range(len(FACTS))]
        return httpx.Response(200, json=completion(json.dumps({"facts": facts})))

    with respx.mock:
        respx.post("http://judge.test/v1/chat/completions").mock(side_effect=judge_answers)
        first = asyncio.run(calibrate(root, record=True, probes=False))
    with respx.mock:
        route = respx.post("http://judge.test/v1/chat/completions").mock(side_effect=always_missing)
        second = asyncio.run(calibrate(root, record=True, probes=False))
        assert route.call_count == 3  # recording asks the endpoint, never the cache
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = asyncio.run(calibrate(root, probes=False))
    assert first.overall.confusion != second.overall.confusion
    assert replayed.overall.confusion == second.overall.confusion


def test_the_shipped_support_refund_calibration_replays_offline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    suite = Path(__file__).resolve().parents[2] / "examples" / "support-refund"
    labels = load_labels(suite)
    assert sum(len(c.items) for c in labels) >= 30
    with respx.mock(assert_all_called=False) as mock:
        result = asyncio.run(calibrate(suite))
        assert not mock.calls  # replayed from labels/judge-recordings, no network
    assert result.mode == "replay" and result.outputs >= 30 and not result.not_judged
    # κ recomputed by scikit-learn from the same (person, judge) pairs.
    people, judge = [], []
    for i, row in enumerate(result.overall.confusion):
        for j, count in enumerate(row):
            people += [VERDICTS[i]] * count
            judge += [VERDICTS[j]] * count
    assert result.overall.kappa == pytest.approx(cohen_kappa_score(people, judge), abs=1e-9)
    assert result.overall.n == sum(len(item.labels) for c in labels for item in c.items)
