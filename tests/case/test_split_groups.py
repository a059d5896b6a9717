"""`group:` keeps a family of near-identical cases on one side of the dev/test split."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from caseforge.case.split import GroupMove, SplitCase, groups_to_move, plan_split, split_groups
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


# --- a category whose cases are all in groups -------------------------------------------------


def grouped_suite(tmp_path: Path, cases: list[tuple[str, str, str, str]], config: str = "") -> Path:
    """A suite of ``(id, category, group, split)`` cases, every one in a group."""
    suite = tmp_path / "s"
    (suite / "cases").mkdir(parents=True, exist_ok=True)
    (suite / "caseforge.yaml").write_text(f"name: s\nagent: {{callable: 'a:run'}}\n{config}")
    for case_id, category, group, split in cases:
        (suite / "cases" / f"{case_id}.yaml").write_text(
            f"id: {case_id}\ninput: {{n: {case_id}}}\nexpect:\n"
            f"  category: {{mode: exact, value: {category}}}\n"
            f"source: imported\ngroup: {group}\nsplit: {split}\n"
        )
    return suite


def split_warnings(suite: Path) -> list[str]:
    checked = runner.invoke(app, ["validate", str(suite)])
    assert checked.exit_code == 0, checked.output
    lines = [line.split(": ") for line in checked.output.splitlines()]
    return [": ".join(parts) for parts in lines if parts[2:] and parts[2].startswith("split")]


# Four benchmark users; every `exchange` case belongs to users on the dev side.
USERS = [
    ("c1", "cancel", "user-ana", "test"), ("c2", "cancel", "user-ana", "test"),
    ("c3", "cancel", "user-bo", "dev"), ("c4", "cancel", "user-cy", "dev"),
    ("e1", "exchange", "user-bo", "dev"), ("e2", "exchange", "user-cy", "dev"),
    ("e3", "exchange", "user-cy", "dev"), ("r1", "return", "user-ana", "test"),
    ("r2", "return", "user-dee", "dev"), ("r3", "return", "user-bo", "dev"),
]  # fmt: skip


def test_groups_to_move_rank_the_moves_that_break_nothing_first() -> None:
    placed = [(category, group, split) for _, category, group, split in USERS]
    moves = groups_to_move(placed, "exchange", "test")
    assert moves == [  # as small as each other: by name
        GroupMove("user-bo", cases=3, in_category=1, empties=()),
        GroupMove("user-cy", cases=3, in_category=2, empties=()),
    ]
    moves = groups_to_move([*placed, ("return", "user-bo", "dev")], "exchange", "test")
    assert [m.group for m in moves] == ["user-cy", "user-bo"]  # the smaller first
    # with user-cy holding every dev `cancel` case, moving it would empty cancel's dev side
    placed = [(c, g, s) for c, g, s in placed if (c, g) != ("cancel", "user-bo")]
    assert [(m.group, m.empties) for m in groups_to_move(placed, "exchange", "test")] == [
        ("user-bo", ()),
        ("user-cy", ("cancel",)),
    ]


def test_validate_names_the_groups_to_move_and_following_it_clears_the_warning(
    tmp_path: Path,
) -> None:
    suite = grouped_suite(tmp_path, USERS)
    (warning,) = split_warnings(suite)
    assert (
        "split: category 'exchange' has no case in test, and its cases are all in groups, "
        "which stay on one side: move group 'user-bo' (3 cases, 1 in exchange) or group "
        "'user-cy' (3 cases, 2 in exchange) to test (give one of its cases `split: test` and a "
        "`note` saying why, then run `caseforge split SUITE --write`), or accept it as dev-only "
        "(`split: {dev_only: [exchange]}` in caseforge.yaml)"
    ) in warning
    pinned = suite / "cases" / "e1.yaml"
    pinned.write_text(
        pinned.read_text().replace("split: dev", "split: test\nnote: user-bo's tasks hold out")
    )
    moved = runner.invoke(app, ["split", str(suite), "--write"])
    assert "c3: dev -> test" in moved.output and "r3: dev -> test" in moved.output
    assert split_warnings(suite) == []


def test_a_category_in_one_group_can_only_be_dev_only(tmp_path: Path) -> None:
    cases = [*USERS, ("g1", "gift", "user-eve", "dev"), ("g2", "gift", "user-eve", "dev")]
    suite = grouped_suite(tmp_path, [c for c in cases if c[1] != "exchange"])
    (warning,) = split_warnings(suite)
    assert (
        "category 'gift' has no case in test, and its cases are all in groups, which stay on "
        "one side; moving group 'user-eve' to test would leave 'gift' with no case in dev, or "
        "accept it as dev-only"
    ) in warning
    accepted = grouped_suite(
        tmp_path / "b", [c for c in cases if c[1] != "exchange"], "split: {dev_only: [gift]}\n"
    )
    assert split_warnings(accepted) == []


def test_dev_only_is_checked_and_split_keeps_its_new_cases_in_dev(tmp_path: Path) -> None:
    suite = grouped_suite(tmp_path, USERS, "split:\n  dev_only: [exchange, cancel, refund]\n")
    assert split_warnings(suite) == [
        f"warning: {suite}/caseforge.yaml:4:24: split.dev_only.1: dev-only category 'cancel': "
        "2 of its cases are in test: move them to dev, or take it out of dev_only",
        f"warning: {suite}/caseforge.yaml:4:32: split.dev_only.2: dev-only category 'refund': "
        "no case has it",
    ]
    for n in range(12):  # new exchange cases without a group: all to dev, none to test
        (suite / "cases" / f"n{n}.yaml").write_text(
            f"id: n{n}\ninput: {{n: {n}}}\nexpect:\n  category: {{mode: exact, value: exchange}}\n"
        )
    done = runner.invoke(app, ["split", str(suite)])
    assert done.output.count("unassigned -> dev") == 12, done.output
    twice = grouped_suite(tmp_path / "t", USERS, "split: {dev_only: [gift, gift]}\n")
    refused = runner.invoke(app, ["validate", str(twice)])
    assert refused.exit_code == 1
    assert "caseforge.yaml:3:19: split.dev_only: named twice: gift" in refused.output


def test_a_category_with_cases_outside_groups_is_told_to_move_one_of_those(
    tmp_path: Path,
) -> None:
    suite = grouped_suite(tmp_path, USERS)
    (suite / "cases" / "e9.yaml").write_text(
        "id: e9\ninput: {n: 9}\nexpect:\n  category: {mode: exact, value: exchange}\nsplit: dev\n"
    )
    (warning,) = split_warnings(suite)
    assert warning.endswith(
        "split: category 'exchange' has no case in test: give one of its cases without a group "
        "`split: test`, or accept it as dev-only (`split: {dev_only: [exchange]}` in "
        "caseforge.yaml)"
    )


def test_each_group_that_would_empty_another_category_is_named_with_it(tmp_path: Path) -> None:
    cases = [
        ("c1", "cancel", "user-x", "test"), ("r1", "refund", "user-x", "test"),
        ("c2", "cancel", "user-a", "dev"), ("r2", "refund", "user-b", "dev"),
        ("e1", "exchange", "user-a", "dev"), ("e2", "exchange", "user-b", "dev"),
    ]  # fmt: skip
    (warning,) = split_warnings(grouped_suite(tmp_path, cases))
    assert (
        "moving group 'user-a' to test would leave 'cancel' with no case in dev; moving group "
        "'user-b' to test would leave 'refund' with no case in dev, or accept it as dev-only"
    ) in warning
