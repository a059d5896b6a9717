"""`caseforge merge`: shards run into stores of their own come back together as one report,
the same as the run made in one store; overlaps, other runs and missing shards are refused,
naming which.

The shards, the single-store runs and most merges run in this process (typer's CliRunner),
which saves a process start-up each; one merge runs as a process of its own, as CI runs it.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from caseforge.cli import app
from tests.conftest import MakeToySuite
from tests.helpers import caseforge_process

runner = CliRunner()


def caseforge(*argv: str) -> Result:
    """``caseforge ARGV...`` in this process."""
    return runner.invoke(app, list(argv))


def _suite(toy_suite: MakeToySuite) -> Path:
    cases = [
        {
            "id": f"c{i:02d}",
            "input": {"want": "refund" if i % 4 else "other"},
            "tags": [f"t{i % 3}"],
        }
        for i in range(16)
    ]
    return toy_suite(cases, trials=2, configs={"v1": {}})


def _shards(root: Path, tmp: Path, n: int, run_id: str = "ci-5") -> list[Path]:
    reports = []
    for index in range(1, n + 1):
        out = tmp / f"shard{index}"
        store = f"sqlite:///{tmp / f's{index}.db'}"
        shard = f"{index}/{n}"
        done = caseforge(
            "run", str(root), "--store", store, "--run-id", run_id, "--shard", shard,
            "--out", str(out), "-q",
        )  # fmt: skip
        assert done.exit_code in (0, 1), done.stderr
        reports.append(out / "report.json")
    return reports


def test_merged_shards_report_what_one_store_would(toy_suite: MakeToySuite, tmp_path: Path) -> None:
    root = _suite(toy_suite)
    reports = _shards(root, tmp_path, 3)
    # The one merge in a process of its own: the command as CI runs it.
    merged = caseforge_process("merge", *map(str, reports), "--out", str(tmp_path / "merged"))
    assert merged.returncode == 0, merged.stderr
    assert "merged 3 shard(s) of run ci-5: 32 case-trials" in merged.stdout
    whole = caseforge("run", str(root), "--store", f"sqlite:///{tmp_path / 'one.db'}",
                      "--run-id", "ci-5", "--out", str(tmp_path / "one"), "-q")  # fmt: skip
    assert whole.exit_code in (0, 1), whole.stderr
    a = json.loads((tmp_path / "merged" / "report.json").read_text())
    b = json.loads((tmp_path / "one" / "report.json").read_text())
    assert a["status"] == "finished" and [s["shard"] for s in a["shards"]] == [1, 2, 3]
    assert a["finished_at"] == max(s["finished_at"] for s in a["shards"])
    for key in ("pass_rate", "pass_rate_ci", "case_trials", "fully_passing_cases", "slices",
                "pass_hat_k", "cost_usd", "input_tokens"):  # fmt: skip
        assert a["summary"][key] == b["summary"][key], key
    assert a["checks"] == b["checks"]
    assert [(c["id"], [t["status"] for t in c["trials"]]) for c in a["cases"]] == [
        (c["id"], [t["status"] for t in c["trials"]]) for c in b["cases"]
    ]
    gate = caseforge("baseline", str(tmp_path / "merged" / "report.json"), "--write",
                     str(tmp_path / "baseline.json"))  # fmt: skip
    assert gate.exit_code == 0, gate.stderr  # a merged report is a finished run's report


def test_missing_twice_given_and_unfinished_shards_are_refused(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    root = _suite(toy_suite)
    one, two, three = _shards(root, tmp_path, 3)
    missing = caseforge("merge", str(one), str(three), "--out", str(tmp_path / "m"))
    assert missing.exit_code == 2 and "missing shard(s) 2 of 3" in missing.stderr
    twice = caseforge("merge", str(one), str(two), str(two), "--out", str(tmp_path / "m"))
    assert twice.exit_code == 2 and "shard 2/3 is given twice" in twice.stderr
    assert not (tmp_path / "m").exists()  # nothing half-written


def test_shards_of_another_run_or_commit_are_refused(
    toy_suite: MakeToySuite, tmp_path: Path
) -> None:
    root = _suite(toy_suite)
    one, _two = _shards(root, tmp_path / "a", 2, run_id="ci-5")
    _one, other = _shards(root, tmp_path / "b", 2, run_id="ci-6")
    mixed = caseforge("merge", str(one), str(other), "--out", str(tmp_path / "m"))
    assert mixed.exit_code == 2
    assert "a different run id" in mixed.stderr and "'ci-6', not 'ci-5'" in mixed.stderr


def test_a_report_that_is_not_a_shard_is_refused(toy_suite: MakeToySuite, tmp_path: Path) -> None:
    root = _suite(toy_suite)
    out = tmp_path / "plain"
    done = caseforge("run", str(root), "--store", f"sqlite:///{tmp_path / 'p.db'}", "--out",
                     str(out), "-q")  # fmt: skip
    assert done.exit_code in (0, 1), done.stderr
    refused = caseforge("merge", str(out / "report.json"), "--out", str(tmp_path / "m"))
    assert refused.exit_code == 2 and "records no shard" in refused.stderr
    assert "Traceback" not in refused.stderr
