"""Input too deep or too large (issue 21, item 9): the 1 KB alias bomb and 3,000 levels of
nesting, in YAML, in a JSONL line and in caseforge.yaml, are one line naming the file, the
line and the limit, promptly; sharing that stays under the limits still loads."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from caseforge.case.limits import MAX_DEPTH, MAX_NODES, exceeded, json_too_deep
from caseforge.case.load import load_case, load_suite
from caseforge.errors import CaseforgeError
from tests.conftest import SuiteFactory, good_case
from tests.helpers import REPO_ROOT, caseforge_process

# The classic "billion laughs": nine levels of nine aliases, 9^9 strings once expanded.
BOMB = (
    "id: bomb\ninput:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))
    + "expect: {category: {mode: exact, value: refund}}\n"
)
DEEP = (
    "id: deep\ninput:\n  x: " + "[" * 3000 + "]" * 3000 + "\nexpect: {x: {mode: exact, value: 1}}\n"
)


def nested(levels: int) -> object:
    value: object = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def validate_process(suite: Path) -> subprocess.CompletedProcess[str]:
    """`caseforge validate` in a process of its own. The timeout is generous: a hang (the
    alias bomb used to never return) fails it; a busy machine does not."""
    return caseforge_process("validate", str(suite), cwd=REPO_ROOT, timeout=120)


def test_the_bomb_is_1_kb() -> None:
    assert len(BOMB.encode()) < 1024
    assert len(DEEP.encode()) < 7 * 1024


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("bomb.yaml", BOMB, "bomb.yaml:8:12: input.a5.0: more than 100,000 values"),
        ("deep.yaml", DEEP, "deep.yaml:3:104: input.x.0.0.…95 more….0: nested deeper than 100"),
    ],
)
def test_validate_says_where_promptly(
    make_suite: SuiteFactory, name: str, text: str, where: str
) -> None:
    suite = make_suite({f"cases/{name}": text, "cases/a.yaml": good_case("a")})
    result = validate_process(suite)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    [line] = [x for x in result.stderr.splitlines() if not x.startswith("warning:")]
    assert where in line
    # The loader built the bomb as shared objects and the walk measures each object once:
    # nothing close to expanding 9^9 values (or a stack of 3,000 frames) happens, or the
    # process would not have ended within the timeout.


def test_a_deep_jsonl_line_is_named_and_the_other_lines_load(make_suite: SuiteFactory) -> None:
    good = {"id": "j1", "input": {}, "expect": {"x": {"mode": "exact", "value": 1}}}
    deep = '{"id": "j2", "expect": {}, "input": ' + "[" * 3000 + "]" * 3000 + "}"
    suite = make_suite({"cases/bulk.jsonl": json.dumps(good) + "\n" + deep + "\n"})
    with pytest.raises(CaseforgeError) as caught:
        load_suite(suite)
    [problem] = caught.value.problems
    assert (problem.line, problem.col) == (2, deep.index("[") + MAX_DEPTH)
    assert "nested deeper than 100 levels" in problem.message


def test_a_jsonl_line_of_too_many_values(make_suite: SuiteFactory) -> None:
    many = {"id": "j1", "input": {"xs": [0] * MAX_NODES}, "expect": {}}
    suite = make_suite({"cases/bulk.jsonl": json.dumps(many) + "\n"})
    with pytest.raises(CaseforgeError, match=r"bulk.jsonl:1:1: more than 100,000 values"):
        load_suite(suite)


def test_the_limits_apply_to_caseforge_yaml(make_suite: SuiteFactory) -> None:
    config = "name: demo\nnotes:\n" + BOMB.split("input:\n")[1].split("expect:")[0]
    suite = make_suite({"cases/a.yaml": good_case("a")}, config=config)
    with pytest.raises(CaseforgeError, match=r"caseforge.yaml:8:12: notes.a5.0: more than"):
        load_suite(suite)


def test_load_case_refuses_the_bomb(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(BOMB, encoding="utf-8")
    with pytest.raises(CaseforgeError, match="more than 100,000 values"):
        load_case(tmp_path / "bomb.yaml")


def test_sharing_under_the_limits_still_loads(make_suite: SuiteFactory) -> None:
    """Aliases are fine: three levels of nine (819 values once expanded) load as written."""
    small = "\n".join(BOMB.splitlines()[:5]) + "\nexpect: {category: {mode: exact, value: x}}\n"
    suite = make_suite({"cases/small.yaml": small.replace("id: bomb", "id: small")})
    [loaded] = load_suite(suite).cases
    assert len(loaded.case.input["a2"]) == 9 and loaded.case.input["a2"][0][0] == ["lol"] * 9


def test_a_recursive_alias_is_refused(make_suite: SuiteFactory) -> None:
    text = "id: r\ninput:\n  x: &x [1, *x]\nexpect: {category: {mode: exact, value: x}}\n"
    suite = make_suite({"cases/r.yaml": text})
    with pytest.raises(CaseforgeError) as caught:
        load_suite(suite)
    [problem] = caught.value.problems
    assert problem.line == 3 and "nest" in problem.message


def test_exactly_the_limits_pass_and_one_more_does_not() -> None:
    assert exceeded({"input": nested(MAX_DEPTH - 1)}) is None  # the root mapping is a level
    assert exceeded({"input": nested(MAX_DEPTH)}) == "depth"
    assert exceeded(list(range(MAX_NODES - 1))) is None  # the list itself is a value
    assert exceeded(list(range(MAX_NODES))) == "nodes"


def test_the_walk_measures_each_shared_object_once() -> None:
    """2^60 values once expanded, 61 objects: measured at once, and refused."""
    value: object = "x"
    for _ in range(60):
        value = [value, value]
    found: list[str | None] = []
    walker = threading.Thread(target=lambda: found.append(exceeded({"input": value})), daemon=True)
    walker.start()
    walker.join(120)  # generous: expanding 2^60 values would never end at all
    assert found == ["nodes"]


def test_json_depth_skips_brackets_in_strings() -> None:
    text = json.dumps({"s": "[" * 500, "x": nested(10)})
    assert json_too_deep(text) is None
    assert json_too_deep(json.dumps(nested(MAX_DEPTH + 5))) == MAX_DEPTH + 1


def test_context_files_are_held_to_the_limits(tmp_path: Path) -> None:
    """Sent with every request: a bomb there would be expanded into each one."""
    from caseforge.case.context import load_context

    (tmp_path / "context").mkdir()
    (tmp_path / "context" / "policy.yaml").write_text(
        BOMB.split("input:\n")[1].split("expect:")[0].replace("\n  ", "\n")[2:],
        encoding="utf-8",
    )
    with pytest.raises(CaseforgeError, match=r"policy.yaml:6:10: a5.0: more than 100,000"):
        load_context(tmp_path)
    (tmp_path / "context" / "policy.yaml").unlink()
    (tmp_path / "context" / "tools.json").write_text("[" * 3000 + "]" * 3000, encoding="utf-8")
    with pytest.raises(CaseforgeError, match=r"tools.json: nested deeper than 100 levels"):
        load_context(tmp_path)


def test_the_review_form_refuses_a_bomb() -> None:
    from caseforge.serve.reviewing import parse_expect

    bomb = BOMB.split("input:\n")[1].split("expect:")[0].replace("\n  ", "\n")[2:]
    with pytest.raises(CaseforgeError, match="expect: more than 100,000 values"):
        parse_expect(bomb)
