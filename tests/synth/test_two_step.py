"""Two-step synthesis: tuples with pairwise coverage and oracle expectations, drafts written
by a (recorded) model, near-duplicates flagged, and the review queue."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from pathlib import Path

import httpx
import pytest
import respx
from typer.testing import CliRunner

from caseforge.case.load import load_suite
from caseforge.cli import app
from caseforge.llm import ModelClient
from caseforge.oracle import expectation, load_oracles
from caseforge.synth.tuples import all_pairs, draw_tuples, pairs_of, pairwise_tuples, sample_tuples
from caseforge.synth.writer import load_queue, write_drafts
from tests.llm.wire import completion

SUPPORT = Path(__file__).resolve().parents[2] / "examples" / "support-refund"
runner = CliRunner()


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "support-refund"
    shutil.copytree(SUPPORT, root, ignore=shutil.ignore_patterns("labels", "fixtures", "synth"))
    return root


def test_pairwise_covers_every_pair_and_is_seeded() -> None:
    axes = {
        "scenario": [f"s{i}" for i in range(6)],
        "persona": list("abcde"),
        "shape": list("wxyz"),
    }
    rows = pairwise_tuples(axes, seed=3)
    covered = set().union(*(pairs_of(r) for r in rows))
    assert covered == all_pairs(axes)
    assert 30 <= len(rows) <= 36  # the lower bound is 6 × 5 = 30
    assert rows == pairwise_tuples(axes, seed=3)
    assert sample_tuples(axes, 5, 1) == sample_tuples(axes, 5, 1)


def test_tuples_carry_oracle_expectations(suite: Path) -> None:
    drawn = draw_tuples(suite, n=10, seed=7, pairwise=True)
    assert set().union(*(pairs_of(t["tuple"]) for t in drawn)) >= all_pairs(
        {k: sorted({t["tuple"][k] for t in drawn}) for k in ("scenario", "persona", "shape")}
    )
    refund_policy = load_oracles(suite / "oracles.py")["refund_policy"]
    refunds = [t for t in drawn if "refund" in t["expect"]]
    assert refunds
    for t in refunds:  # every value is what the oracle says for that customer
        check = t["expect"]["refund"]
        value, others = expectation(refund_policy(t["input"], **check["args"]))
        assert check["value"] == value and check.get("any_of", []) == others
    assert all(t["expect"]["category"]["mode"] == "exact" for t in drawn)


def tickets(request: httpx.Request) -> httpx.Response:
    prompt = json.loads(request.content)["messages"][0]["content"]
    number = sum(map(ord, prompt)) % 10_000
    if "How the ticket is written: 一句话\n" in prompt:
        return httpx.Response(
            200, json=completion("我们年付的,下个月起不用了,剩下几个月的钱能退吗?")
        )
    tuple_lines = " ".join(prompt.splitlines()[1:4])  # scenario, persona, shape of this tuple
    return httpx.Response(200, json=completion(f"工单{number}：{tuple_lines}"))


def test_write_then_review(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = runner.invoke(app, ["synth", "tuples", str(suite), "-n", "8", "--seed", "5"])
    assert result.exit_code == 0 and "wrote 8 tuples" in result.stdout
    client = ModelClient(model="gpt-4.1-mini", api_key="sk-test", base_url="http://llm.test/v1")
    with respx.mock:
        respx.post("http://llm.test/v1/chat/completions").mock(side_effect=tickets)
        drafts = asyncio.run(write_drafts(suite, client))
    assert len(drafts) == 8 and all(d.status == "pending" for d in drafts)
    assert all(d.model == "gpt-4.1-mini" and len(d.prompt_hash) == 12 for d in drafts)
    assert all(d.input["ticket"] == d.text for d in drafts)
    one_liners = [d for d in drafts if d.tuple["shape"] == "one_liner"]
    assert one_liners  # seed 5 draws at least one; its text repeats refund-yearly-023
    assert all("refund-yearly-023" in d.near_duplicates for d in one_liners)
    assert all(not d.near_duplicates for d in drafts if d.tuple["shape"] != "one_liner")
    # a second write makes nothing new: every tuple has its draft
    with respx.mock:
        assert asyncio.run(write_drafts(suite, client)) == []

    editor = tmp_editor(suite.parent)
    monkeypatch.setenv("EDITOR", editor)
    before = len(load_suite(suite).cases)
    answers = "a\ne\nr\ntoo close to an existing case\ns\nq\n"
    result = runner.invoke(app, ["review", str(suite), "--reviewer", "ana"], input=answers)
    assert result.exit_code == 0, result.output
    queue = load_queue(suite)
    statuses = [d.status for d in queue]
    assert statuses[:3] == ["accepted", "edited", "rejected"] and statuses[3] == "pending"
    assert "8 drafts: 1 accepted, 1 edited, 1 rejected, 5 pending" in result.stdout
    assert "rejected 1×: too close to an existing case" in result.stdout
    cases = {c.case.id: c.case for c in load_suite(suite).cases}
    assert len(cases) == before + 2
    edited = cases[queue[1].case_id or ""]
    assert edited.input["ticket"].endswith("（改）") and edited.provenance["edited"] is True
    accepted = cases[queue[0].case_id or ""]
    assert accepted.source == "synthetic" and accepted.provenance["reviewed_by"] == "ana"
    assert accepted.provenance["tuple"] == queue[0].tuple
    stats = runner.invoke(app, ["review", str(suite), "--stats"])
    assert "67% of reviewed drafts needed fixing" in stats.stdout  # 2 of 3


def tmp_editor(folder: Path) -> str:
    script = folder / "fake_editor.py"
    script.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().strip() + '（改）')\n"
    )
    return f"{sys.executable} {script}"


def test_synth_write_needs_a_model(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    runner.invoke(app, ["synth", "tuples", str(suite), "-n", "2"])
    result = runner.invoke(app, ["synth", "write", str(suite)])
    assert result.exit_code == 5  # an environment error: no model configured
    assert "synth write needs a model" in result.output


def test_near_duplicates_are_flagged_within_the_batch_too() -> None:
    from caseforge.synth.writer import Draft, flag_near_duplicates

    def draft(draft_id: str, text: str) -> Draft:
        return Draft(draft_id, "t", {}, {}, {}, text, "m", "h", "run")

    drafts = [
        draft("d1", "我想问一下发票抬头写错了能不能重新开一张谢谢"),
        draft("d2", "我想问一下发票抬头写错了能不能重新开一张谢谢！"),
        draft("d3", "导出报表一直报错，已经试了三次了"),
    ]
    flag_near_duplicates(drafts, {"c-1": "导出报表一直报错，已经试了三次了"})
    assert [d.near_duplicates for d in drafts] == [[], ["draft d1"], ["c-1"]]


def test_a_corrupt_queue_is_a_located_one_line_error(suite: Path) -> None:
    (suite / "synth").mkdir(exist_ok=True)
    (suite / "synth" / "queue.jsonl").write_text('{"draft_id": "x"\n', encoding="utf-8")
    result = runner.invoke(app, ["review", str(suite), "--stats"])
    assert result.exit_code == 1
    assert re.search(r"queue\.jsonl:1:\d+: invalid JSON", result.output)
