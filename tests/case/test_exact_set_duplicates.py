"""`exact_set` compares sets; `duplicates: keep` counts repeats (a multiset), and `validate`
warns about a repeated item that a set would swallow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from caseforge.checks import ExactSetCheck
from caseforge.cli import app

runner = CliRunner()


def grade(values: list[Any], actual: Any, **options: Any) -> tuple[str, str]:
    found = ExactSetCheck(mode="exact_set", values=values, **options).grade(actual)
    return found.status.value, found.reason


def test_a_set_ignores_repeats_and_a_multiset_counts_them() -> None:
    assert grade(["refund", "refund"], ["refund"]) == ("pass", "")
    assert grade(["refund", "refund"], ["refund"], duplicates="keep") == (
        "fail",
        "refund 1× (expected 2×)",
    )
    assert grade(["refund", "refund", "ship"], ["ship", "refund", "refund"], duplicates="keep") == (
        "pass",
        "",
    )
    assert grade(["a", "a", "b"], ["a", "c", "c", "a", "a"], duplicates="keep") == (
        "fail",
        "missing b; unexpected c ×2; a 3× (expected 2×)",
    )
    assert grade([{"id": 1}, {"id": 1}], [{"id": 1}, {"id": 1}], duplicates="keep")[0] == "pass"
    assert grade([1, 1], ["1", 1], duplicates="keep") == (
        "fail",
        'unexpected "1"; 1 1× (expected 2×)',
    )
    assert grade(["a"], "a", duplicates="keep") == ("fail", 'expected a list, got "a"')
    check = ExactSetCheck(mode="exact_set", values=["a", "a"], duplicates="keep")
    assert check.render() == 'exact_set ["a", "a"] (duplicates kept)'


def test_duplicates_takes_keep_or_ignore() -> None:
    with pytest.raises(ValueError, match="'ignore' or 'keep'"):
        ExactSetCheck.model_validate({"mode": "exact_set", "values": ["a"], "duplicates": "yes"})


CASE = """\
id: c1
input: {{ticket: two refunds for one order}}
expect:
  actions: {check}
  tool_calls:
    must_call: [{{name: refund, args: {{ids: {{mode: exact_set, values: [7, 7]}}}}}}]
conversation:
  max_turns: 1
  script:
    - say: refund both
      expect: {{labels: {{mode: exact_set, values: [x, y, x]}}}}
"""


def validate(tmp_path: Path, check: str) -> tuple[int, list[dict[str, Any]]]:
    suite = tmp_path / "s"
    (suite / "cases").mkdir(parents=True, exist_ok=True)
    (suite / "caseforge.yaml").write_text("name: s\nagent: {callable: 'a:run'}\n")
    (suite / "cases" / "c1.yaml").write_text(CASE.format(check=check))
    result = runner.invoke(app, ["validate", str(suite), "--json"])
    data = json.loads(result.stdout)
    return result.exit_code, [w for w in data["warnings"] if "repeat" in w["message"]]


def test_validate_warns_where_a_set_repeats_an_item(tmp_path: Path) -> None:
    code, warnings = validate(tmp_path, "{mode: exact_set, values: [refund, refund, ship]}")
    assert code == 0  # a warning, not an error
    assert [(w["line"], w["col"], w["field"]) for w in warnings] == [
        (4, 38, "expect.actions.values"),
        (6, 70, "expect.tool_calls.must_call.0.args.ids.values"),
        (11, 50, "conversation.script.0.expect.labels.values"),
    ]
    assert warnings[0]["message"].startswith('exact_set values repeat "refund": a set holds')
    assert "`duplicates: keep`" in warnings[0]["message"]
    _, kept = validate(tmp_path, "{mode: exact_set, values: [refund, refund], duplicates: keep}")
    assert [w["field"] for w in kept] == [
        "expect.tool_calls.must_call.0.args.ids.values",
        "conversation.script.0.expect.labels.values",
    ]
