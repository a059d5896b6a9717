"""`validate --fix` moves outcome values off the retired alt_<key>s convention: the file keeps
its comments and layout, the verdicts stay the same, and a JSONL file changes only its
changed lines."""

from __future__ import annotations

import json
from pathlib import Path

from ruamel.yaml import YAML
from typer.testing import CliRunner

from caseforge.case.fix import expand, fix_suite
from caseforge.case.load import load_case
from caseforge.checks import OutcomeCheck
from caseforge.cli import app

runner = CliRunner()
CONFIG = "name: s\nagent: {callable: 'a:run'}\noutcome_probe: 'probe:read'\n"

# As support-refund's duplicate-charge cases were written before any_of.
OLD = """\
id: dup-c007
input:
  ticket: I was charged twice on Oct 8
  customer_id: C007
expect:
  category: {mode: exact, value: refund}
  # either charge is the right one to refund
  refund:
    mode: outcome
    value: {invoice_id: INV-2026-0123, amount_yuan: 2392.0, alt_invoice_ids: [INV-2026-0026]}
  reply: {must_not_include: ["has been refunded"]}
tags: [edge, duplicate]
source: manual
"""

NEW = """\
id: dup-c007
input:
  ticket: I was charged twice on Oct 8
  customer_id: C007
expect:
  category: {mode: exact, value: refund}
  # either charge is the right one to refund
  refund:
    mode: outcome
    value: {invoice_id: INV-2026-0123, amount_yuan: 2392.0}
    any_of: [{invoice_id: INV-2026-0026, amount_yuan: 2392.0}]
  reply: {must_not_include: ["has been refunded"]}
tags: [edge, duplicate]
source: manual
"""


def _suite(tmp_path: Path, files: dict[str, str]) -> Path:
    suite = tmp_path / "s"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text(CONFIG)
    (suite / "probe.py").write_text("def read(workspace, result, case):\n    return {}\n")
    for name, text in files.items():
        (suite / "cases" / name).write_text(text, encoding="utf-8")
    return suite


def test_validate_fix_rewrites_the_value_and_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {"dup.yaml": OLD, "plain.yaml": OLD.replace("dup-c007", "p")
                              .replace(", alt_invoice_ids: [INV-2026-0026]", "")})  # fmt: skip
    before = runner.invoke(app, ["validate", str(suite)])
    assert before.exit_code == 1 and "validate SUITE --fix" in before.output
    fixed = runner.invoke(app, ["validate", str(suite), "--fix"])
    assert fixed.exit_code == 0, fixed.output
    assert "dup.yaml:10: expect.refund: alt_invoice_ids -> 1 alternative(s) under any_of" in (
        fixed.output
    )
    assert "1 outcome check(s) moved to any_of" in fixed.output
    assert (suite / "cases" / "dup.yaml").read_text(encoding="utf-8") == NEW
    again = runner.invoke(app, ["validate", str(suite), "--fix"])
    assert again.exit_code == 0 and "nothing to fix" in again.output


def test_the_fixed_check_accepts_and_refuses_what_the_old_one_did(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {"dup.yaml": OLD})
    fix_suite(suite)
    check = load_case(suite / "cases" / "dup.yaml").expect["refund"]
    assert isinstance(check, OutcomeCheck)
    for invoice in ("INV-2026-0123", "INV-2026-0026"):
        verdict = check.grade({"invoice_id": invoice, "amount_yuan": 2392.0})
        assert verdict.status == "pass", invoice
    wrong = check.grade({"invoice_id": "INV-2026-0026", "amount_yuan": 1.0})
    assert wrong.status == "fail"


def test_several_alt_keys_become_every_combination_block_style_and_comments_kept(
    tmp_path: Path,
) -> None:
    text = """\
id: multi
input: {}
expect:
  refund:
    mode: outcome
    value:
      invoice_id: A  # the later one
      amount_yuan: 10
      alt_invoice_ids:
      - B
      alt_amount_yuans: [11]
      alt_channels: [sms]
    any_of:
    - {invoice_id: C, amount_yuan: 10}
source: manual
"""
    suite = _suite(tmp_path, {"multi.yaml": text})
    [fix] = fix_suite(suite)
    assert fix.retired == ("alt_invoice_ids", "alt_amount_yuans", "alt_channels")
    assert fix.alternatives == 4  # A/11, B/10, B/11 and the C kept; no channel key to vary
    new = (suite / "cases" / "multi.yaml").read_text()
    assert "invoice_id: A  # the later one" in new
    data = YAML(typ="safe").load(new)["expect"]["refund"]
    assert data["value"] == {"invoice_id": "A", "amount_yuan": 10}
    assert data["any_of"] == [
        {"invoice_id": "A", "amount_yuan": 11},
        {"invoice_id": "B", "amount_yuan": 10},
        {"invoice_id": "B", "amount_yuan": 11},
        {"invoice_id": "C", "amount_yuan": 10},
    ]
    assert "\n    - invoice_id: B\n" in new  # the file's own dash indentation, block style
    assert runner.invoke(app, ["validate", str(suite)]).exit_code == 0


def test_expand_drops_an_empty_list_and_one_for_a_key_never_compared() -> None:
    assert expand({"a": 1, "alt_as": []}) == [{"a": 1}]
    assert expand({"a": 1, "alt_bs": [2]}) == [{"a": 1}]  # no "b": it was never compared
    assert expand({"a": 1, "alt_as": [1, 2]}) == [{"a": 1}, {"a": 2}]  # no repeat


def test_a_jsonl_file_changes_only_its_old_lines(tmp_path: Path) -> None:
    old = {"id": "j1", "input": {}, "source": "manual",
           "expect": {"r": {"mode": "outcome", "value": {"k": 1, "alt_ks": [2]}}}}  # fmt: skip
    keep = '{"id": "j2", "input": {},   "expect": {"r": {"mode": "outcome", "value": null}}, "source": "manual"}'  # noqa: E501
    suite = _suite(tmp_path, {"bulk.jsonl": json.dumps(old) + "\r\n" + keep + "\n"})
    result = runner.invoke(app, ["validate", str(suite), "--fix", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["fixed"][0]["line"] == 1 and report["fixed"][0]["alternatives"] == 1
    first, second = (suite / "cases" / "bulk.jsonl").read_bytes().decode().split("\r\n")
    assert json.loads(first)["expect"]["r"] == {
        "mode": "outcome", "value": {"k": 1}, "any_of": [{"k": 2}]
    }  # fmt: skip
    assert second == keep + "\n"  # byte for byte


def test_an_oracle_still_returning_alt_keys_is_named(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {"dup.yaml": OLD.replace(
        "    mode: outcome\n", "    mode: outcome\n    oracle: refund\n")})  # fmt: skip
    config = suite / "caseforge.yaml"
    config.write_text(config.read_text() + "oracles: oracles.py\n")
    (suite / "oracles.py").write_text(
        "from caseforge.oracle import oracle\n\n@oracle('refund')\ndef refund(input):\n"
        "    return {'invoice_id': 'INV-2026-0123', 'amount_yuan': 2392.0,\n"
        "            'alt_invoice_ids': ['INV-2026-0026']}\n"
    )
    result = runner.invoke(app, ["validate", str(suite), "--fix"])
    assert "its oracle 'refund' must now return AnyOf(value, [others])" in result.output
    assert result.exit_code == 1
    assert "oracle 'refund' returns alt_invoice_ids" in result.output
    assert "Traceback" not in result.output
