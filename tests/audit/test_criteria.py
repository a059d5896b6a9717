"""The criteria audit, in small temporary git repositories: each loosening kind is caught
with its commit, case, field, before and after; tightening is not; a `Criteria-change:`
line excuses a loosening; a case moved to retired.yaml is not a deletion."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from caseforge.audit.criteria import (
    KINDS,
    Loosening,
    all_kinds,
    criteria_problems,
    criteria_reason,
    loosenings,
    weaker,
)
from caseforge.case.retire import retire_case
from caseforge.errors import CaseforgeError


@pytest.fixture(autouse=True)
def _hermetic_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user or system git config, no repository inherited from a hook, a fixed author."""
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Case Reviewer")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "reviewer@example.com")


class Repo:
    """A git repository holding one suite (at ``suite``, the root or a subfolder)."""

    def __init__(self, root: Path, suite: str = "") -> None:
        self.root = root
        self.suite = root / suite if suite else root
        self.suite.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    def write(self, rel: str, text: str) -> None:
        path = self.suite / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def delete(self, rel: str) -> None:
        (self.suite / rel).unlink()

    def commit(self, message: str, files: dict[str, str] | None = None) -> str:
        for rel, text in (files or {}).items():
            self.write(rel, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def case(case_id: str, expect: str) -> str:
    """A YAML case file with this `expect` block (written unindented)."""
    body = textwrap.indent(textwrap.dedent(expect).strip("\n"), "  ")
    return f"id: {case_id}\ninput: {{ticket: hello}}\nexpect:\n{body}\n"


def jsonl(*cases: tuple[str, dict[str, Any]]) -> str:
    return "".join(
        json.dumps({"id": cid, "input": {"ticket": "hi"}, "expect": expect}, ensure_ascii=False)
        + "\n"
        for cid, expect in cases
    )


def only(found: list[Loosening]) -> Loosening:
    assert len(found) == 1, [item.format() for item in found]
    return found[0]


def brief(found: list[Loosening]) -> list[tuple[str, str, str, Any, Any]]:
    return [(item.case_id, item.field, item.kind, item.before, item.after) for item in found]


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


# --- each kind of loosening ---------------------------------------------------------------


def test_exact_set_to_must_include_is_caught_with_commit_case_field_before_after(
    repo: Repo,
) -> None:
    repo.commit(
        "add the card",
        {
            "cases/ac-001.yaml": case(
                "ac-001",
                """
        ac_flags: {mode: exact_set, values: ["3:conflict", "3:mismatch"]}
        category: {mode: exact, value: coupon}
    """,
            )
        },
    )
    sha = repo.commit(
        "relax the flags",
        {
            "cases/ac-001.yaml": case(
                "ac-001",
                """
        ac_flags: {mode: must_include, values: ["3:conflict", "3:mismatch"]}
        category: {mode: exact, value: coupon}
    """,
            )
        },
    )
    item = only(loosenings(repo.suite))
    assert item.commit == sha
    assert sha.startswith(item.short) and len(item.short) >= 7
    assert item.subject == "relax the flags"
    assert (item.case_id, item.field, item.kind) == ("ac-001", "ac_flags", "mode-weakened")
    assert (item.before, item.after) == ("exact_set", "must_include")
    assert item.path == "cases/ac-001.yaml"
    assert item.excused is None
    assert "ac-001 ac_flags: mode-weakened: exact_set -> must_include" in item.format()
    assert item.to_json()["kind"] == "mode-weakened"


def test_an_exact_set_that_loses_an_item_is_caught_even_when_another_replaces_it(
    repo: Repo,
) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y, z]}")})
    repo.commit("swap", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y, w]}")})
    assert brief(loosenings(repo.suite)) == [
        ("a", "flags", "values-removed", ["x", "y", "z"], ["x", "y", "w"])
    ]


def test_must_include_values_removed_in_the_shorthand_and_in_the_mode(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case(
                "a", 'reply: {must_include: ["6578", 退款], must_not_include: [全额]}'
            ),
            "cases/b.yaml": case("b", "reply: {mode: must_include, values: [p, q]}"),
        },
    )
    repo.commit(
        "drop",
        {
            "cases/a.yaml": case("a", 'reply: {must_include: ["6578"], must_not_include: [全额]}'),
            "cases/b.yaml": case("b", "reply: {mode: must_include, values: [q]}"),
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "reply.must_include", "values-removed", ["6578", "退款"], ["6578"]),
        ("b", "reply", "values-removed", ["p", "q"], ["q"]),
    ]


def test_a_check_turned_ignore(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", "facts: {mode: judge, values: [f1, f2]}")})
    repo.commit("ignore", {"cases/a.yaml": case("a", "facts: {mode: ignore, reason: noisy}")})
    assert brief(loosenings(repo.suite)) == [("a", "facts", "ignored", "judge", "ignore")]


def test_a_check_removed_entirely(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case(
                "a",
                """
        category: {mode: exact, value: refund}
        amount: {mode: number, value: 10}
        wording: {mode: ignore, reason: varies}
    """,
            )
        },
    )
    repo.commit("trim", {"cases/a.yaml": case("a", "amount: {mode: number, value: 10}")})
    # Dropping the ignore cell grades nothing less, so only the exact check is reported.
    assert brief(loosenings(repo.suite)) == [("a", "category", "check-removed", "exact", None)]


def test_a_tolerance_widened(repo: Repo) -> None:
    number = "amount: {{mode: number, value: 6578, tolerance: {}}}"
    repo.commit("add", {"cases/a.yaml": case("a", number.format(0.01))})
    repo.commit("widen", {"cases/a.yaml": case("a", number.format(5))})
    assert brief(loosenings(repo.suite)) == [("a", "amount", "tolerance-widened", 0.01, 5.0)]


def test_must_not_include_values_dropped(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case(
                "a", 'reply: {must_include: ["6578"], must_not_include: [全额, 马上]}'
            ),
            "cases/b.yaml": case("b", 'reply: {must_include: ["6578"], must_not_include: [全额]}'),
            "cases/c.yaml": case("c", "reply: {mode: must_not_include, values: [全额]}"),
        },
    )
    repo.commit(
        "drop",
        {
            "cases/a.yaml": case("a", 'reply: {must_include: ["6578"], must_not_include: [全额]}'),
            "cases/b.yaml": case("b", 'reply: {mode: must_include, values: ["6578"]}'),
            "cases/c.yaml": case("c", "reply: {mode: regex, value: '6578'}"),
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "reply.must_not_include", "must-not-include-dropped", ["全额", "马上"], ["全额"]),
        ("b", "reply.must_not_include", "must-not-include-dropped", ["全额"], []),
        ("c", "reply", "must-not-include-dropped", ["全额"], []),
    ]


def test_an_emptied_shorthand_list_reports_the_values_it_lost(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case("a", "reply: {must_not_include: [全额, 马上]}"),
            "cases/b.yaml": case("b", "reply: {must_include: [x], must_not_include: [y]}"),
            "cases/c.yaml": case("c", "reply: {mode: exact, value: x}"),
        },
    )
    repo.commit(
        "empty",
        {
            "cases/a.yaml": case("a", "reply: {must_not_include: []}"),
            "cases/b.yaml": case("b", "reply: {must_not_include: [y]}"),
            "cases/c.yaml": case("c", "reply: {must_include: []}"),
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "reply.must_not_include", "must-not-include-dropped", ["全额", "马上"], []),
        ("b", "reply.must_include", "values-removed", ["x"], []),
        ("c", "reply", "check-removed", "exact", None),
    ]


def test_tool_call_expectations_removed(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case(
                "a",
                """
        tool_calls: {must_call: [get_subscription, get_invoice], must_not_call: [issue_refund]}
    """,
            )
        },
    )
    repo.commit(
        "loosen",
        {
            "cases/a.yaml": case(
                "a",
                """
        tool_calls: {must_call: [get_subscription]}
    """,
            )
        },
    )
    assert brief(loosenings(repo.suite)) == [
        (
            "a",
            "tool_calls.must_call",
            "must-call-removed",
            ["get_subscription", "get_invoice"],
            ["get_subscription"],
        ),
        ("a", "tool_calls.must_not_call", "must-not-call-removed", ["issue_refund"], []),
    ]


def test_judge_facts_removed(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", "facts: {mode: judge, values: [f1, f2, f3]}")})
    repo.commit("drop", {"cases/a.yaml": case("a", "facts: {mode: judge, values: [f1, f3, f4]}")})
    assert brief(loosenings(repo.suite)) == [
        ("a", "facts", "values-removed", ["f1", "f2", "f3"], ["f1", "f3", "f4"])
    ]


@pytest.mark.parametrize(
    ("before", "after", "loosened"),
    [
        ("{mode: exact, value: 3}", "{mode: number, value: 3, tolerance: 1}", True),
        ("{mode: exact, value: abc}", "{mode: regex, value: a.c}", True),
        ("{mode: number, value: 3}", "{mode: regex, value: '3'}", True),
        ("{mode: regex, value: a.c}", "{mode: must_include, values: [a]}", True),
        ("{mode: must_include, values: [a]}", "{mode: judge, rubric: mentions a}", True),
        ("{mode: must_include, values: [a]}", "{mode: must_not_include, values: [b]}", True),
        ("{mode: exact_set, values: [a]}", "{must_include: [a], must_not_include: [b]}", True),
        ("{mode: outcome, value: {id: 1}}", "{mode: judge, rubric: refund filed}", True),
        ("{mode: outcome, value: null}", "{mode: must_include, values: [none]}", False),
        ("{mode: exact, value: 3}", "{mode: outcome, value: 3}", False),
        ("{mode: exact, value: [a, b]}", "{mode: exact_set, values: [a, b]}", False),
        ("{mode: must_include, values: [a]}", "{mode: regex, value: a}", False),
        ("{mode: judge, rubric: polite}", "{mode: must_include, values: [thanks]}", False),
        ("{mode: ignore, reason: later}", "{mode: exact, value: 1}", False),
    ],
)
def test_mode_changes_follow_the_strength_order(
    repo: Repo, before: str, after: str, loosened: bool
) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", f"out: {before}")})
    repo.commit("change", {"cases/a.yaml": case("a", f"out: {after}")})
    found = loosenings(repo.suite)
    if loosened:
        item = only(found)
        assert (item.field, item.kind) == ("out", "mode-weakened")
    else:
        assert found == []


def test_the_strength_order() -> None:
    order = ["exact", "number", "regex", "must_include", "must_not_include", "judge", "ignore"]
    for stronger, looser in itertools.pairwise(order):
        assert weaker(stronger, looser) and not weaker(looser, stronger)
    assert not weaker("exact", "exact_set") and not weaker("exact_set", "exact")
    assert weaker("outcome", "judge") and weaker("outcome", "ignore")
    assert not weaker("outcome", "regex") and not weaker("regex", "outcome")
    # The imported assertions' modes: code checks of a form sit with regex.
    for mode in ("json", "javascript", "python"):
        assert weaker("exact", mode) and weaker("number", mode)
        assert not weaker("regex", mode) and not weaker(mode, "regex")
        assert weaker(mode, "must_include") and not weaker("must_include", mode)
    # cost and latency read what the run measured: apart from the field and the workspace.
    for mode in ("cost", "latency"):
        for other in ("exact", "regex", "must_include", "outcome"):
            assert not weaker(mode, other) and not weaker(other, mode)
        assert weaker(mode, "judge") and weaker(mode, "ignore")


def test_tightening_is_not_flagged(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case(
                "a",
                """
            flags: {mode: exact_set, values: [x]}
            reply: {must_include: [a], must_not_include: [b]}
            amount: {mode: number, value: 10, tolerance: 1}
            wording: {mode: ignore, reason: varies}
            scope: {mode: must_include, values: [s]}
            tool_calls: {must_call: [t1]}
        """,
            ),
        },
    )
    repo.commit(
        "tighten",
        {
            "cases/a.yaml": case(
                "a",
                """
            flags: {mode: exact_set, values: [x, y]}
            reply: {must_include: [a, c], must_not_include: [b, d]}
            amount: {mode: number, value: 11, tolerance: 0.5}
            wording: {mode: exact, value: Dear customer}
            scope: {mode: exact_set, values: [s]}
            tool_calls: {must_call: [t1, t2], must_not_call: [t3], order: [t1, t2]}
            category: {mode: exact, value: refund}
        """,
            ),
            "cases/b.yaml": case("b", "category: {mode: exact, value: other}"),
        },
    )
    assert loosenings(repo.suite) == []


# --- the trailer -------------------------------------------------------------------------------


def test_a_loosening_without_the_trailer_is_a_problem_and_with_it_is_excused(
    repo: Repo,
) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y]}"),
            "cases/b.yaml": case("b", "flags: {mode: exact_set, values: [x, y]}"),
        },
    )
    bare = repo.commit(
        "loosen a", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x]}")}
    )
    told = repo.commit(
        "loosen b\n\nThe second flag is contested.\n\nCriteria-change: disputed by finance\n",
        {"cases/b.yaml": case("b", "flags: {mode: exact_set, values: [x]}")},
    )
    found = loosenings(repo.suite)
    assert [(item.commit, item.case_id, item.excused) for item in found] == [
        (bare, "a", None),
        (told, "b", "disputed by finance"),
    ]
    problem = only(criteria_problems(repo.suite))
    assert (problem.commit, problem.case_id, problem.kind) == (bare, "a", "values-removed")


def test_the_trailer_key_is_case_insensitive_and_needs_a_reason() -> None:
    assert criteria_reason("x\n\ncriteria-CHANGE: policy changed") == "policy changed"
    assert criteria_reason("x\n\nCriteria-change:   \n") is None
    assert criteria_reason("x\n\nCriteria-change:\n") is None
    assert criteria_reason("mentions Criteria-change: inline only") is None
    assert criteria_reason("x\n\nCriteria-change: the amount\n  is disputed\n") == (
        "the amount is disputed"
    )
    assert criteria_reason("no trailer at all") is None


# --- deletions and retirement ---------------------------------------------------------------------


def test_deleting_a_case_needs_retirement_in_the_same_commit(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            # The colon makes `caseforge retire` write `[finding:F5]`, which only a YAML 1.2
            # parser reads; the audit must still see who was retired.
            "cases/a.yaml": case("a", "category: {mode: exact, value: refund}")
            + 'tags: ["finding:F5", refund]\n',
            "cases/b.yaml": case("b", "category: {mode: exact, value: refund}"),
        },
    )
    retire_case(repo.suite, "a", "policy changed", dt.date(2026, 11, 1))
    repo.commit("retire a")
    repo.delete("cases/b.yaml")
    gone = repo.commit("drop b")
    item = only(loosenings(repo.suite))
    assert (item.commit, item.case_id, item.kind) == (gone, "b", "deleted-not-retired")
    assert (item.field, item.before, item.after, item.path) == (
        "case",
        "cases/b.yaml",
        None,
        "cases/b.yaml",
    )


def test_a_renamed_case_file_is_the_same_case(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y]}")})
    (repo.suite / "cases/refund").mkdir()
    repo.git("mv", "cases/a.yaml", "cases/refund/a-renamed.yaml")
    repo.commit("move")
    repo.git("mv", "cases/refund/a-renamed.yaml", "cases/a2.yml")
    repo.commit(
        "move and loosen", {"cases/a2.yml": case("a", "flags: {mode: exact_set, values: [x]}")}
    )
    item = only(loosenings(repo.suite))
    assert (item.subject, item.kind, item.path) == (
        "move and loosen",
        "values-removed",
        "cases/a2.yml",
    )


# --- JSONL, nesting, unrelated commits, broken files -------------------------------------------


def test_a_jsonl_suite_matches_cases_by_id(repo: Repo) -> None:
    flags = {"mode": "exact_set", "values": ["x", "y"]}
    repo.commit(
        "bulk",
        {
            "cases/bulk.jsonl": jsonl(
                ("a", {"flags": flags}),
                ("b", {"flags": flags}),
                ("c", {"flags": flags}),
                ("d", {"flags": flags}),
            ),
        },
    )
    # a is loosened, b is moved into its own YAML file, c's line is removed, d is unchanged
    # but moves down a line.
    repo.commit(
        "edit bulk",
        {
            "cases/bulk.jsonl": jsonl(
                ("d", {"flags": flags}),
                ("a", {"flags": {"mode": "must_include", "values": ["x", "y"]}}),
            ),
            "cases/b.yaml": case("b", "flags: {mode: exact_set, values: [x, y]}"),
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "flags", "mode-weakened", "exact_set", "must_include"),
        ("c", "case", "deleted-not-retired", "cases/bulk.jsonl", None),
    ]
    assert [item.path for item in loosenings(repo.suite)] == ["cases/bulk.jsonl"] * 2


def test_a_jsonl_line_retired_is_not_a_deletion(repo: Repo) -> None:
    flags = {"mode": "exact_set", "values": ["x"]}
    repo.commit(
        "bulk", {"cases/bulk.jsonl": jsonl(("a", {"flags": flags}), ("b", {"flags": flags}))}
    )
    retire_case(repo.suite, "a", "duplicate of b", dt.date(2026, 11, 1))
    repo.commit("retire a")
    assert loosenings(repo.suite) == []


def test_a_suite_nested_in_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Repo(tmp_path / "repo", suite="examples/my-suite")
    other = repo.root / "examples/other/cases/z.yaml"
    other.parent.mkdir(parents=True)
    other.write_text(case("z", "flags: {mode: exact_set, values: [x, y]}"))
    repo.commit("add", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y]}")})
    other.write_text(case("z", "flags: {mode: ignore, reason: another suite}"))
    repo.commit("loosen the other suite")
    sha = repo.commit(
        "loosen", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [y]}")}
    )
    item = only(loosenings(repo.suite))
    assert (item.commit, item.case_id, item.path) == (sha, "a", "cases/a.yaml")
    # Also when given a relative path.
    monkeypatch.chdir(repo.root / "examples")
    assert only(loosenings(Path("my-suite"))).commit == sha


def test_commits_that_do_not_touch_cases_are_ignored(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y]}")})
    repo.commit("docs", {"README.md": "# suite\n", "caseforge.yaml": "name: s\n"})
    repo.commit("notes", {"notes/a.yaml": case("a", "flags: {mode: ignore, reason: a note}")})
    assert loosenings(repo.suite) == []
    log = repo.git("log", "--format=%s")
    assert log.splitlines() == ["notes", "docs", "add"]


def test_a_case_file_that_fails_to_parse_does_not_crash(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y]}"),
            "cases/b.jsonl": jsonl(("b", {"flags": {"mode": "exact_set", "values": ["x", "y"]}})),
        },
    )
    repo.commit(
        "break",
        {
            "cases/a.yaml": "id: a\nexpect: {flags: [unclosed\n",
            "cases/b.jsonl": '{"id": "b", "expect": \n',
        },
    )
    fixed = repo.commit(
        "fix and loosen",
        {
            "cases/a.yaml": case("a", "flags: {mode: must_include, values: [x]}"),
            "cases/b.jsonl": jsonl(("b", {"flags": {"mode": "exact_set", "values": ["x", "y"]}})),
        },
    )
    # Breaking a file is not a deletion; the fix is compared with the last version that parsed.
    assert [(item.commit, item.case_id, item.kind) for item in loosenings(repo.suite)] == [
        (fixed, "a", "mode-weakened")
    ]


def test_a_check_that_does_not_validate_is_skipped_not_removed(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case(
                "a",
                """
        flags: {mode: exact_set, values: [x, y]}
        amount: {mode: number, value: 3}
    """,
            )
        },
    )
    repo.commit(
        "typo",
        {
            "cases/a.yaml": case(
                "a",
                """
        flags: {mode: exact_set, values: {x: 1}}
        amount: {mode: number, value: 3, tolerance: 2}
    """,
            )
        },
    )
    assert brief(loosenings(repo.suite)) == [("a", "amount", "tolerance-widened", 0.0, 2.0)]


def test_a_change_to_a_mode_no_declaration_knows_is_a_loosening(repo: Repo) -> None:
    repo.commit(
        "add",
        {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y]}\n")},
    )
    repo.commit(
        "to a mode nobody declares",
        {"cases/a.yaml": case("a", "flags: {mode: exact_sett, values: [x]}\n")},
    )
    repo.commit(
        "edit it again",
        {"cases/a.yaml": case("a", "flags: {mode: exact_sett, values: []}\n")},
    )
    repo.commit("drop it", {"cases/a.yaml": case("a", "other: {mode: exact, value: 1}\n")})
    found = [(f.field, f.kind, f.before, f.after) for f in loosenings(repo.suite)]
    assert found == [
        (
            "flags",
            "undeclared-mode-changed",
            {"mode": "exact_set", "values": ["x", "y"]},
            {"mode": "exact_sett", "values": ["x"]},
        ),
        (
            "flags",
            "undeclared-mode-changed",
            {"mode": "exact_sett", "values": ["x"]},
            {"mode": "exact_sett", "values": []},
        ),
        ("flags", "check-removed", "exact_sett", None),
    ]


# --- merges, since, errors ------------------------------------------------------------------------


def test_a_merge_is_not_blamed_for_what_its_branch_brought(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y, z]}"),
            "cases/b.yaml": case("b", "flags: {mode: exact_set, values: [x, y]}"),
        },
    )
    repo.git("checkout", "-q", "-b", "topic")
    on_branch = repo.commit(
        "drop z\n\nCriteria-change: z is not a real flag",
        {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y]}")},
    )
    repo.git("checkout", "-q", "main")
    repo.commit("unrelated", {"README.md": "hi\n"})
    repo.git("merge", "-q", "--no-ff", "--no-commit", "topic")
    # An evil merge: it also loosens b on its own.
    repo.write("cases/b.yaml", case("b", "flags: {mode: must_include, values: [x, y]}"))
    merge = repo.commit("Merge branch 'topic'")
    found = loosenings(repo.suite)
    assert [(item.commit, item.case_id, item.excused) for item in found] == [
        (on_branch, "a", "z is not a real flag"),
        (merge, "b", None),
    ]


def test_since_limits_the_audit_to_later_commits(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y, z]}")})
    repo.commit("one", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x, y]}")})
    base = repo.git("rev-parse", "HEAD")
    later = repo.commit("two", {"cases/a.yaml": case("a", "flags: {mode: exact_set, values: [x]}")})
    assert len(loosenings(repo.suite)) == 2
    assert [item.commit for item in loosenings(repo.suite, since=base)] == [later]
    with pytest.raises(CaseforgeError, match="not a revision"):
        loosenings(repo.suite, since="no-such-branch")


def test_outside_a_repository_or_before_the_first_commit(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(CaseforgeError, match="not inside a git work tree"):
        loosenings(plain)
    with pytest.raises(CaseforgeError, match="suite folder not found"):
        loosenings(tmp_path / "missing")
    empty = Repo(tmp_path / "empty")
    assert loosenings(empty.suite) == []


def test_text_options_that_loosen_and_those_that_tighten(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case("a", "reply: {must_include: [camera], must_not_include: [x]}"),
            "cases/b.yaml": case("b", "total: {mode: exact, value: '1093.34'}"),
            "cases/c.yaml": case("c", "reply: {must_include: [full], word: true}"),
        },
    )
    repo.commit(
        "loosen",
        {
            "cases/a.yaml": case(
                "a", "reply: {must_include: [camera], must_not_include: [x], case_sensitive: false}"
            ),
            "cases/b.yaml": case("b", "total: {mode: exact, value: '1093.34', normalize: true}"),
            "cases/c.yaml": case("c", "reply: {must_include: [full]}"),
        },
    )
    # Any case loosens what must be included and tightens what must not be.
    assert brief(loosenings(repo.suite)) == [
        ("a", "reply.must_include", "case-insensitive", True, False),
        ("b", "total", "text-normalized", False, True),
        ("c", "reply.must_include", "word-boundary-dropped", True, False),
    ]


def test_the_imported_modes_options_that_loosen(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case("a", "reply: {mode: must_include, values: [x, y]}"),
            "cases/b.yaml": case("b", "reply: {mode: exact, value: hi}"),
            "cases/c.yaml": case("c", "out: {mode: json, schema: {type: object}}"),
            "cases/d.yaml": case("d", "spend: {mode: cost, max_usd: 0.01}"),
            "cases/e.yaml": case(
                "e", "out: {mode: javascript, code: 'output.length', threshold: 5}"
            ),
            "cases/f.yaml": case("f", "reply: {mode: must_include, values: [x, y], match: any}"),
            "cases/g.yaml": case("g", "reply: {mode: regex, value: '^a', negate: true}"),
        },
    )
    repo.commit(
        "loosen",
        {
            "cases/a.yaml": case("a", "reply: {mode: must_include, values: [x, y], match: any}"),
            "cases/b.yaml": case("b", "reply: {mode: exact, value: hi, negate: true}"),
            "cases/c.yaml": case("c", "out: {mode: json, find: true}"),
            "cases/d.yaml": case("d", "spend: {mode: cost, max_usd: 0.5}"),
            "cases/e.yaml": case(
                "e", "out: {mode: javascript, code: 'output.length', threshold: 1}"
            ),
            # One more alternative loosens `match: any`; dropping the negation tightens.
            "cases/f.yaml": case("f", "reply: {mode: must_include, values: [x, y, z], match: any}"),
            "cases/g.yaml": case("g", "reply: {mode: regex, value: '^a'}"),
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "reply", "match-any", "all", "any"),
        ("b", "reply", "negated", False, True),
        ("c", "out", "json-found-anywhere", False, True),
        ("c", "out", "schema-dropped", {"type": "object"}, None),
        ("d", "spend", "cost-limit-raised", 0.01, 0.5),
        ("e", "out", "threshold-lowered", 5.0, 1.0),
        ("f", "reply", "alternative-added", ["x", "y"], ["x", "y", "z"]),
    ]
    # Fewer alternatives for `match: any` is stricter, not a dropped item.
    repo.commit(
        "tighten",
        {"cases/f.yaml": case("f", "reply: {mode: must_include, values: [x], match: any}")},
    )
    assert [item.case_id for item in loosenings(repo.suite) if item.case_id == "f"] == ["f"]


def test_a_negated_exact_does_not_pin_the_field(repo: Repo) -> None:
    repo.commit(
        "add", {"cases/a.yaml": case("a", "reply: {must_include: [ok], must_not_include: [no]}")}
    )
    repo.commit(
        "change", {"cases/a.yaml": case("a", "reply: {mode: exact, value: no, negate: true}")}
    )
    assert ("a", "reply.must_not_include", "must-not-include-dropped") in [
        item[:3] for item in brief(loosenings(repo.suite))
    ]


def test_tool_call_arguments_counts_and_limits_loosened(repo: Repo) -> None:
    strict = """
        tool_calls:
          must_call:
            - {name: create_refund_request, args: {invoice_id: INV-1, amount_yuan: 10}, count: 1}
            - {name: list_invoices, count: {min: 1, max: 2}}
          must_not_call: [{name: create_refund_request, args: {invoice_id: INV-0}}]
          max_calls: {"*": 5, list_invoices: 2}
    """
    loose = """
        tool_calls:
          must_call:
            - {name: create_refund_request, args: {invoice_id: INV-1}, count: 1}
            - {name: list_invoices, count: {min: 1}}
          must_not_call: [create_refund_request]
          max_calls: {"*": 8}
    """
    repo.commit("add", {"cases/a.yaml": case("a", strict)})
    repo.commit("loosen", {"cases/a.yaml": case("a", loose)})
    assert brief(loosenings(repo.suite)) == [
        ("a", "tool_calls.must_call", "tool-args-dropped",
         {"invoice_id": "INV-1", "amount_yuan": 10}, {"invoice_id": "INV-1"}),
        ("a", "tool_calls.must_call", "tool-count-loosened", "1–2×", "at least 1×"),
        ("a", "tool_calls.max_calls", "max-calls-raised", {"*": 5}, {"*": 8}),
        ("a", "tool_calls.max_calls", "max-calls-raised", {"list_invoices": 2},
         {"list_invoices": None}),
    ]  # fmt: skip


def test_tool_call_expectations_made_stricter_are_not_flagged(repo: Repo) -> None:
    repo.commit(
        "add",
        {"cases/a.yaml": case("a", "tool_calls: {must_call: [create_refund_request], "
                                   "must_not_call: [{name: refund, args: {id: 1}}]}")},
    )  # fmt: skip
    repo.commit(
        "tighten",
        {"cases/a.yaml": case("a", "tool_calls: {must_call: [{name: create_refund_request, "
                                   "args: {invoice_id: INV-1}, count: 1}], "
                                   "must_not_call: [refund], max_calls: 3}")},
    )  # fmt: skip
    assert loosenings(repo.suite) == []


def test_an_alternative_added_and_strict_types_removed(repo: Repo) -> None:
    outcome = "refund: {{mode: outcome, value: {{id: 1}}, any_of: [{}]}}"
    repo.commit(
        "add",
        {
            "cases/a.yaml": case("a", outcome.format("{id: 2}")),
            "cases/b.yaml": case("b", "n: {mode: exact, value: 3, strict_types: true}"),
        },
    )
    repo.commit(
        "widen",
        {
            "cases/a.yaml": case("a", outcome.format("{id: 2}, {id: 3}")),
            "cases/b.yaml": case("b", "n: {mode: exact, value: 3}"),
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "refund", "alternative-added", [{"id": 2}], [{"id": 2}, {"id": 3}]),
        ("b", "n", "strict-types-dropped", True, False),
    ]


def test_a_per_turn_check_loosened_or_dropped(repo: Repo) -> None:
    talk = """\
id: a
input: {{}}
conversation:
  max_turns: 3
  script:
    - say: hi
      expect:
        reply: {}
    - say: C023
expect:
  category: {{mode: exact, value: refund}}
"""
    repo.commit("add", {"cases/a.yaml": talk.format("{must_include: [customer number]}")})
    repo.commit(
        "loosen",
        {"cases/a.yaml": talk.format("{must_include: [customer number], case_sensitive: false}")},
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "turn1.reply.must_include", "case-insensitive", True, False)
    ]


# --- several tool-call checks, and an order of several chains ------------------------------

TWO_TOOL_CHECKS = """
    tool_calls: {must_call: [find_user], must_not_call: [delete_user]}
    writes:
      field: tool_calls
      must_call: [{name: cancel_order, args: {order_id: "#W1"}}, refund]
      order: [[cancel_order, refund], [update_address, notify]]
"""


def test_two_tool_call_checks_with_a_partial_order_loosened(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", TWO_TOOL_CHECKS)})
    repo.commit(
        "loosen",
        {
            "cases/a.yaml": case(
                "a",
                """
        tool_calls: {must_call: [find_user]}
        writes:
          mode: tool_calls
          must_call: [cancel_order]
          order: [[cancel_order, refund]]
    """,
            )
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "tool_calls.must_not_call", "must-not-call-removed", ["delete_user"], []),
        ("a", "writes.must_call", "must-call-removed",
         [{"name": "cancel_order", "args": {"order_id": "#W1"}}, "refund"], ["cancel_order"]),
        ("a", "writes.must_call", "tool-args-dropped", {"order_id": "#W1"}, {}),
        ("a", "writes.order", "order-removed",
         [["cancel_order", "refund"], ["update_address", "notify"]], ["cancel_order", "refund"]),
    ]  # fmt: skip
    assert loosenings(repo.suite)[-1].to_json()["after"] == ["cancel_order", "refund"]


def test_a_chain_split_in_two_is_a_loosening_and_one_reordered_is_not(repo: Repo) -> None:
    repo.commit(
        "add",
        {
            "cases/a.yaml": case("a", "tool_calls: {order: [cancel, refund, notify]}"),
            "cases/b.yaml": case("b", "tool_calls: {order: [cancel, refund]}"),
        },
    )
    repo.commit(
        "change",
        {
            # each half may hold on calls the whole chain would refuse (notify, cancel, refund…)
            "cases/a.yaml": case("a", "tool_calls: {order: [[cancel, refund], [refund, notify]]}"),
            "cases/b.yaml": case("b", "tool_calls: {order: [refund, cancel]}"),  # a new criterion
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "tool_calls.order", "order-removed", ["cancel", "refund", "notify"],
         [["cancel", "refund"], ["refund", "notify"]]),
    ]  # fmt: skip


def test_expectations_moved_between_tool_call_checks_are_kept(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", TWO_TOOL_CHECKS)})
    repo.commit(
        "reorganise",
        {
            "cases/a.yaml": case(
                "a",
                """
        tool_calls:
          must_call: [find_user, refund, {name: cancel_order, args: {order_id: "#W1"}, count: 1}]
          order: [update_address, notify]
        guard: {field: tool_calls, must_not_call: [delete_user], max_calls: 9}
        ordering: {field: tool_calls, order: [[find_user, cancel_order, refund]]}
    """,
            )
        },
    )
    assert loosenings(repo.suite) == []
    # the same checks on another turn hold nothing the case-level ones dropped
    repo.commit(
        "pin to a turn",
        {
            "cases/a.yaml": case(
                "a",
                """
        tool_calls: {must_call: [find_user, refund], turn: 1}
        guard: {field: tool_calls, must_not_call: [delete_user]}
    """,
            )
        },
    )
    assert [(f.field, f.kind) for f in loosenings(repo.suite)] == [
        ("tool_calls.must_call", "must-call-removed"),
        ("tool_calls.order", "order-removed"),
        ("guard.max_calls", "max-calls-raised"),
        ("ordering.order", "order-removed"),
    ]


def test_a_tool_call_check_removed_outright_is_still_reported(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", TWO_TOOL_CHECKS)})
    repo.commit(
        "drop",
        {"cases/a.yaml": case("a", "tool_calls: {must_call: [find_user, cancel_order]}")},
    )
    assert [(f.field, f.kind) for f in loosenings(repo.suite)] == [
        ("tool_calls.must_not_call", "must-not-call-removed"),
        ("writes.must_call", "must-call-removed"),
        ("writes.must_call", "tool-args-dropped"),
        ("writes.order", "order-removed"),
    ]
    repo.commit("drop all", {"cases/a.yaml": case("a", "category: {mode: exact, value: x}")})
    assert [(f.field, f.kind, f.before) for f in loosenings(repo.suite, "HEAD~1")] == [
        ("tool_calls", "check-removed", "tool_calls")
    ]


def test_a_spans_checks_chains_are_audited_as_tool_calls_chains_are(repo: Repo) -> None:
    trace = """
        trace:
          mode: spans
          must_have: ["chat *"]
          order: [[retrieve, "chat *"], [{name: "execute_tool *", count: 1}, "chat *"]]
        budget: {mode: spans, max_errors: 0}
    """
    repo.commit("add", {"cases/a.yaml": case("a", trace)})
    # a chain moved to another spans check, and one made longer: nothing loosened
    repo.commit(
        "reorganise",
        {
            "cases/a.yaml": case(
                "a",
                """
        trace: {mode: spans, must_have: ["chat *"], order: [agent, retrieve, "chat *"]}
        budget:
          mode: spans
          max_errors: 0
          order: [[{name: "execute_tool *", count: 1}, "chat *"]]
    """,
            )
        },
    )
    assert loosenings(repo.suite) == []
    # a chain split in two is lost, as in tool_calls; one dropped outright too
    repo.commit(
        "loosen",
        {
            "cases/a.yaml": case(
                "a",
                """
        trace:
          mode: spans
          must_have: ["chat *"]
          order: [[agent, retrieve], [retrieve, "chat *"]]
        budget: {mode: spans, max_errors: 0}
    """,
            )
        },
    )
    assert brief(loosenings(repo.suite, "HEAD~1")) == [
        ("a", "trace.order", "order-removed", ["agent", "retrieve", "chat *"],
         [["agent", "retrieve"], ["retrieve", "chat *"]]),
        ("a", "budget.order", "order-removed",
         [{"name": "execute_tool *", "count": {"min": 1, "max": 1}}, "chat *"], []),
    ]  # fmt: skip


def test_an_exact_set_that_stops_counting_repeats_is_loosened(repo: Repo) -> None:
    counted = "refunds: {mode: exact_set, values: [r1, r1], duplicates: keep}"
    repo.commit("add", {"cases/a.yaml": case("a", "refunds: {mode: exact_set, values: [r1]}")})
    repo.commit("count", {"cases/a.yaml": case("a", counted)})  # stricter: not flagged
    repo.commit("stop counting", {"cases/a.yaml": case("a", counted.replace("keep", "ignore"))})
    assert brief(loosenings(repo.suite)) == [
        ("a", "refunds", "duplicates-ignored", "keep", "ignore")
    ]


SPANS = """
    trace:
      mode: spans
      must_have:
        - {name: "chat *", count: {min: 1, max: 3}}
        - {name: retrieve, attributes: {db.system: qdrant, db.collection: faq}}
        - {name: "execute_tool *", max_duration_ms: 500}
      must_not_have: ["*retry*", {name: "execute_tool *", attributes: {tool: delete}}]
      max_errors: {"*": 1, "chat *": 0}
"""


def test_a_spans_check_loosened_span_by_span(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", SPANS)})
    repo.commit(
        "loosen",
        {
            "cases/a.yaml": case(
                "a",
                """
        trace:
          mode: spans
          must_have:
            - {name: "chat *", count: {min: 0, max: 5}}
            - {name: retrieve, attributes: {db.system: qdrant}}
            - {name: "execute_tool *", max_duration_ms: 900}
          must_not_have: [{name: "execute_tool *", attributes: {tool: delete}}]
          max_errors: {"*": 3}
    """,
            )
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "trace.must_have", "span-count-loosened", {"chat *": "1–3×"}, {"chat *": "0–5×"}),
        ("a", "trace.must_have", "span-attributes-dropped",
         {"retrieve": {"db.system": "qdrant", "db.collection": "faq"}},
         {"retrieve": {"db.system": "qdrant"}}),
        ("a", "trace.must_have", "span-duration-raised",
         {"execute_tool *": "≤ 500 ms"}, {"execute_tool *": "≤ 900 ms"}),
        ("a", "trace.must_not_have", "must-not-have-removed",
         ["*retry*", {"name": "execute_tool *", "attributes": {"tool": "delete"}}],
         [{"name": "execute_tool *", "attributes": {"tool": "delete"}}]),
        ("a", "trace.max_errors", "error-limit-raised", {"*": 1}, {"*": 3}),
        ("a", "trace.max_errors", "error-limit-raised", {"chat *": 0}, {"chat *": 3}),
    ]  # fmt: skip


def test_spans_no_longer_required_or_timed_and_errors_unlimited(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", SPANS)})
    repo.commit(
        "loosen",
        {
            "cases/a.yaml": case(
                "a",
                """
        trace:
          mode: spans
          must_have:
            - {name: "chat *", count: {min: 1, max: 3}}
            - "execute_tool *"
          must_not_have: ["*retry*", {name: "execute_tool *", attributes: {tool: delete}}]
          max_errors: {"chat *": 0}
    """,
            )
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "trace.must_have", "must-have-removed",
         [{"name": "chat *", "count": {"min": 1, "max": 3}},
          {"name": "retrieve", "attributes": {"db.system": "qdrant", "db.collection": "faq"}},
          {"name": "execute_tool *", "max_duration_ms": 500.0}],
         [{"name": "chat *", "count": {"min": 1, "max": 3}}, "execute_tool *"]),
        ("a", "trace.must_have", "span-duration-raised", {"execute_tool *": "≤ 500 ms"},
         {"execute_tool *": None}),
        ("a", "trace.max_errors", "error-limit-raised", {"*": 1}, {"*": None}),
    ]  # fmt: skip


def test_spans_checks_made_stricter_or_moved_are_not_flagged(repo: Repo) -> None:
    repo.commit("add", {"cases/a.yaml": case("a", SPANS)})
    repo.commit(
        "tighten and reorganise",
        {
            "cases/a.yaml": case(
                "a",
                """
        trace:
          mode: spans
          must_have:
            - {name: "chat *", count: 2}
            - {name: "execute_tool *", max_duration_ms: 400, percentile: 100}
          must_not_have: ["*"]
        data:
          mode: spans
          must_have:
            - {name: retrieve, attributes: {db.system: qdrant, db.collection: faq, k: 5}}
          max_errors: 0
    """,
            )
        },
    )
    assert loosenings(repo.suite) == []
    # a percentile lowered lets more slow spans through; the check removed while another
    # spans check remains is read span by span
    repo.commit(
        "loosen",
        {
            "cases/a.yaml": case(
                "a",
                """
        trace:
          mode: spans
          must_have: [{name: "execute_tool *", max_duration_ms: 400, percentile: 95}]
    """,
            )
        },
    )
    assert [(f.field, f.kind, f.before, f.after) for f in loosenings(repo.suite, "HEAD~1")] == [
        ("trace.must_have", "must-have-removed",
         [{"name": "chat *", "count": {"min": 2, "max": 2}},
          {"name": "execute_tool *", "max_duration_ms": 400.0, "percentile": 100.0}],
         [{"name": "execute_tool *", "max_duration_ms": 400.0, "percentile": 95.0}]),
        ("trace.must_have", "span-duration-raised", {"execute_tool *": "p100 ≤ 400 ms"},
         {"execute_tool *": "p95 ≤ 400 ms"}),
        ("trace.must_not_have", "must-not-have-removed", ["*"], []),
        ("data.must_have", "must-have-removed",
         [{"name": "retrieve",
           "attributes": {"db.system": "qdrant", "db.collection": "faq", "k": 5}}],
         []),
        ("data.max_errors", "error-limit-raised", {"*": 0}, {"*": None}),
    ]  # fmt: skip


def test_a_spans_check_turned_ignore_or_removed_with_no_other(repo: Repo) -> None:
    kept = "reply: {must_include: [ok]}"
    repo.commit(
        "add",
        {
            "cases/a.yaml": case("a", SPANS + "    " + kept),
            "cases/b.yaml": case("b", SPANS + "    " + kept),
        },
    )
    repo.commit(
        "ignore",
        {
            "cases/a.yaml": case("a", "trace: {mode: ignore, reason: flaky}\n" + kept),
            "cases/b.yaml": case("b", kept),
        },
    )
    assert brief(loosenings(repo.suite)) == [
        ("a", "trace", "ignored", "spans", "ignore"),
        ("b", "trace", "check-removed", "spans", None),
    ]


AUDIT_GUIDE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "audit.md"


def test_the_audit_guide_lists_exactly_the_kinds_the_audit_reports() -> None:
    rows = re.findall(r"^\| `([a-z-]+)` \|", AUDIT_GUIDE.read_text(encoding="utf-8"), re.M)
    assert len(rows) == len(set(rows)), "a kind is listed twice"
    assert set(rows) == set(all_kinds())
    assert set(KINDS) < set(all_kinds())  # the modes' own (an option's) are there too
