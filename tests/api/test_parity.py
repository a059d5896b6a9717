"""The library and the CLI cannot drift apart: every option of each command maps to a
parameter of its library function (or is named as left out, with the reason), and the
library raises the CLI's errors with the CLI's codes."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from typer.testing import CliRunner

from caseforge import api
from caseforge.api import measure
from caseforge.api.run import RUN_LEFT_OUT, RUN_OPTIONS, RunSettings
from caseforge.cli import app
from caseforge.cli.root import COMMANDS
from caseforge.errors import TooManyAgentErrors, UsageError
from tests.helpers import write_toy_suite

EXPECT = {"category": {"mode": "exact", "value": "refund"}}
TOY = {"name": "toy", "agent": {"callable": "tests.run.toy_agent:run"}, "trials": 1}


def _options(command: str) -> set[str]:
    """The command's options, each by its first long name (``--keep-workspaces``)."""
    loaded = COMMANDS[command].load()
    found = set()
    for param in loaded.params:
        if getattr(param, "param_type_name", "") != "option":
            continue
        names = [o for o in param.opts if o.startswith("--")]
        if names:
            found.add(names[0])
    return found


def test_every_run_option_is_a_run_setting() -> None:
    assert _options("run") == set(RUN_OPTIONS) | set(RUN_LEFT_OUT)
    assert set(RUN_OPTIONS.values()) == set(get_type_hints(RunSettings))


@pytest.mark.parametrize(
    ("command", "function", "table", "left_out"),
    [
        ("validate", api.validate_suite, measure.VALIDATE_OPTIONS, measure.VALIDATE_LEFT_OUT),
        ("report", api.build_report, measure.REPORT_OPTIONS, {}),
        ("baseline", api.make_baseline, measure.BASELINE_OPTIONS, {}),
        ("compare", api.compare_runs, measure.COMPARE_OPTIONS, measure.COMPARE_LEFT_OUT),
        ("gate", api.gate_run, measure.GATE_OPTIONS, measure.GATE_LEFT_OUT),
    ],
)
def test_every_option_of_a_command_is_a_parameter_of_its_function(
    command: str, function: Any, table: dict[str, str], left_out: dict[str, str]
) -> None:
    assert _options(command) == set(table) | set(left_out)
    parameters = set(inspect.signature(function).parameters)
    assert set(table.values()) <= parameters, set(table.values()) - parameters
    assert all(reason for reason in left_out.values())


@pytest.mark.parametrize(
    ("settings", "cli", "says"),
    [
        ({"trials": 0}, ["--trials", "0"], "--trials must be at least 1"),
        ({"max_error_rate": 2}, ["--max-error-rate", "2"], "--max-error-rate must be from 0"),
        ({"cases": ["nope"]}, ["--case", "nope"], "--case: no such case"),
        ({"fixtures": "sometimes"}, ["--fixtures", "sometimes"], "--fixtures"),
    ],
)
def test_the_library_raises_what_the_command_exits_with(
    tmp_path: Path, settings: dict[str, Any], cli: list[str], says: str
) -> None:
    suite = write_toy_suite(tmp_path / "toy", [{"id": "a", "input": {}}], TOY, expect=EXPECT)
    store = f"sqlite:///{tmp_path / 's.db'}"
    with pytest.raises(UsageError, match=says) as raised:
        api.run_suite(suite, store=store, **settings)
    done = CliRunner().invoke(app, ["run", str(suite), "-q", "--store", store, *cli])
    assert done.exit_code == raised.value.exit_code == 2, done.output
    assert says in done.output


def test_the_library_applies_the_agent_error_limit_and_writes_out(tmp_path: Path) -> None:
    """run_suite never applied --max-error-rate, so it never raised TooManyAgentErrors."""
    cases = [
        {"id": "a", "input": {"behaviour": "crash"}},
        {"id": "b", "input": {"behaviour": "crash"}},
        {"id": "c", "input": {}},
    ]
    suite = write_toy_suite(tmp_path / "toy", cases, TOY, expect=EXPECT)
    store = f"sqlite:///{tmp_path / 's.db'}"
    out = tmp_path / "out"
    with pytest.raises(TooManyAgentErrors, match=r"2 of 3 case-trials were agent errors"):
        api.run_suite(suite, store=store, out=out, timeout=30)
    assert json.loads((out / "report.json").read_text())["summary"]["errors"] == 2
    [report] = api.run_suite(suite, store=store, max_error_rate=0.7, timeout=30)
    assert report.summary.errors == 2
