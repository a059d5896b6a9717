"""`group:` keeps a family of near-identical cases on one side of the dev/test split."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from caseforge.case.split import SplitCase, plan_split, split_groups
from caseforge.cli import app

runner = CliRunner()


def family(group: str, n: int, split: str | None = None) -> list[SplitCase]:
    return [SplitCase(f"{group}-{i}", "refund", split, False, group) for i in range(n)]


def test_a_family_lands_on_one_side_whatever_its_ids_hash_to() -> None:
    cases = [*family("cancel-both", 6), *family("exchange", 6), *family("address", 6)]
    plan = plan_split(cases)
    for group in ("cancel-both", "exchange", "address"):
        assert len({plan[c.id] for c in cases if c.group == group}) == 1, group
    ungrouped = [SplitCase(f"solo-{i}", "refund", None, False) for i in range(40)]
    mixed = plan_split(ungrouped)
    assert set(mixed.values()) == {"dev", "test"}  # without groups, ids spread as before


def test_a_pinned_member_takes_its_family_with_it() -> None:
    cases = family("f", 4)
    cases[2] = SplitCase("f-2", "refund", "test", True, "f")  # pinned by hand, with a note
    assert set(plan_split(cases).values()) == {"test"}
    cases[2] = SplitCase("f-2", "refund", "dev", True, "f")
    assert set(plan_split(cases).values()) == {"dev"}


def test_a_family_split_today_stays_until_reassigned() -> None:
    cases = [*family("f", 2, "dev"), *family("g", 2, "test")]
    cases[1] = SplitCase("f-1", "refund", "test", False, "f")
    plan = plan_split(cases)
    assert (plan["f-0"], plan["f-1"]) == ("dev", "test")  # kept: adding cases moves nothing
    assert split_groups([(c.id, c.group, plan[c.id]) for c in cases]) == {"f": ["f-0", "f-1"]}
    joined = plan_split(cases, reassign=True)
    assert joined["f-0"] == joined["f-1"]


def test_validate_warns_about_a_split_family_and_split_reassign_joins_it(tmp_path: Path) -> None:
    suite = tmp_path / "s"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: s\nagent: {callable: 'a:run'}\n")
    for n, split in enumerate(["dev", "test", "dev"]):
        (suite / "cases" / f"c{n}.yaml").write_text(
            f"id: c{n}\ninput: {{n: {n}}}\nexpect:\n  category: {{mode: exact, value: a}}\n"
            f"source: imported\ngroup: retail-cancel\nsplit: {split}\n"
        )
    checked = runner.invoke(app, ["validate", str(suite)])
    assert "group 'retail-cancel' is split across dev and test (c0, c1, c2)" in checked.output
    done = runner.invoke(app, ["split", str(suite), "--reassign", "--write"])
    assert done.exit_code == 0, done.output
    again = runner.invoke(app, ["validate", str(suite)])
    assert "is split across" not in again.output
    splits = {p.read_text().split("split: ")[1].strip() for p in (suite / "cases").iterdir()}
    assert len(splits) == 1
