"""Two labellers writing one labels file at once (two servers, or a server and
`caseforge label`): both save through `save_label`, a locked read-modify-write of the
file, so no edit is lost and an output is labeled once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.calibrate import load_labels
from caseforge.calibrate.labels import AlreadyLabeledError, LabeledOutput, save_item
from caseforge.calibrate.queue import LabelTask, label_tasks, save_label
from caseforge.cli import app, calibrate_cmd
from tests.calibrate.test_calibrate import FACTS, judged_suite
from tests.conftest import MakeToySuite

REPO = Path(__file__).resolve().parents[2]
CASE = "case-a"

# One labeller: imports, says it is ready, waits for the word, then saves its outputs one
# by one (each a fresh read-modify-write of labels/case-a.yaml) and prints what it saved.
WRITER = """
import sys
from pathlib import Path
from caseforge.calibrate.labels import AlreadyLabeledError
from caseforge.calibrate.queue import LabelTask, save_label

suite, who, prefix, count = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
print("ready", flush=True)
sys.stdin.readline()
saved = refused = 0
for i in range(count):
    task = LabelTask("r1", None, "case-a", 1, "facts", ["f"], f"{prefix} output {i}", {})
    try:
        save_label(suite, task, {"f": "conveyed"}, who)
        saved += 1
    except AlreadyLabeledError:
        refused += 1
print(f"saved {saved} refused {refused}", flush=True)
"""


def _race(suite: Path, writers: list[tuple[str, str]], count: int) -> list[str]:
    """Start each writer, wait until all are ready, let them go at once; their last lines."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(suite), who, prefix, str(count)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who, prefix in writers
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
            results.append(out.strip().splitlines()[-1])
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


def test_two_processes_labelling_one_file_lose_no_edit(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    results = _race(suite, [("ana", "ana"), ("bo", "bo")], count=40)
    assert results == ["saved 40 refused 0", "saved 40 refused 0"]
    (labels,) = load_labels(suite)
    outputs = sorted(item.output for item in labels.items)
    expected = sorted(f"{who} output {i}" for who in ("ana", "bo") for i in range(40))
    assert outputs == expected  # every edit survived, none twice


def test_the_same_output_labeled_in_two_processes_is_saved_once(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    results = _race(suite, [("ana", "shared"), ("bo", "shared")], count=30)
    counts = [tuple(int(word) for word in line.split()[1::2]) for line in results]
    assert sum(saved for saved, _ in counts) == 30, results
    assert all(saved + refused == 30 for saved, refused in counts), results
    (labels,) = load_labels(suite)
    assert sorted(item.output for item in labels.items) == sorted(
        f"shared output {i}" for i in range(30)
    )


def test_an_output_already_labeled_is_refused_with_who_labeled_it(tmp_path: Path) -> None:
    item = LabeledOutput(check="facts", output="the reply", labels={"f": "missing"}, labeler="ana")
    save_item(tmp_path, CASE, item)
    again = LabeledOutput(check="facts", output="the reply", labels={"f": "conveyed"})
    with pytest.raises(AlreadyLabeledError, match="already labeled by ana"):
        save_item(tmp_path, CASE, again)
    other = LabeledOutput(check="facts", output="another reply", labels={"f": "conveyed"})
    save_item(tmp_path, CASE, other)
    assert [i.output for i in load_labels(tmp_path)[0].items] == ["the reply", "another reply"]


def test_the_terminal_labeller_skips_an_output_labeled_meanwhile(
    toy_suite: MakeToySuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from caseforge.run.runner import Runner, RunOptions
    from caseforge.store.db import RunStore

    root = judged_suite(toy_suite)
    url = f"sqlite:///{tmp_path / 'l.db'}"
    outcome = asyncio.run(Runner(RunOptions(suite_dir=root, judge="off"), RunStore(url)).run())
    run_id = outcome.runs[0].run_id

    def read_then_labeled_elsewhere(*args: object) -> list[LabelTask]:
        tasks = label_tasks(*args)  # type: ignore[arg-type]
        save_label(root, tasks[0], {FACTS[0]: "missing"}, "bo")  # the browser, meanwhile
        return tasks

    monkeypatch.setattr(calibrate_cmd, "label_tasks", read_then_labeled_elsewhere)
    done = CliRunner().invoke(
        app, ["label", run_id, "--store", url, "--labeler", "ana"], input="c\nc\nc\nc\n"
    )
    assert done.exit_code == 0, done.output
    assert "skipped: " in done.output and "was already labeled by bo" in done.output
    assert "done: 1 labeled, 1 skipped" in done.output
    items = load_labels(root)[0].items
    assert [(i.labeler, i.labels) for i in items] == [
        ("bo", {FACTS[0]: "missing"}),  # kept, not overwritten nor doubled by ana's answer
        ("ana", {FACTS[0]: "conveyed", FACTS[1]: "conveyed"}),
    ]
