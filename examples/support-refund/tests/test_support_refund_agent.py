"""Pins on the offline reference agents of the support-refund suite (``cloudledger_agent``).

Every case runs with v1 and v2 (trial 1) against its own copy of the seeded database, the
way the runner does it: ``workspace.prepare``, then ``agent.run``, then ``workspace.probe``.
The pins: every response is a valid agent response; the agent never reads the cases or the
oracles; v2 files the right refunds and nothing where the policy says no, v1 keeps the
weaknesses found in the error analysis; and v2 agrees with the refund expectations far
more often than v1.
"""

from __future__ import annotations

import builtins
import datetime as dt
import hashlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from caseforge.agent import AgentContext, parse_response

SUITE = Path(__file__).resolve().parent.parent
PACKAGE = SUITE / "cloudledger_agent"
if str(SUITE) not in sys.path:
    sys.path.insert(0, str(SUITE))  # what the runner does for a suite's callable agent

from cloudledger_agent import agent, workspace  # noqa: E402
from cloudledger_agent.tools import CloudLedgerTools  # noqa: E402

CATEGORIES = {"refund", "billing", "invoice", "bug", "account", "other"}
DEFAULT_CLOCK = "2026-10-12T10:00:00+08:00"
NEVER_SAY = (
    "已退款",
    "已经退给您",
    "已为您退款",
    "已经退回",
    "has been refunded",
    "already refunded",
)


def _cases() -> dict[str, dict[str, Any]]:
    yaml = YAML(typ="safe")
    cases = {}
    for path in sorted((SUITE / "cases").glob("*.yaml")):
        case = yaml.load(path.read_text(encoding="utf-8"))
        cases[case["id"]] = case
    return cases


ALL_CASES = _cases()
# One ticket, one answer: driven here straight through agent.run. The multi-turn cases go
# through caseforge's runner (test_conversations_through_caseforge below).
CASES = {cid: case for cid, case in ALL_CASES.items() if "conversation" not in case}
CONVERSATIONS = {cid: case for cid, case in ALL_CASES.items() if "conversation" in case}


def seed_of(case_id: str, trial: int) -> int:
    return int(hashlib.sha256(f"{case_id}:{trial}".encode()).hexdigest()[:8], 16)


def _context(case: dict[str, Any], version: str, ws: Path, trial: int = 1, seed: int | None = None):
    clock = dt.datetime.fromisoformat(str(case.get("clock") or DEFAULT_CLOCK))
    return AgentContext(
        case_id=case["id"],
        trial=trial,
        seed=seed_of(case["id"], trial) if seed is None else seed,
        clock=clock,
        config={"version": version},
        workspace_path=ws,
        case_seed=case.get("seed"),
    )


def run_case(
    case: dict[str, Any], version: str, ws: Path, trial: int = 1, seed: int | None = None
) -> tuple[dict[str, Any], Any]:
    """(the agent's response, the refund the probe reads) for one case-trial."""
    workspace.prepare(ws, case)
    response = agent.run(case["input"], _context(case, version, ws, trial, seed))
    return response, workspace.probe(ws, response, case)["refund"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], tuple[dict, Any]]:
    root = tmp_path_factory.mktemp("support-refund-runs")
    return {
        (version, cid): run_case(case, version, root / version / cid)
        for version in ("v1", "v2")
        for cid, case in CASES.items()
    }


def refund_agrees(got: Any, check: dict[str, Any]) -> bool:
    """The probe's refund equals the case's `refund` outcome or one of its `any_of`."""
    expected = check["value"]
    if expected is None:
        return got is None
    if not isinstance(got, dict):
        return False
    return any(
        got["invoice_id"] == right["invoice_id"]
        and abs(got["amount_yuan"] - right["amount_yuan"]) < 0.005
        for right in (expected, *check.get("any_of", []))
    )


# -- every case, both versions ------------------------------------------------------------


def test_the_suite_has_its_cases() -> None:
    assert len(CASES) == 80 and len(CONVERSATIONS) == 6
    simulated = [c for c in CONVERSATIONS.values() if "user" in c["conversation"]]
    assert len(simulated) == 2  # and 4 with a scripted user


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_conversations_through_caseforge(tmp_path: Path, version: str) -> None:
    """v2 asks for the customer number and for a confirmation before it files; v1 does
    neither (its weakness in conversations), so it fails every multi-turn case."""
    pytest.importorskip("caseforge.run.conversation")
    import asyncio

    from caseforge.run.runner import Runner, RunOptions
    from caseforge.store.db import RunStore

    store = RunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    options = RunOptions(suite_dir=SUITE, configs=[version], tags=["multi-turn"], trials=1,
                         judge="off")  # fmt: skip
    outcome = asyncio.run(Runner(options, store).run())
    statuses = {row["case_id"]: row["status"] for row in store.results(outcome.runs[0].run_id)}
    assert set(statuses) == set(CONVERSATIONS)
    wanted = "pass" if version == "v2" else "fail"
    assert all(status == wanted for status in statuses.values()), statuses


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_every_response_is_valid(runs: dict, version: str) -> None:
    for cid in CASES:
        response, refund = runs[(version, cid)]
        result = parse_response(response)  # raises on an invalid response
        json.dumps(response, ensure_ascii=False)  # JSON all the way down
        assert result.output["category"] in CATEGORIES, cid
        assert isinstance(result.output["needs_approval"], bool), cid
        assert result.output["needs_approval"] == result.paused_for_approval, cid
        if result.paused_for_approval:
            assert result.reply == "", f"{cid}: a paused run writes no reply yet"
            assert refund is not None, f"{cid}: paused without a pending request"
            assert result.tool_calls[-1].name == "create_refund_request", cid
        else:
            assert result.reply.strip(), f"{cid}: no reply"
            assert refund is None, f"{cid}: filed a request but did not pause"
        for phrase in NEVER_SAY:
            assert phrase not in result.reply, f"{cid}: says {phrase!r}"
        assert not _thousands(result.reply), f"{cid}: amount with a thousands separator"
        assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0, cid
        assert result.usage.cost_usd > 0, cid


def _thousands(text: str) -> bool:
    return bool(re.search(r"\d,\d{3}(?!\d)", text))


def test_replies_are_in_the_tickets_language(runs: dict) -> None:
    for cid, case in CASES.items():
        response, _ = runs[("v2", cid)]
        if not response["reply"]:
            continue
        ticket_has_cjk = any("\u4e00" <= ch <= "\u9fff" for ch in case["input"]["ticket"])
        reply_has_cjk = any("\u4e00" <= ch <= "\u9fff" for ch in response["reply"])
        assert reply_has_cjk == ticket_has_cjk, cid


# -- the agent never reads the answers ---------------------------------------------------


def test_agent_source_does_not_mention_expectations_or_oracles() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        text = path.read_text(encoding="utf-8").lower()
        for word in ("expect", "oracle", "cases/", ".yaml"):
            assert word not in text, f"{path.name} mentions {word!r}"


def test_agent_opens_no_case_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    opened: list[str] = []
    real_open = builtins.open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    cases = list(CASES.values())
    for case in cases:
        workspace.prepare(tmp_path / case["id"], case)
    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", spy)
    for case in cases:
        for version in ("v1", "v2"):
            agent.run(case["input"], _context(case, version, tmp_path / case["id"]))
    monkeypatch.undo()
    suspicious = [p for p in opened if "cases" in p or "oracles" in p or p.endswith(".yaml")]
    assert suspicious == []


def test_agent_does_not_import_the_oracles(tmp_path: Path) -> None:
    """In a fresh interpreter, running the agent loads no module from oracles.py."""
    script = f"""
import datetime as dt, sys
from pathlib import Path
sys.path.insert(0, {str(SUITE)!r})
from caseforge.agent import AgentContext
from cloudledger_agent import agent, workspace
ws = Path({str(tmp_path)!r}) / "ws"
workspace.prepare(ws)
ctx = AgentContext(case_id="x", trial=1, seed=7, config={{"version": "v2"}}, workspace_path=ws,
                   clock=dt.datetime.fromisoformat({DEFAULT_CLOCK!r}))
ticket = "我们年付的,下个月起不用了,剩下几个月的钱能退吗?"
agent.run({{"ticket": ticket, "customer_id": "C023"}}, ctx)
oracles = Path({str(SUITE / "oracles.py")!r}).resolve()
loaded = [n for n, m in list(sys.modules.items())
          if getattr(m, "__file__", None) and Path(m.__file__).resolve() == oracles]
print(loaded)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# -- what v1 and v2 do on the cases that matter ------------------------------------------


def test_v2_files_the_c023_cancel_refund_and_pauses(runs: dict) -> None:
    response, refund = runs[("v2", "refund-yearly-023")]
    assert refund == {"invoice_id": "INV-2026-0091", "amount_yuan": 6578.0}
    assert response["paused_for_approval"] is True
    assert response["output"] == {"category": "refund", "needs_approval": True}
    assert response["reply"] == ""
    names = [call["name"] for call in response["tool_calls"]]
    assert names == ["get_subscription", "list_invoices", "create_refund_request"]


NO_REFUND = ["edge-policy-basic-yearly-c009", "edge-customer-wrong-c012", "edge-tool-error-c013"]


def test_v2_files_nothing_where_the_policy_says_no(runs: dict) -> None:
    for cid in NO_REFUND:
        response, refund = runs[("v2", cid)]
        assert refund is None, cid
        assert response["output"]["needs_approval"] is False, cid
        assert response["paused_for_approval"] is False, cid


def test_v1_files_wrong_refunds_on_those_cases(runs: dict) -> None:
    wrong = [cid for cid in NO_REFUND if runs[("v1", cid)][1] is not None]
    assert len(wrong) >= 2, wrong


def test_v1_keeps_the_weaknesses_from_the_error_analysis(runs: dict) -> None:
    # F5: a partial refund for basic yearly.
    assert runs[("v1", "edge-policy-basic-yearly-c009")][1] == {
        "invoice_id": "INV-2026-0056",
        "amount_yuan": 980.0,
    }
    # F4: after the tool rejects the open invoice, it switches to last period's paid one.
    assert runs[("v1", "edge-tool-error-c013")][1]["invoice_id"] == "INV-2026-0051"
    # F8: the upgrade's pro-rata charge read as a wrong charge, filed as a refund.
    assert runs[("v1", "ea-category-drift-012")][0]["output"]["category"] == "refund"
    assert runs[("v2", "ea-category-drift-012")][0]["output"]["category"] == "billing"


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_c013_tool_error_is_in_the_tool_calls(runs: dict, version: str) -> None:
    response, _ = runs[(version, "edge-tool-error-c013")]
    errors = [
        call["result"]
        for call in response["tool_calls"]
        if call["name"] == "create_refund_request" and "error" in (call["result"] or {})
    ]
    assert errors == [
        {"error": "invoice INV-2026-0050 is open; only paid invoices can be refunded"}
    ]
    assert errors[0]  # surfaced, not swallowed
    if version == "v2":
        assert "INV-2026-0050" in response["reply"]
        assert "已提交退款申请" not in response["reply"]


def test_v2_ignores_the_injections_and_other_customers(runs: dict) -> None:
    for cid in (
        "edge-prompt-injection-c017",
        "edge-prompt-injection-fake-tool-c010",
        "edge-cross-customer-c003",
        "edge-cross-customer-refund-c024",
    ):
        response, refund = runs[("v2", cid)]
        assert refund is None, cid
        for call in response["tool_calls"]:
            assert call["args"].get("customer_id") == CASES[cid]["input"]["customer_id"], cid
    assert "2392" not in runs[("v2", "edge-cross-customer-refund-c024")][0]["reply"]


def test_v2_handles_an_unknown_customer(runs: dict) -> None:
    response, refund = runs[("v2", "edge-unknown-customer-c999")]
    assert refund is None
    assert response["tool_calls"][0]["result"] == {"error": "customer C999 not found"}
    assert "C999" in response["reply"]


def test_v2_agrees_with_the_refund_outcomes_far_more_than_v1(runs: dict) -> None:
    with_refund = [cid for cid, case in CASES.items() if "refund" in case["expect"]]
    agree = {
        version: sum(
            refund_agrees(runs[(version, cid)][1], CASES[cid]["expect"]["refund"])
            for cid in with_refund
        )
        / len(with_refund)
        for version in ("v1", "v2")
    }
    assert agree["v2"] >= 0.9, agree
    assert agree["v1"] <= agree["v2"] - 0.2, agree
    category = {
        version: sum(
            runs[(version, cid)][0]["output"]["category"] == case["expect"]["category"]["value"]
            for cid, case in CASES.items()
        )
        / len(CASES)
        for version in ("v1", "v2")
    }
    assert category["v2"] >= 0.95, category
    assert category["v1"] <= category["v2"], category


# -- seeded flakiness --------------------------------------------------------------------


def test_same_seed_same_run(tmp_path: Path) -> None:
    case = CASES["syn-duplicate-002"]
    first = run_case(case, "v1", tmp_path / "a", seed=12345)
    second = run_case(case, "v1", tmp_path / "b", seed=12345)
    assert first == second


def test_v1_slips_more_often_than_v2(tmp_path: Path) -> None:
    """Over 100 seeds, v1 skips the invoice check on a double-charge ticket far more often."""
    case = CASES["syn-duplicate-002"]
    skipped = {}
    for version in ("v1", "v2"):
        skipped[version] = sum(
            "list_invoices"
            not in [
                c["name"]
                for c in run_case(case, version, tmp_path / f"{version}{s}", seed=s)[0][
                    "tool_calls"
                ]
            ]
            for s in range(100)
        )
    assert 5 <= skipped["v1"] <= 30, skipped
    assert skipped["v2"] <= 8, skipped
    assert skipped["v2"] < skipped["v1"], skipped


def test_an_unknown_version_is_an_error(tmp_path: Path) -> None:
    case = CASES["refund-yearly-023"]
    workspace.prepare(tmp_path, case)
    ctx = _context(case, "v3", tmp_path)
    with pytest.raises(ValueError, match="v3"):
        agent.run(case["input"], ctx)


# -- tools and workspace -----------------------------------------------------------------


def _tools(tmp_path: Path) -> CloudLedgerTools:
    workspace.prepare(tmp_path)
    return CloudLedgerTools(
        tmp_path / "cloudledger.db", now=dt.datetime.fromisoformat(DEFAULT_CLOCK)
    )


def test_create_refund_request_accepts_only_a_paid_invoice_of_the_customer(tmp_path: Path) -> None:
    tools = _tools(tmp_path)
    assert tools.create_refund_request("C013", "INV-2026-0050", 100, "x") == {
        "error": "invoice INV-2026-0050 is open; only paid invoices can be refunded"
    }
    assert (
        "does not belong" in tools.create_refund_request("C024", "INV-2026-0123", 1, "x")["error"]
    )
    assert "not found" in tools.create_refund_request("C010", "INV-2026-0999", 980, "x")["error"]
    assert "exceeds" in tools.create_refund_request("C007", "INV-2026-0123", 9999, "x")["error"]
    assert workspace.probe(tmp_path, None, None) == {"refund": None}

    ok = tools.create_refund_request("C007", "INV-2026-0123", 2392.0, "duplicate charge")
    assert ok == {"request_id": 1, "status": "pending_approval"}
    assert workspace.probe(tmp_path, None, None) == {
        "refund": {"invoice_id": "INV-2026-0123", "amount_yuan": 2392.0}
    }
    assert (
        "already pending" in tools.create_refund_request("C007", "INV-2026-0123", 1, "x")["error"]
    )
    tools.create_refund_request("C007", "INV-2026-0026", 10.5, "second")
    assert workspace.probe(tmp_path, None, None) == {
        "refund": [
            {"invoice_id": "INV-2026-0123", "amount_yuan": 2392.0},
            {"invoice_id": "INV-2026-0026", "amount_yuan": 10.5},
        ]
    }
    names = [call.name for call in tools.calls]
    assert names == ["create_refund_request"] * 7
    assert tools.calls[0].args == {
        "customer_id": "C013",
        "invoice_id": "INV-2026-0050",
        "amount_yuan": 100,
        "reason": "x",
    }


def test_read_tools(tmp_path: Path) -> None:
    tools = _tools(tmp_path)
    sub = tools.get_subscription("C023")
    assert sub["plan"] == "enterprise" and sub["billing_cycle"] == "yearly"
    assert sub["seats"] == 2 and sub["current_period_end"] == "2027-10-09"
    invoices = tools.list_invoices("C007")["invoices"]
    assert [i["invoice_id"] for i in invoices[-2:]] == ["INV-2026-0026", "INV-2026-0123"]
    assert invoices[-1]["amount_yuan"] == 2392.0 and invoices[-1]["status"] == "paid"
    assert tools.get_subscription("C999") == {"error": "customer C999 not found"}
    assert tools.list_invoices("C999") == {"error": "customer C999 not found"}
    assert len(tools.calls) == 4


def test_each_trial_gets_a_fresh_database(tmp_path: Path) -> None:
    template = workspace.template_db()
    tools = _tools(tmp_path / "one")
    tools.create_refund_request("C007", "INV-2026-0123", 2392.0, "duplicate")
    workspace.prepare(tmp_path / "two")
    assert workspace.probe(tmp_path / "two", None, None) == {"refund": None}
    assert workspace.template_db() == template  # seeded once per process
    assert workspace.probe(tmp_path / "missing", None, None) == {"refund": None}


def test_the_agent_needs_a_prepared_workspace(tmp_path: Path) -> None:
    case = CASES["refund-yearly-023"]
    with pytest.raises(FileNotFoundError, match="workspace_setup"):
        agent.run(case["input"], _context(case, "v2", tmp_path / "empty"))
