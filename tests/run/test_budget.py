"""--max-cost: an estimate is reserved before each case-trial starts, in-process model calls
are refused at the limit, and the stop message gives the report's own numbers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import respx

from caseforge.errors import BudgetExceeded
from caseforge.llm.budget import CostBudget
from caseforge.run.runner import Runner, RunOptions, RunOutcome
from caseforge.run.trial import RetryPolicy
from caseforge.store.db import RunStore
from tests.conftest import MakeToySuite, report_json
from tests.llm.wire import BASE, completion, ok

FAST_RETRY = RetryPolicy(attempts=1)
# 1,000 prompt and 500 completion tokens of gpt-4.1-mini: $0.0012 a call.
CALL_USD = (1000 * 0.40 + 500 * 1.60) / 1e6


def run(store: RunStore, **options: Any) -> RunOutcome:
    options.setdefault("retry", FAST_RETRY)
    return asyncio.run(Runner(RunOptions(**options), store).run())


def test_the_first_case_trial_runs_alone_then_reservations_cover_those_in_flight() -> None:
    async def scenario() -> list[object]:
        budget = CostBudget(0.035)
        seen: list[object] = [await budget.start()]
        second = asyncio.create_task(budget.start())
        await asyncio.sleep(0)
        seen.append(second.done())  # no estimate yet: it waits for the first
        await budget.finish(0.01, 0.0)
        seen.append(await second)  # 0.01 spent + 0.01 reserved for it: fits
        seen.append(await budget.start())  # 0.01 + 2 × 0.01 = 0.03: fits
        third = asyncio.create_task(budget.start())  # 0.01 + 3 × 0.01 > 0.035: waits
        await asyncio.sleep(0)
        seen.append(third.done())
        await budget.finish(0.01, 0.0)
        await budget.finish(0.01, 0.0)  # 0.03 spent, nothing in flight: the next would overshoot
        seen.append(await third)
        seen.append(budget.exhausted)
        return seen

    assert asyncio.run(scenario()) == [True, False, True, True, False, False, True]


def test_a_model_call_is_refused_once_the_limit_is_reached() -> None:
    budget = CostBudget(0.002)
    budget.before_model_call()
    budget.charge_model_call(0.0015)
    budget.before_model_call()  # 0.0015 < 0.002: allowed, though it may overshoot
    budget.charge_model_call(0.0015)
    with pytest.raises(BudgetExceeded, match=r"--max-cost \$0.002 reached"):
        budget.before_model_call()
    assert budget.exhausted


def test_max_cost_never_starts_a_case_trial_the_estimate_says_overshoots(
    toy_suite: MakeToySuite, store: RunStore
) -> None:
    cases = [{"id": f"c{i:02d}", "input": {"cost": 0.01}} for i in range(12)]
    root = toy_suite(cases, concurrency=4)
    stopped = run(store, suite_dir=root, max_cost=0.035)
    assert stopped.status == "stopped"
    report = report_json(store, stopped.runs[0].run_id)
    spent = report["summary"]["cost_usd"]
    assert spent == pytest.approx(0.03)  # at 4 in flight it would have been 0.04 or more
    assert store.count(stopped.runs[0].run_id) == 3
    reason = stopped.stop_reason or ""
    assert f"3 case-trials cost ${spent:.4f} (agent ${spent:.4f}, judge $0.0000)" in reason
    assert "the next was estimated at $0.0100" in reason
    resumed = run(store, suite_dir=root, resume="latest")
    assert resumed.status == "finished" and store.count(stopped.runs[0].run_id) == 12


def test_max_cost_zero_starts_nothing(toy_suite: MakeToySuite, store: RunStore) -> None:
    root = toy_suite([{"id": "a", "input": {}}])
    stopped = run(store, suite_dir=root, max_cost=0)
    assert stopped.status == "stopped" and store.count(stopped.runs[0].run_id) == 0


@respx.mock
def test_in_process_model_calls_are_capped_and_the_cut_trial_is_left_for_resume(
    toy_suite: MakeToySuite, store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", BASE)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    route = respx.post(f"{BASE}/chat/completions").mock(
        return_value=ok(completion("fine", prompt_tokens=1000, completion_tokens=500))
    )
    cases = [
        {"id": "a-cheap", "input": {"behaviour": "llm", "calls": 1}},
        {"id": "b-dear", "input": {"behaviour": "llm", "calls": 5}},
    ]
    root = toy_suite(cases, concurrency=1)
    stopped = run(store, suite_dir=root, max_cost=0.004, no_cache=True)
    # a-cheap: one call. b-dear: calls while spent + in flight < $0.004, i.e. 3, then refused.
    assert route.call_count == 4
    assert stopped.status == "stopped"
    rows = list(store.results(stopped.runs[0].run_id))
    assert [r["case_id"] for r in rows] == ["a-cheap"]
    report = report_json(store, stopped.runs[0].run_id)
    # The agent reported no usage: the cost of its ctx.llm() calls is recorded for it.
    assert report["summary"]["cost_usd"] == pytest.approx(CALL_USD)
    reason = stopped.stop_reason or ""
    assert "1 case-trial(s) cut short by a refused model call ($0.0036, not stored)" in reason
    resumed = run(store, suite_dir=root, resume="latest", no_cache=True)
    assert resumed.executed == 1 and resumed.status == "finished"
    assert store.get_run(stopped.runs[0].run_id).status == "finished"
