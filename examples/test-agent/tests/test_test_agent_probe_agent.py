"""Tests of the suite's reference test agent, ``probe_agent.agent:run`` (v1 and v2).

The agent is imported the way the runner imports it: the suite folder on ``sys.path``,
then the ``agent.callable`` spec of ``caseforge.yaml``. Each case runs three trials with
seeds 1, 2 and 3; expectations come from the case files, never from the agent.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from caseforge.agent import AgentContext, parse_response
from caseforge.case.model import Case
from caseforge.testing import expected_of, load_suite

SUITE = Path(__file__).resolve().parents[1]
AGENT_DIR = SUITE / "probe_agent"
TRIALS = (1, 2, 3)
VERSIONS = ("v1", "v2")
RACE = "double-booking-race"

suite = load_suite(SUITE)
CASES: list[Case] = sorted((loaded.case for loaded in suite.cases), key=lambda c: c.id)

AgentFn = Callable[[dict[str, Any], Any], dict[str, Any]]


@pytest.fixture(scope="module")
def agent() -> Iterator[AgentFn]:
    assert suite.config.agent is not None and suite.config.agent.callable is not None
    module_name, _, attr = suite.config.agent.callable.partition(":")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(SUITE))
        yield getattr(importlib.import_module(module_name), attr)


def _ctx(case: Case, version: str, trial: int, workspace: Path) -> AgentContext:
    assert case.clock is not None and case.seed is not None
    return AgentContext(
        case_id=case.id,
        trial=trial,
        seed=trial,
        clock=case.clock,
        config={"version": version},
        workspace_path=workspace,
        case_seed=case.seed,
    )


def _run(agent: AgentFn, case: Case, version: str, trial: int, tmp: Path) -> dict[str, Any]:
    return agent(dict(case.input), _ctx(case, version, trial, tmp / f"{version}-{trial}"))


def _bugs(case: Case) -> list[str]:
    return list(expected_of(case, "bugs"))


# --- every case, both versions ----------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_response_follows_the_protocol(
    agent: AgentFn, case: Case, version: str, tmp_path: Path
) -> None:
    for trial in TRIALS:
        response = _run(agent, case, version, trial, tmp_path)
        result = parse_response(json.loads(json.dumps(response)))  # JSON all the way
        output = result.output
        assert set(output) == {"bugs", "task_success", "report"}
        assert output["bugs"] == sorted(set(output["bugs"]))
        assert output["task_success"] is expected_of(case, "task_success") is True
        assert output["report"] and result.reply == output["report"]
        for bug in output["bugs"]:
            assert bug in output["report"]
        assert result.tool_calls and result.tool_calls[0].name == "describe"
        assert all(call.args is not None and call.result is not None for call in result.tool_calls)
        assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
        assert result.usage.cost_usd == pytest.approx(0.002 * len(result.tool_calls))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_v2_finds_exactly_the_bugs_of_every_case(
    agent: AgentFn, case: Case, tmp_path: Path
) -> None:
    for trial in TRIALS:
        assert _run(agent, case, "v2", trial, tmp_path)["output"]["bugs"] == _bugs(case), trial


def test_v1_misses_the_race_on_every_booking_case_that_has_it(
    agent: AgentFn, tmp_path: Path
) -> None:
    racy = [c for c in CASES if RACE in _bugs(c)]
    assert racy
    for case in racy:
        for trial in TRIALS:
            assert RACE not in _run(agent, case, "v1", trial, tmp_path)["output"]["bugs"]


def test_v1_reports_a_bug_on_a_clean_case(agent: AgentFn, tmp_path: Path) -> None:
    clean = [c for c in CASES if not _bugs(c)]
    assert clean
    reported = {
        (case.id, trial): _run(agent, case, "v1", trial, tmp_path)["output"]["bugs"]
        for case in clean
        for trial in TRIALS
    }
    assert any(reported.values()), reported


def test_v1_trials_differ_and_v2_trials_do_not(agent: AgentFn, tmp_path: Path) -> None:
    def plans(version: str, case: Case) -> set[tuple[str, ...]]:
        return {
            tuple(c["name"] for c in _run(agent, case, version, t, tmp_path)["tool_calls"])
            for t in TRIALS
        }

    assert any(len(plans("v1", case)) > 1 for case in CASES)
    assert all(len(plans("v2", case)) == 1 for case in CASES)


@pytest.mark.parametrize("version", VERSIONS)
def test_deterministic_for_a_seed(agent: AgentFn, version: str, tmp_path: Path) -> None:
    for case in CASES:
        first = _run(agent, case, version, 2, tmp_path)
        assert _run(agent, case, version, 2, tmp_path) == first, case.id


def test_the_seed_changes_the_inputs_not_the_verdict(agent: AgentFn, tmp_path: Path) -> None:
    case = next(c for c in CASES if c.id == "wallet-01")
    runs = [_run(agent, case, "v2", t, tmp_path) for t in TRIALS]
    assert len({json.dumps(r["tool_calls"]) for r in runs}) == len(TRIALS)
    assert all(r["output"]["bugs"] == _bugs(case) for r in runs)


def test_unknown_build_is_a_failed_task_not_a_crash(agent: AgentFn, tmp_path: Path) -> None:
    case = CASES[0]
    response = agent({**case.input, "build": "wallet@b00"}, _ctx(case, "v2", 1, tmp_path))
    assert response["output"]["task_success"] is False
    assert response["output"]["bugs"] == []
    parse_response(response)


def test_unknown_version_is_refused(agent: AgentFn, tmp_path: Path) -> None:
    case = CASES[0]
    ctx = _ctx(case, "v1", 1, tmp_path)
    ctx.config = {"version": "v9"}
    with pytest.raises(ValueError, match="unknown version"):
        agent(dict(case.input), ctx)


# --- the agent never reads the answer key -----------------------------------------------------

FORBIDDEN = re.compile(r"BUILDS|planted|expect|oracle|\._", re.IGNORECASE)


def _code_without_docstrings(path: Path) -> str:
    """The module's code as Python sees it: comments dropped, docstrings removed."""
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(tree)


@pytest.mark.parametrize("path", sorted(AGENT_DIR.glob("*.py")), ids=lambda p: p.name)
def test_agent_code_never_reads_the_answer_key(path: Path) -> None:
    code = _code_without_docstrings(path)
    hits = sorted({m.group(0) for m in FORBIDDEN.finditer(code)})
    assert not hits, f"{path.name} mentions {hits} outside its docstrings"
    tree = ast.parse(code)
    private = [
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_")
    ]
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") or alias.name == "BUILDS"
    ]
    modules = [
        node.module or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith(("sut_systems._", "caseforge", "oracles"))
    ]
    assert not (private or imported or modules), (private, imported, modules)


def test_agent_documents_what_it_never_reads() -> None:
    doc = ast.get_docstring(ast.parse((AGENT_DIR / "agent.py").read_text("utf-8"))) or ""
    assert "What it never reads" in doc
    assert "task_success" in doc and "cost_usd" in doc


def test_the_grep_reads_code_and_skips_docstrings(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""Never reads BUILDS."""\n\n\ndef f(s):\n    """Nor s._faults."""\n')
    assert not FORBIDDEN.search(_code_without_docstrings(sample))
    for code in (
        "import sut_systems\nx = sut_systems.BUILDS\n",
        "def f(s):\n    return s._faults\n",
    ):
        sample.write_text(code)
        assert FORBIDDEN.search(_code_without_docstrings(sample)), code
