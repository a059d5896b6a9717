"""`caseforge import inspect`: Inspect AI sample datasets (JSONL, JSON, CSV) as cases, on
fictional fixtures in tests/interop/data/. The checks it writes are held to Inspect's own
scorers (inspect_ai is a dev dependency): the same replies pass and fail in both."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from caseforge.checks.base import BaseCheck
from caseforge.checks.builtin import ExactCheck, MustIncludeCheck, RegexCheck
from caseforge.interop.inspect_dataset import InspectImport, import_inspect, match_pattern
from caseforge.interop.report import ItemStatus
from caseforge.results import CheckStatus
from tests.interop.helpers import DATA, cli, files_of

yaml = YAML(typ="safe")


def case(suite: Path, case_id: str) -> dict[str, object]:
    data = yaml.load((suite / "cases" / f"{case_id}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_integer_ids_and_a_list_target(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    report = import_inspect(InspectImport(DATA / "capitals.jsonl", suite))
    ids = [item.case_id for item in report.items]
    assert ids == [
        "capitals-1", "capitals-2", "capitals-3", "capitals-4", "capitals-q-5", "capitals-6"
    ]  # fmt: skip
    first = case(suite, "capitals-1")
    mark = first["provenance"]["imported_from"]  # type: ignore[index]
    assert mark["id"] == 1 and mark["format"] == "inspect" and mark["where"] == "line 1"
    assert first["provenance"]["metadata"] == {"region": "north", "difficulty": "easy"}  # type: ignore[index]
    assert first["source"] == "imported"
    assert first["expect"] == {
        "reply": {"mode": "must_include", "values": ["Lumenport"], "case_sensitive": False}
    }
    # A list means any one of them: must_include with match: any.
    assert case(suite, "capitals-2")["expect"] == {
        "reply": {
            "mode": "must_include",
            "values": ["Lumenport", "Saltreach", "Ostmere"],
            "match": "any",
            "case_sensitive": False,
        }
    }
    # A string id with `_` and capitals is slugified, the original kept.
    q5 = case(suite, "capitals-q-5")
    assert q5["provenance"]["imported_from"]["id"] == "Q_5"  # type: ignore[index]
    assert q5["input"] == {
        "message": "How many provinces does Vandoria have?",
        "choices": ["5", "7", "9"],
    }
    # No target: an ignore check that says so, never a case without checks.
    assert case(suite, "capitals-6")["expect"] == {
        "reply": {"mode": "ignore", "reason": "the Inspect sample has no target"}
    }


def test_a_list_target_validates(tmp_path: Path) -> None:
    done = cli("import", "inspect", DATA / "capitals.jsonl", "--out", tmp_path / "suite")
    assert done.exit_code == 0, done.output
    assert cli("validate", tmp_path / "suite").exit_code == 0


def test_chat_messages_single_and_several_turns(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    report = import_inspect(InspectImport(DATA / "capitals.jsonl", suite))
    single = case(suite, "capitals-3")
    assert single["input"] == {
        "system": "You answer in one sentence.",
        "message": "Which river runs through Lumenport?",
    }
    assert "conversation" not in single
    several = case(suite, "capitals-4")
    assert several["input"] == {}
    assert several["conversation"] == {
        "max_turns": 2,
        "script": [{"say": "I want to visit Vandoria."}, {"say": "Winter. Where should I go?"}],
    }
    # The dataset's own assistant turn is not replayed: reported, and kept.
    item = report.items[3]
    assert any("assistant (message 2)" in note for note in item.notes)
    assert several["provenance"]["messages"][1] == {  # type: ignore[index]
        "role": "assistant",
        "content": "Which season?",
    }


def test_the_report_lists_every_sample_and_what_was_not_held(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    report = import_inspect(InspectImport(DATA / "capitals.jsonl", suite))
    lines = (DATA / "capitals.jsonl").read_text(encoding="utf-8").splitlines()
    assert [item.where for item in report.items] == [f"line {n}" for n in range(1, len(lines) + 1)]
    four = report.items[3]
    assert any(n.startswith("files:") for n in four.notes)
    assert any(n.startswith("setup:") for n in four.notes)
    assert case(suite, "capitals-4")["provenance"]["files"] == {"guide.txt": "guide/winter.txt"}  # type: ignore[index]
    five = report.items[4]
    assert any(n.startswith("difficulty:") for n in five.notes)  # a field Inspect ignores too
    written = (suite / "IMPORT.md").read_text(encoding="utf-8")
    for item in report.items:
        assert f"{item.label} → `{item.path}`" in written
    assert "not held: setup:" in written and "choices (1 samples)" in written


def test_csv_and_json_datasets(tmp_path: Path) -> None:
    done = cli("import", "inspect", DATA / "capitals.csv", "--out", tmp_path / "csv")
    assert done.exit_code == 0, done.output
    c2 = case(tmp_path / "csv", "capitals-c2")
    assert c2["input"] == {  # choices in one cell, split at commas as Inspect does
        "message": "How many provinces does Vandoria have?",
        "choices": ["5", "7", "9"],
    }
    assert case(tmp_path / "csv", "capitals-c1")["provenance"]["metadata"] == {"region": "north"}  # type: ignore[index]
    done = cli("import", "inspect", DATA / "capitals.json", "--out", tmp_path / "json",
               "--prefix", "")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert case(tmp_path / "json", "11")["note"] == "geography: lakes"
    assert "record 2 (id 11) -> cases/11.yaml (new)" in done.output
    assert cli("validate", tmp_path / "json").exit_code == 0


REPLIES = [
    "The capital is Lumenport.",
    "the capital is LUMENPORT!",
    "Lumenport is the capital.",
    "lumenport",
    "Lumenports",
    "It is Lumenport, I think",
    "",
]


@pytest.mark.parametrize("reply", REPLIES)
def test_includes_and_match_agree_with_inspects_scorers(reply: str) -> None:
    from inspect_ai.scorer._common import match_str

    targets = ["Lumenport", "Salt Reach."]
    for target in targets:  # Inspect's includes(): casefolded containment
        check = MustIncludeCheck(mode="must_include", values=[target], case_sensitive=False)
        assert passes(check, reply) == (target.casefold() in reply.casefold())
    matched = any(match_str(reply, t)[1] for t in targets)  # Inspect's match() defaults
    regex = RegexCheck(mode="regex", value=match_pattern(targets), case_sensitive=False)
    assert passes(regex, reply) == matched


def passes(check: BaseCheck, reply: str) -> bool:
    return check.grade(reply).status is CheckStatus.PASS


def test_scorers_exact_and_judge(tmp_path: Path) -> None:
    import_inspect(InspectImport(DATA / "capitals.jsonl", tmp_path / "exact", "exact"))
    check = case(tmp_path / "exact", "capitals-2")["expect"]["reply"]  # type: ignore[index]
    assert check == {
        "mode": "exact",
        "value": "Lumenport",
        "any_of": ["Saltreach", "Ostmere"],
        "case_sensitive": False,
        "normalize": True,
    }
    assert passes(ExactCheck.model_validate(check), "saltreach")
    report = import_inspect(InspectImport(DATA / "capitals.jsonl", tmp_path / "judge", "judge"))
    rubric = case(tmp_path / "judge", "capitals-2")["expect"]["reply"]["rubric"]  # type: ignore[index]
    assert '"Lumenport"; "Saltreach"; "Ostmere"' in rubric
    assert report.error() is None  # judge and exact need no match: any
    assert any("model_graded_qa" in note for note in report.notes)


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    done = cli("import", "inspect", DATA / "capitals.csv", "--out", suite, "--dry-run")
    assert done.exit_code == 0, done.output
    assert "(would import): 3 items: 3 new" in done.output
    assert not suite.exists()
    assert cli("import", "inspect", DATA / "capitals.csv", "--out", suite).exit_code == 0
    before = files_of(suite)
    changed = tmp_path / "capitals.csv"
    changed.write_text(
        (DATA / "capitals.csv").read_text(encoding="utf-8").replace("the Arden", "the Orrin"),
        encoding="utf-8",
    )
    done = cli("import", "inspect", changed, "--out", suite, "--dry-run")
    assert done.exit_code == 0, done.output
    assert "3 items: 3 new" in done.output  # another source: its own cases, none written
    assert files_of(suite) == before


def test_reimport_updates_its_own_cases_and_touches_nothing_else(tmp_path: Path) -> None:
    source = tmp_path / "data" / "capitals.csv"
    source.parent.mkdir()
    shutil.copy(DATA / "capitals.csv", source)
    suite = tmp_path / "suite"
    assert cli("import", "inspect", source, "--out", suite).exit_code == 0
    # A case of the user's own, whose id is one the import would want.
    mine = suite / "cases" / "mine.yaml"
    mine.write_text(
        "id: capitals-c4\ninput: {message: hi}\nexpect: {reply: {must_include: [hi]}}\n",
        encoding="utf-8",
    )
    config = (suite / "caseforge.yaml").read_bytes()
    c1 = (suite / "cases" / "capitals-c1.yaml").read_bytes()
    text = source.read_text(encoding="utf-8")
    text = text.replace("the Arden", "the Orrin")  # c3 changes
    text = text.replace("c2,How many provinces", "c9,How many provinces")  # c2 goes, c9 comes
    text += "c4,Which sea lies west of Vandoria?,the Grey Sea,,\n"  # c4: its id is taken
    source.write_text(text, encoding="utf-8")

    done = cli("import", "inspect", source, "--out", suite)
    assert done.exit_code == 0, done.output
    statuses = {item.split(" -> ")[0].strip(): item for item in done.output.splitlines()}
    assert "(unchanged)" in statuses["line 2 (id c1)"]
    assert "(updated)" in statuses["line 4 (id c3)"]
    assert "cases/capitals-c9.yaml (new)" in statuses["line 3 (id c9)"]
    assert "cases/capitals-c4-2.yaml (new)" in statuses["line 5 (id c4)"]
    assert "cases/capitals-c2.yaml: made by an earlier import" in done.output
    assert (suite / "cases" / "capitals-c2.yaml").exists()  # left as it is, and said
    assert mine.read_bytes().startswith(b"id: capitals-c4\n")
    assert (suite / "caseforge.yaml").read_bytes() == config
    assert (suite / "cases" / "capitals-c1.yaml").read_bytes() == c1
    c3 = case(suite, "capitals-c3")
    assert c3["expect"]["reply"]["values"] == ["the Orrin"]  # type: ignore[index]


def test_reimport_keeps_the_split_and_what_was_added_by_hand(tmp_path: Path) -> None:
    """`caseforge split --write`, a tag, a group and a note added to an imported case survive
    a re-import; what the source says (input, expect) is written afresh."""
    source = tmp_path / "capitals.csv"
    shutil.copy(DATA / "capitals.csv", source)
    suite = tmp_path / "suite"
    assert cli("import", "inspect", source, "--out", suite).exit_code == 0
    assert cli("split", suite, "--write").exit_code == 0
    path = suite / "cases" / "capitals-c3.yaml"
    split = case(suite, "capitals-c3")["split"]
    text = path.read_text(encoding="utf-8").replace("expect:", "note: checked by hand\nexpect:")
    path.write_text(text + "tags: [geography-hard]\ngroup: rivers\n", encoding="utf-8")
    source.write_text(
        source.read_text(encoding="utf-8").replace("the Arden", "the Orrin"), encoding="utf-8"
    )
    done = cli("import", "inspect", source, "--out", suite)
    assert done.exit_code == 0, done.output
    c3 = case(suite, "capitals-c3")
    assert c3["expect"]["reply"]["values"] == ["the Orrin"]  # type: ignore[index]
    assert (c3["split"], c3["note"], c3["group"]) == (split, "checked by hand", "rivers")
    assert "geography-hard" in c3["tags"]  # type: ignore[operator]
    assert c3["provenance"]["imported_from"]["id"] == "c3"  # type: ignore[index]
    assert all("split" in case(suite, p.stem) for p in (suite / "cases").iterdir())
    assert "no split" not in done.output


def test_a_retired_case_is_not_imported_again(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    assert cli("import", "inspect", DATA / "capitals.csv", "--out", suite).exit_code == 0
    assert cli("retire", suite, "capitals-c2", "--reason", "ambiguous").exit_code == 0
    before = files_of(suite / "cases")
    done = cli("import", "inspect", DATA / "capitals.csv", "--out", suite)
    assert done.exit_code == 0, done.output
    line = next(x for x in done.output.splitlines() if "(id c2)" in x)
    assert "skipped" in line and "'capitals-c2' was retired" in line, done.output
    assert files_of(suite / "cases") == before  # no capitals-c2-2 brought back


@pytest.mark.parametrize(
    ("content", "code", "says"),
    [
        (None, 2, "not found"),
        ('{"id": 1, "input": "a", "target": "b"}\n{"id": 2, "input": \n', 1, ":2:"),
        ('{"id": 1, "target": "b"}\n', 1, ":1: input: no input"),
        ('{"id": 1, "input": [{"role": "robot", "content": "x"}]}\n', 1, ":1: input.0.role:"),
        ('{"id": 1, "input": 5}\n', 1, ":1: input: a string or a list of chat messages"),
        ("[1, 2]\n", 1, "record 1: expected an object"),
    ],
)
def test_bad_datasets_are_one_line_errors(
    tmp_path: Path, content: str | None, code: int, says: str
) -> None:
    dataset = tmp_path / ("data.json" if content and content.startswith("[") else "data.jsonl")
    if content is not None:
        dataset.write_text(content, encoding="utf-8")
    done = cli("import", "inspect", dataset, "--out", tmp_path / "suite")
    assert done.exit_code == code, done.output
    assert says in done.output and "Traceback" not in done.output
    assert not (tmp_path / "suite").exists()  # nothing half-written


def test_usage_mistakes(tmp_path: Path) -> None:
    dataset = DATA / "capitals.csv"
    done = cli("import", "inspect", dataset, "--out", tmp_path / "s", "--scorer", "f1")
    assert done.exit_code == 2 and "--scorer must be one of" in done.output
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert cli("import", "inspect", dataset, "--out", tmp_path / "file").exit_code == 2
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "notes.txt").write_text("x", encoding="utf-8")
    done = cli("import", "inspect", dataset, "--out", tmp_path / "folder")
    assert done.exit_code == 2 and "not a suite" in done.output
    (tmp_path / "data.txt").write_text("x", encoding="utf-8")
    done = cli("import", "inspect", tmp_path / "data.txt", "--out", tmp_path / "s")
    assert done.exit_code == 2 and "cannot tell its format" in done.output


def test_a_failed_item_status_is_never_left_unset(tmp_path: Path) -> None:
    report = import_inspect(InspectImport(DATA / "capitals.csv", tmp_path / "s"), dry_run=True)
    assert all(item.status is ItemStatus.NEW for item in report.items)
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    "reply",
    [
        "ANSWER: B",
        "answer: b",
        "Let me think. Seven provinces.\nANSWER: B",
        "ANSWER: (B)",
        "ANSWER: **B**",
        "ANSWER: A",
        "Both are possible, but I believe the answer is 7.",
        "B is right, I think",
        "",
    ],
)
def test_a_letter_target_among_choices_reads_answer_as_inspects_solver_does(
    reply: str, tmp_path: Path
) -> None:
    """A target that is one letter of the sample's choices is read from `ANSWER: X`, as
    Inspect's multiple_choice() solver parses it: the letter alone ("b") would match almost
    any reply."""
    from types import SimpleNamespace

    from inspect_ai.solver._multiple_choice import parse_answers

    data = tmp_path / "mc.jsonl"
    data.write_text(
        '{"id": 1, "input": "How many provinces?", "choices": ["5", "7", "9"], "target": "B"}\n',
        encoding="utf-8",
    )
    import_inspect(InspectImport(data, tmp_path / "suite"))
    check = case(tmp_path / "suite", "mc-1")["expect"]["reply"]  # type: ignore[index]
    assert check["mode"] == "regex"  # type: ignore[index]
    state = SimpleNamespace(output=SimpleNamespace(completion=reply), choices=["5", "7", "9"])
    inspect_says = parse_answers(state, multiple_correct=False) == {"B"}  # type: ignore[arg-type]
    assert passes(RegexCheck.model_validate(check), reply) == inspect_says, reply
