"""Multi-turn cases: a scripted user and a simulated one, the ends of a conversation, the
transcript and what is graded on it."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from caseforge.case.model import Case
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
from tests.conftest import report_json
from tests.run.model_user import MODEL_USER, customer_replies

HERE = Path(__file__).parent
SCRIPTED = """\
id: refund-asks-then-files
input: {channel: chat}
conversation:
  max_turns: 4
  script:
    - say: 我想退掉年付剩下的钱。
      expect:
        reply: {must_include: [客户编号]}
    - say: 我的客户编号是 C023。
      expect:
        reply: {must_include: ["6578"], normalize: true}
        tool_calls: {must_not_call: [create_refund_request]}
    - say: 确认。
expect:
  category: {mode: exact, value: refund}
  tool_calls:
    must_call: [{name: create_refund_request, args: {customer_id: C023}, count: 1}]
  reply: {must_include: [待主管审批]}
  transcript: {must_include: [客户编号, 确认]}
  turn_count: {mode: number, value: 3}
source: manual
"""
SIMULATED = """\
id: refund-simulated-customer
input: {channel: chat}
conversation:
  max_turns: 5
  user:
    callable: "talk_agent:customer"
    instruction: 我想退掉年付剩下的钱。
    facts: {customer_id: C023}
expect:
  tool_calls:
    must_call: [{name: create_refund_request, args: {customer_id: C023}, count: 1}]
  turn_count: {mode: number, value: 3}
source: manual
"""
ENDLESS = """\
id: never-ends
input: {}
conversation:
  max_turns: 3
  user: {callable: "talk_agent:chatterbox", instruction: 你好}
expect:
  reply: {must_include: [客户编号]}
source: manual
"""


def _suite(root: Path) -> Path:
    (root / "cases").mkdir(parents=True)
    shutil.copy(HERE / "talk" / "talk_agent.py", root / "talk_agent.py")
    (root / "caseforge.yaml").write_text(
        "name: talk\nagent: {callable: 'talk_agent:run'}\ntrials: 1\n"
        "configs: {careful: {variant: careful}, sloppy: {variant: sloppy}}\n",
        encoding="utf-8",
    )
    for name, text in (("a", SCRIPTED), ("b", SIMULATED), ("c", ENDLESS)):
        (root / "cases" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("talk")
    suite = _suite(tmp / "talk")
    store = RunStore(f"sqlite:///{tmp / 'r.db'}")
    options = RunOptions(suite_dir=suite, configs=["careful", "sloppy"])
    outcome = asyncio.run(Runner(options, store).run())
    found: dict[str, dict[str, Any]] = {}
    for handle in outcome.runs:
        report = report_json(store, handle.run_id)
        for case in report["cases"]:
            found[f"{report['config']}/{case['id']}"] = case["trials"][0]
        rows = list(store.results(handle.run_id))
        for row in rows:
            found[f"{report['config']}/{row['case_id']}"]["response"] = row["response_json"]
    return found


def checks(trial: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["status"] for c in trial["checks"]}


def test_a_scripted_user_and_per_turn_checks(graded: dict[str, dict[str, Any]]) -> None:
    careful = graded["careful/refund-asks-then-files"]
    assert careful["status"] == "pass", careful["checks"]
    assert checks(careful) == {
        "category": "pass", "tool_calls": "pass", "reply.must_include": "pass",
        "transcript.must_include": "pass", "turn_count": "pass",
        "turn1.reply.must_include": "pass", "turn2.reply.must_include": "pass",
        "turn2.tool_calls": "pass",
    }  # fmt: skip
    sloppy = graded["sloppy/refund-asks-then-files"]
    assert sloppy["status"] == "fail"
    failing = {k for k, v in checks(sloppy).items() if v == "fail"}
    # It filed on the first turn, without asking: the turn checks and the count catch it.
    assert {"turn1.reply.must_include", "turn_count", "tool_calls"} <= failing


def test_a_simulated_user_reveals_facts_when_asked(graded: dict[str, dict[str, Any]]) -> None:
    careful = graded["careful/refund-simulated-customer"]
    assert careful["status"] == "pass", careful["checks"]
    assert '"ended_by":"agent"' in careful["response"]
    assert '"role":"user","content":"我的客户编号是 C023。"' in careful["response"]


def test_max_turns_fails_the_trial_rather_than_erroring(
    graded: dict[str, dict[str, Any]],
) -> None:
    endless = graded["careful/never-ends"]
    assert endless["status"] == "fail"
    limit = next(c for c in endless["checks"] if c["name"] == "max_turns")
    assert limit["status"] == "fail" and "max_turns (3)" in limit["reason"]
    assert '"ended_by":"max_turns"' in endless["response"]


def test_a_conversation_needs_a_script_or_a_user() -> None:
    base: dict[str, Any] = {"id": "x", "input": {}, "expect": {"reply": {"must_include": ["a"]}}}
    with pytest.raises(ValueError, match="a `script:` or a `user:`"):
        Case.model_validate({**base, "conversation": {"max_turns": 2}})
    with pytest.raises(ValueError, match="`callable: module:fn` or `model: true`"):
        Case.model_validate(
            {**base, "conversation": {"max_turns": 2, "user": {"instruction": "hi"}}}
        )


def test_a_model_played_user_is_cached_costed_and_kept_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    import respx

    suite = _suite(tmp_path / "talk")
    for path in (suite / "cases").iterdir():
        path.unlink()
    (suite / "cases" / "m.yaml").write_text(MODEL_USER, encoding="utf-8")
    config = suite / "caseforge.yaml"
    config.write_text(config.read_text() + "simulator: {model: gpt-4.1-mini}\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://llm.test/v1")
    store = RunStore(f"sqlite:///{tmp_path / 'r.db'}")
    with respx.mock:
        route = respx.post("http://llm.test/v1/chat/completions").mock(side_effect=customer_replies)
        first = asyncio.run(Runner(RunOptions(suite_dir=suite, configs=["careful"]), store).run())
        calls = route.call_count
        again = asyncio.run(Runner(RunOptions(suite_dir=suite, configs=["careful"]), store).run())
        assert route.call_count == calls  # the second run is answered from the cache
    assert calls == 3  # opening, the customer number, the confirmation (then the agent ends)
    for outcome in (first, again):
        [row] = list(store.results(outcome.runs[0].run_id))
        assert row["status"] == "pass"
        response = json.loads(row["response_json"])
        assert response["user_usage"]["input_tokens"] == 600  # three calls of 200
        assert response["usage"]["input_tokens"] == 0  # the agent's own, apart
        summary = report_json(store, outcome.runs[0].run_id)["summary"]
        assert summary["cost_usd"] == 0  # the agent's: the user's cost is reported apart
        cached = outcome is again  # answered from the cache: it cost nothing
        assert (summary["simulated_user_cost_usd"] > 0) is not cached


def test_fixtures_are_keyed_by_turn(tmp_path: Path) -> None:
    import json

    from caseforge.agent.fixtures import FixtureMode

    suite = _suite(tmp_path / "talk")
    for path in (suite / "cases").iterdir():
        path.unlink()
    (suite / "cases" / "w.yaml").write_text(
        "id: weather\ninput: {}\nconversation:\n  max_turns: 2\n  script:\n"
        "    - say: one\n    - say: two\nexpect:\n  reply: {must_include: ['turn 2: sky 2']}\n"
        "  transcript: {must_include: ['turn 1: sky 1']}\nsource: manual\n",
        encoding="utf-8",
    )
    store = RunStore(f"sqlite:///{tmp_path / 'r.db'}")
    agent = "talk_agent:asks_the_weather"
    for mode in (FixtureMode.RECORD, FixtureMode.REPLAY):
        options = RunOptions(suite_dir=suite, agent=agent, fixtures=mode)
        outcome = asyncio.run(Runner(options, store).run())
        [row] = list(store.results(outcome.runs[0].run_id))
        assert row["status"] == "pass", (mode, row["error"], row["checks_json"])
    recorded = json.loads((suite / "fixtures" / "weather.json").read_text(encoding="utf-8"))
    turns = sorted(r["request"]["turn"] for r in recorded["recordings"])
    assert turns == [1, 2]  # one request, two turns: two recordings


def test_a_judge_reads_the_whole_transcript(tmp_path: Path) -> None:
    import json

    import respx

    from caseforge.llm import ModelClient
    from tests.llm.wire import BASE, KEY, completion, ok

    suite = _suite(tmp_path / "talk")
    for path in (suite / "cases").iterdir():
        path.unlink()
    (suite / "cases" / "j.yaml").write_text(
        SCRIPTED.replace(
            "  turn_count: {mode: number, value: 3}\n",
            "  turn_count: {mode: number, value: 3}\n"
            "  talk: {mode: judge, field: transcript, values: [asks for the customer number]}\n",
        ),
        encoding="utf-8",
    )
    answer = {"facts": [{"index": 0, "verdict": "conveyed", "reason": "it asked"}]}
    client = ModelClient(model="gpt-4.1-mini", api_key=KEY, base_url=BASE)
    store = RunStore(f"sqlite:///{tmp_path / 'r.db'}")
    with respx.mock:
        route = respx.post(f"{BASE}/chat/completions").mock(
            return_value=ok(completion(json.dumps(answer)))
        )
        options = RunOptions(suite_dir=suite, configs=["careful"])
        outcome = asyncio.run(Runner(options, store, judge_client=client).run())
    sent = json.loads(route.calls[0].request.content)["messages"][-1]["content"]
    # The whole conversation, both sides, is what the judge reads.
    assert "user: 我想退掉年付剩下的钱。" in sent and "agent: 请提供您的客户编号。" in sent
    assert "user: 确认。" in sent
    [row] = list(store.results(outcome.runs[0].run_id))
    talk = next(c for c in json.loads(row["checks_json"]) if c["name"] == "talk")
    assert talk["status"] == "pass"


@pytest.mark.parametrize(
    ("user", "says"),
    [
        ("{callable: 'no_such_module:customer', instruction: hi}",
         "case u: conversation.user.callable 'no_such_module:customer': cannot import"),
        ("{model: true, instruction: hi}",
         "case u: conversation.user.model needs the suite's `simulator: {model: …}`"),
    ],
)  # fmt: skip
def test_an_unplayable_user_fails_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user: str, says: str
) -> None:
    from typer.testing import CliRunner

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    from caseforge.cli import app

    suite = _suite(tmp_path / "talk")
    for path in (suite / "cases").iterdir():
        path.unlink()
    (suite / "cases" / "u.yaml").write_text(
        f"id: u\ninput: {{}}\nconversation:\n  max_turns: 2\n  user: {user}\n"
        "expect:\n  reply: {must_include: [x]}\nsource: manual\n",
        encoding="utf-8",
    )
    url = f"sqlite:///{tmp_path / 'r.db'}"
    done = CliRunner().invoke(app, ["run", str(suite), "--store", url, "-q"])
    assert done.exit_code == 1 and says in done.output and "Traceback" not in done.output
    assert RunStore(url).list_runs() == []  # nothing half-written


@pytest.mark.parametrize(
    ("answers", "given"),
    [
        ([{"reply": "a"}, {"reply": "b", "done": True}], False),
        ([{"reply": "a", "tool_calls": []}, {"reply": "b", "done": True}], True),
    ],
)
def test_a_conversation_reports_its_calls_when_any_agent_turn_did(
    tmp_path: Path, answers: list[dict[str, object]], given: bool
) -> None:
    """Whether the agent reported tool calls (``tool_calls_given``): true when any agent
    turn sent ``tool_calls``, even empty; a conversation whose turns never did has calls
    nobody knows, which a tool-call check cannot judge without spans."""
    from caseforge.agent.protocol import parse_response
    from caseforge.case.conversation import Conversation
    from caseforge.run.conversation import Users, converse

    turns = iter(answers)

    async def call(request: object) -> object:
        return parse_response(next(turns))

    conversation = Conversation.model_validate(
        {"max_turns": 2, "script": [{"say": "hi"}, {"say": "and?"}]}
    )
    request = {"case_id": "c", "trial": 1, "seed": 1, "input": {}}
    result = asyncio.run(converse(conversation, request, call, Users(tmp_path)))  # type: ignore[arg-type]
    assert result.tool_calls_given is given
