"""The split: stable by id hash, every category on both sides, hand-set splits kept."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from caseforge.case.load import load_suite
from caseforge.case.split import SplitCase, id_hash, plan_split, split_changes, write_split
from caseforge.cli import app
from tests.conftest import SuiteFactory, good_case

runner = CliRunner()


def cases(n: int, category: str) -> list[SplitCase]:
    return [SplitCase(f"{category}-{i:03d}", category, None, False) for i in range(n)]


def test_about_seventy_thirty_and_stable() -> None:
    items = cases(1000, "refund")
    plan = plan_split(items)
    share = sum(1 for s in plan.values() if s == "test") / len(plan)
    assert 0.26 < share < 0.34
    # A case's split does not depend on which other cases exist.
    smaller = plan_split(items[:300])
    assert all(plan[k] == v for k, v in smaller.items())


def test_every_category_reaches_both_sides() -> None:
    # Ids chosen so that a pure hash split would put all three in dev.
    dev_only = [i for i in (f"x-{n}" for n in range(200)) if id_hash(i) >= 0.3][:3]
    items = [SplitCase(i, "rare", None, False) for i in dev_only]
    plan = plan_split(items)
    assert sorted(plan.values()) == ["dev", "dev", "test"]
    # The case that moves is the one nearest the boundary: the smallest hash.
    moved = min(dev_only, key=id_hash)
    assert plan[moved] == "test"


def test_single_case_category_is_left_alone() -> None:
    assert len(plan_split(cases(1, "lonely"))) == 1


def test_pinned_case_never_moves() -> None:
    ids = [i for i in (f"p-{n}" for n in range(200)) if id_hash(i) < 0.3][:2]
    pinned = SplitCase(ids[0], "c", "dev", True)  # hash says test; a note pins it to dev
    plan = plan_split([pinned, SplitCase(ids[1], "c", None, False)])
    assert plan[ids[0]] == "dev"
    assert plan[ids[1]] == "test"


def test_write_changes_only_the_split_line(make_suite: SuiteFactory) -> None:
    files = {
        f"cases/c{i}.yaml": good_case(f"c{i}", f"工单内容第{i}号不一样的{i * 7}").replace(
            "tags: [t]", "tags: [t]  # keep this comment"
        )
        for i in range(12)
    }
    files["cases/c0.yaml"] = files["cases/c0.yaml"].replace(
        "source: manual", "source: manual   # where it came from\nsplit: test    # moved by hand"
    )
    files["cases/c0.yaml"] += 'note: "kept in test: the only case of its kind we trust"\n'
    root = make_suite(files)
    before = {p: p.read_text(encoding="utf-8") for p in (root / "cases").iterdir()}
    changes, table = split_changes(root)
    assert "c0" not in {c.case_id for c in changes}  # pinned by its note
    write_split(changes)
    for path, old in before.items():
        new = path.read_text(encoding="utf-8")
        old_lines, new_lines = old.splitlines(), new.splitlines()
        added = [line for line in new_lines if line not in old_lines]
        removed = [line for line in old_lines if line not in new_lines]
        if path.name == "c0.yaml":
            assert new == old
        else:
            assert removed == [] and len(added) == 1 and added[0].startswith("split: ")
            assert "# keep this comment" in new
            # Inserted right after the source line.
            assert new_lines[new_lines.index("source: manual") + 1] == added[0]
    suite = load_suite(root)
    splits = {c.case.id: c.case.split for c in suite.cases}
    assert set(splits.values()) == {"dev", "test"}
    assert table["refund"]["dev"] + table["refund"]["test"] == 12
    assert split_changes(root)[0] == []  # idempotent


def test_write_replaces_an_existing_value_keeping_its_comment(make_suite: SuiteFactory) -> None:
    case_id = next(i for i in (f"only-{n}" for n in range(100)) if id_hash(i) >= 0.3)
    text = good_case(case_id).replace("source: manual", "source: manual\nsplit: 'test'  # guess")
    root = make_suite({"cases/a.yaml": text})
    assert split_changes(root)[0] == []  # a case keeps the split it has
    changes, _ = split_changes(root, reassign=True)
    assert [(c.case_id, c.old, c.new) for c in changes] == [(case_id, "test", "dev")]
    write_split(changes)
    new = (root / "cases/a.yaml").read_text(encoding="utf-8")
    assert new == text.replace("split: 'test'  # guess", "split: dev  # guess")


def test_write_jsonl_edits_only_changed_lines(make_suite: SuiteFactory) -> None:
    rows = [
        {
            "id": f"j{i}",
            "input": {"t": f"text number {i} " * 3},
            "expect": {"category": {"mode": "exact", "value": "a"}},
            "source": "manual",
        }
        for i in range(10)
    ]
    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"
    root = make_suite({"cases/bulk.jsonl": text})
    changes, _ = split_changes(root)
    write_split(changes)
    new_rows = [json.loads(line) for line in (root / "cases/bulk.jsonl").read_text().splitlines()]
    assert [r["id"] for r in new_rows] == [r["id"] for r in rows]
    for row in new_rows:
        assert list(row)[list(row).index("source") + 1] == "split"
    assert {r["split"] for r in new_rows} == {"dev", "test"}


def test_cli_dry_run_writes_nothing(make_suite: SuiteFactory) -> None:
    root = make_suite({"cases/a.yaml": good_case("a"), "cases/b.yaml": good_case("b", "别的")})
    before = (root / "cases/a.yaml").read_text()
    result = runner.invoke(app, ["split", str(root)])
    assert result.exit_code == 0 and "--write" in result.stdout
    assert (root / "cases/a.yaml").read_text() == before
    result = runner.invoke(app, ["split", str(root), "--write"])
    assert result.exit_code == 0 and "wrote 2 change(s)" in result.stdout


def test_adding_cases_never_moves_an_existing_one() -> None:
    # Two cases of one category, both assigned; the fix-up once put cat-b in test.
    a, b = "cat-a", next(i for i in (f"cat-{n}" for n in range(200)) if id_hash(i) >= 0.3)
    existing = [SplitCase(a, "c", "dev", False), SplitCase(b, "c", "test", False)]
    newcomers = [SplitCase(f"new-{n}", "c", None, False) for n in range(40)]
    plan = plan_split(existing + newcomers)
    assert plan[a] == "dev" and plan[b] == "test"
    assert {plan[c.id] for c in newcomers} == {"dev", "test"}
    reassigned = plan_split(existing + newcomers, reassign=True)
    assert reassigned[b] == "dev"  # only --reassign recomputes it from the hash
