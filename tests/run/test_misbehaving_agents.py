"""An agent (or a hook, a check, a simulated user) that exits, interrupts, prints, writes
to stderr without end, answers 50 MB or answers NaN: each costs only its own case-trial,
and caseforge's exit code, stored run and stdout stay what CI relies on. Each test runs
the real CLI in a process of its own, in the shape the defect was found in."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from caseforge.store.db import RunStore
from tests.helpers import caseforge_process, write_toy_suite

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
MB = 1024 * 1024


def _suite(root: Path, cases: list[dict[str, Any]], files: dict[str, str], **config: Any) -> Path:
    settings = {"name": "bad", "trials": 1, "timeout_s": 120, **config}
    expect = {"x": {"mode": "exact", "value": 1}}
    dedented = {name: textwrap.dedent(text) for name, text in files.items()}
    return write_toy_suite(root, cases, settings, expect=expect, files=dedented)


def _peak_rss_mb(*argv: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run caseforge in a fresh process and read its peak memory from RUSAGE_CHILDREN once
    it has exited (from a wrapper of its own, so no earlier child of the tests counts)."""
    wrapper = (
        "import json, resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps([peak, done.returncode, done.stdout, done.stderr]))\n"
    )
    measured = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "-m", "caseforge", *argv],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    peak, code, out, err = json.loads(measured.stdout)
    return peak, subprocess.CompletedProcess(argv, code, out, err)


def _trials(report: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return {case["id"]: case["trials"][0] for case in data["cases"]}


MISBEHAVING = """
import asyncio, sys, threading

def run(input, ctx):
    what = input.get("do", "ok")
    if what == "exit":
        sys.exit(3)
    if what == "interrupt":
        raise KeyboardInterrupt
    if what == "print":
        print("PRINTED-BY-THE-AGENT", ctx.case_id)
        print("TO-STDERR-BY-THE-AGENT", file=sys.stderr)
        t = threading.Thread(target=lambda: print("FROM-A-THREAD-OF-ITS-OWN"))
        t.start(); t.join()
    return {"output": {"x": 1}}

async def run_async(input, ctx):
    if input.get("do") == "exit":
        sys.exit(4)
    return {"output": {"x": 1}}

def setup(workspace, case):
    if case.input.get("do") == "setup-exit":
        sys.exit(5)
    print("HOOK-PRINTED", case.id)

def probe(workspace, result, case):
    if case.input.get("do") == "probe-exit":
        sys.exit(6)
    return {"done": True}
"""

CHECKS = """
from typing import Literal
from caseforge import CheckMode, passed
import sys

class Quits(CheckMode):
    mode: Literal["quits"]
    strength = 10

    def grade(self, actual):
        sys.exit(7)
"""


def test_sys_exit_and_keyboard_interrupt_in_suite_code_fail_only_their_case_trial(
    tmp_path: Path,
) -> None:
    """An agent calling sys.exit(3) ended the run silently with exit 3 (the budget code), no
    report, the run stopped with 0 case-trials. Now each exit is that code's failure."""
    cases = [{"id": f"ok{i}", "input": {}} for i in range(4)] + [
        {"id": "exit", "input": {"do": "exit"}},
        {"id": "interrupt", "input": {"do": "interrupt"}},
        {"id": "setup-exit", "input": {"do": "setup-exit"}},
        {"id": "probe-exit", "input": {"do": "probe-exit"},
         "expect": {"done": {"mode": "outcome", "value": True}}},
        {"id": "check-exit", "input": {}, "expect": {"x": {"mode": "quits"}}},
    ]  # fmt: skip
    root = _suite(
        tmp_path / "suite",
        cases,
        {"agent.py": MISBEHAVING, "checks.py": CHECKS},
        agent={"callable": "agent:run"},
        workspace_setup="agent:setup",
        outcome_probe="agent:probe",
        checks="checks.py",
    )
    out = tmp_path / "out"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    done = caseforge_process(
        "run", str(root), "-q", "--store", store, "--out", str(out), "--max-error-rate", "1"
    )
    assert done.returncode == 0, done
    trials = _trials(out / "report.json")
    assert trials["exit"]["error"] == "the agent called sys.exit(3)"
    assert trials["interrupt"]["error"].startswith("KeyboardInterrupt") or (
        trials["interrupt"]["error"] == "the agent raised KeyboardInterrupt"
    )
    assert trials["setup-exit"]["error"] == "workspace_setup failed: called sys.exit(5)"
    assert trials["probe-exit"]["checks"][0]["reason"] == (
        "the outcome probe failed: called sys.exit(6)"
    )
    assert trials["check-exit"]["checks"][0]["reason"] == "grading called sys.exit(7)"
    assert all(trials[f"ok{i}"]["status"] == "pass" for i in range(4))
    [run] = RunStore(store).list_runs()
    assert run.status == "finished"

    async_agent = caseforge_process(
        "run", str(root), "-q", "--store", store, "--agent", "agent:run_async",
        "--case", "exit", "--case", "ok0", "--max-error-rate", "1",
    )  # fmt: skip
    assert async_agent.returncode == 0, async_agent
    assert (
        "the agent called sys.exit(4)"
        in caseforge_process("show", "latest", "exit", "--store", store).stdout
    )


def test_an_agent_module_that_exits_on_import_is_one_line(tmp_path: Path) -> None:
    root = _suite(
        tmp_path / "suite",
        [{"id": "a", "input": {}}],
        {"agent.py": "import sys\nsys.exit(0)\n"},
        agent={"callable": "agent:run"},
    )
    done = caseforge_process("run", str(root), "-q", "--store", f"sqlite:///{tmp_path / 's.db'}")
    assert done.returncode == 1, done  # an invalid suite: the agent cannot be loaded
    where, said = done.stderr.strip().split(": agent.callable: ")
    assert where.startswith(f"{root / 'caseforge.yaml'}:1:")  # the file and the line
    assert said == "'agent:run': importing 'agent' called sys.exit(0)"


def test_what_in_process_suite_code_prints_is_kept_with_its_trial_not_on_stdout(
    tmp_path: Path,
) -> None:
    root = _suite(
        tmp_path / "suite",
        [{"id": "talks", "input": {"do": "print"}}, {"id": "quiet", "input": {}}],
        {"agent.py": MISBEHAVING},
        agent={"callable": "agent:run"},
        workspace_setup="agent:setup",
    )
    store = f"sqlite:///{tmp_path / 'store.db'}"
    done = caseforge_process("run", str(root), "--store", store)
    assert done.returncode == 0, done
    for printed in ("PRINTED-BY-THE-AGENT", "TO-STDERR-BY-THE-AGENT", "HOOK-PRINTED"):
        assert printed not in done.stdout and printed not in done.stderr
    assert "FROM-A-THREAD-OF-ITS-OWN" not in done.stdout  # a stray thread: stderr at most
    shown = caseforge_process("show", "latest", "talks", "--store", store)
    assert shown.returncode == 0, shown
    log = shown.stdout.split("log (what the agent's side wrote):", 1)[1]
    assert "PRINTED-BY-THE-AGENT talks" in log and "TO-STDERR-BY-THE-AGENT" in log
    assert "HOOK-PRINTED talks" in log
    quiet = caseforge_process("show", "latest", "quiet", "--store", store).stdout
    assert "HOOK-PRINTED quiet" in quiet and "PRINTED-BY-THE-AGENT" not in quiet


CHATTY = """
import json, os, sys
request = json.load(sys.stdin)
chunk = b"x" * 1023 + b"\\n"
for _ in range({mb} * 1024):
    os.write(2, chunk)
print(json.dumps({{"output": {{"x": 1}}}}))
"""


def test_a_command_agent_writing_without_end_to_stderr_costs_no_memory(tmp_path: Path) -> None:
    """One case-trial writing to stderr for 15 s took caseforge to 1.64 GB: stderr was
    buffered whole. Now its head and tail are kept and the rest counted."""
    root = _suite(
        tmp_path / "suite",
        [{"id": "chatty", "input": {}}],
        {"chatty.py": CHATTY.format(mb=600)},
        agent={"command": [sys.executable, "chatty.py"]},
    )
    store = f"sqlite:///{tmp_path / 'store.db'}"
    peak, done = _peak_rss_mb("run", str(root), "-q", "--store", store)
    assert done.returncode == 0, done
    assert peak < 200, f"caseforge peaked at {peak:.0f} MB for 600 MB of stderr"
    shown = caseforge_process("show", "latest", "chatty", "--store", store)
    # A passing trial keeps 8 KB of each end of its log (a failing one 64 KB).
    assert f"{600 * MB - 16 * 1024:,} bytes dropped between head and tail" in shown.stdout
    with sqlite3.connect(tmp_path / "store.db") as db:
        [(log,)] = db.execute("SELECT log_json FROM results").fetchall()
    assert len(log) < 20 * 1024  # the head and the tail, 8 KB each


HUGE = """
import json, sys
json.load(sys.stdin)
reply = "refund approved " + "lorem ipsum " * ({mb} * 1024 * 1024 // 12)
print(json.dumps({{"output": {{"x": 1}}, "reply": reply}}))
"""


def test_a_50_mb_reply_is_stored_once_and_reported_without_copies(tmp_path: Path) -> None:
    """A 50 MB reply became a 250 MB report.json and a 250 MB store: every reply check kept
    the whole reply as its `actual`. Now a check keeps 2 KB and points at the reply."""
    reply_checks = {f"r{i}": {"mode": "regex", "field": "reply", "value": f"approved{'.' * i}"}
                    for i in range(5)}  # fmt: skip
    root = _suite(
        tmp_path / "suite",
        [{"id": "huge", "input": {}, "expect": {"x": {"mode": "exact", "value": 1},
                                                **reply_checks}}],
        {"huge.py": HUGE.format(mb=50)},
        agent={"command": [sys.executable, "huge.py"]},
    )  # fmt: skip
    store = tmp_path / "store.db"
    out = tmp_path / "out"
    peak, done = _peak_rss_mb(
        "run", str(root), "-q", "--store", f"sqlite:///{store}", "--out", str(out)
    )
    assert done.returncode == 0, done
    report = out / "report.json"
    trial = _trials(report)["huge"]
    assert trial["status"] == "pass", trial
    cut = [c for c in trial["checks"] if c["name"].startswith("r")]
    assert len(cut) == 5
    for check in cut:
        assert len(check["actual"].encode()) <= 2048
        assert check["actual_bytes"] > 50 * MB and check["actual_ref"] == "reply"
    assert report.stat().st_size < 60 * MB  # the reply once (as `reply`), not six times
    assert store.stat().st_size < 60 * MB  # the response once
    assert peak < 150 + 6 * 50, f"caseforge peaked at {peak:.0f} MB for a 50 MB reply"


NAN_AGENT = """
import json, sys
request = json.load(sys.stdin)
what = request["input"]["do"]
if what == "nan-cost":
    print('{"output": {"x": 1, "n": 1}, "usage": {"cost_usd": NaN}}')
elif what == "nan-output":
    print('{"output": {"x": 1, "n": NaN, "s": "NaN", "inf": -Infinity}}')
else:
    print(json.dumps({"output": {"x": 1, "n": 2.5, "s": "NaN"}}))
"""


def test_nan_and_infinity_from_the_agent(tmp_path: Path) -> None:
    """A NaN cost lost the whole run (the store refused it: exit 5, no report, --resume
    failed the same way). Now it is an invalid answer on that case-trial, and a NaN in
    the output is data, stored so it cannot be taken for the string "NaN"."""
    cases = [
        {"id": "nan-cost", "input": {"do": "nan-cost"},
         "expect": {"x": {"mode": "exact", "value": 1}}},
        {"id": "nan-output", "input": {"do": "nan-output"}, "expect": {
            "n": {"mode": "number", "value": float("nan")},
            "inf": {"mode": "number", "value": float("-inf")},
            "s": {"mode": "exact", "value": "NaN"}}},
        {"id": "nan-wanted-5", "input": {"do": "nan-output"},
         "expect": {"n": {"mode": "number", "value": 5, "tolerance": 1}}},
        {"id": "finite", "input": {"do": "finite"},
         "expect": {"n": {"mode": "number", "value": 2.5}}},
    ]  # fmt: skip
    root = tmp_path / "suite"
    (root / "cases").mkdir(parents=True)
    (root / "caseforge.yaml").write_text(
        json.dumps({"name": "nan", "agent": {"command": [sys.executable, "nan_agent.py"]}}),
        encoding="utf-8",
    )
    (root / "nan_agent.py").write_text(NAN_AGENT, encoding="utf-8")
    for case in cases:  # JSON has no NaN: YAML's .nan and .inf say it
        text = json.dumps(case).replace("NaN", ".nan").replace("-Infinity", "-.inf")
        text = text.replace('"value": ".nan"', '"value": "NaN"')  # the string stays a string
        (root / "cases" / f"{case['id']}.yaml").write_text(text, encoding="utf-8")
    store = f"sqlite:///{tmp_path / 'store.db'}"
    out = tmp_path / "out"
    argv = ["run", str(root), "-q", "--store", store, "--out", str(out), "--raw"]
    done = caseforge_process(*argv, "--max-error-rate", "1")
    assert done.returncode == 0, done
    text = (out / "report.json").read_text(encoding="utf-8")
    json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))  # strict
    trials = _trials(out / "report.json")
    assert trials["nan-cost"]["status"] == "error"
    assert "usage.cost_usd: Input should be a finite number" in trials["nan-cost"]["error"]
    output = trials["nan-output"]["output"]
    assert output["n"] == {"$float": "NaN"} and output["inf"] == {"$float": "-Infinity"}
    assert output["s"] == "NaN"  # the agent's string is still a string
    assert trials["nan-output"]["status"] == "pass", trials["nan-output"]["checks"]
    wanted = trials["nan-wanted-5"]
    assert wanted["status"] == "fail"
    assert wanted["checks"][0]["reason"] == "NaN is not a finite number; expected 5 ± 1"
    assert trials["finite"]["status"] == "pass"
    rescored = caseforge_process("rescore", "latest", "--store", store, "-q")
    assert rescored.returncode == 0, rescored
    again = tmp_path / "again.json"  # the stored NaN is a float again when graded again
    shown = caseforge_process(
        "report", "latest", "--store", store, "--format", "json", "--out", str(again)
    )
    assert shown.returncode == 0, shown
    statuses = {case_id: t["status"] for case_id, t in _trials(again).items()}
    assert statuses == {
        "nan-cost": "error", "nan-output": "pass", "nan-wanted-5": "fail", "finite": "pass"
    }  # fmt: skip


def test_an_exit_in_a_task_the_agent_started_is_still_its_own_failure(tmp_path: Path) -> None:
    """asyncio re-raises SystemExit and KeyboardInterrupt out of the event loop from a task
    of the agent's own (gather, create_task, wait_for): it ended the run with exit 0 and
    nothing stored."""
    agent = """
        import asyncio, sys

        async def tool(what):
            await asyncio.sleep(0)
            if what == "exit":
                sys.exit(0)
            if what == "interrupt":
                raise KeyboardInterrupt
            return 1

        async def run(input, ctx):
            await asyncio.gather(tool("ok"), tool(input.get("do", "ok")))
            return {"output": {"x": 1}}
    """
    cases = [{"id": "ok", "input": {}}, {"id": "exit", "input": {"do": "exit"}},
             {"id": "interrupt", "input": {"do": "interrupt"}}]  # fmt: skip
    root = _suite(tmp_path / "suite", cases, {"agent.py": agent}, agent={"callable": "agent:run"})
    out = tmp_path / "out"
    done = caseforge_process("run", str(root), "-q", "--store", f"sqlite:///{tmp_path / 's.db'}",
                             "--out", str(out), "--max-error-rate", "1")  # fmt: skip
    assert done.returncode == 0, done
    trials = _trials(out / "report.json")
    assert trials["ok"]["status"] == "pass"
    assert trials["exit"]["error"] == "the agent called sys.exit(0)"
    assert trials["interrupt"]["error"] == "the agent raised KeyboardInterrupt"


def test_a_check_mode_of_the_suites_own_that_prints_stays_off_stdout(tmp_path: Path) -> None:
    """A `print` in checks.py, at import or while grading, landed in `validate --json`'s
    and `run`'s stdout."""
    checks = """
        from typing import Literal
        from caseforge import CheckMode, passed

        print("CHECKS-MODULE-LOADING")

        class Loud(CheckMode):
            mode: Literal["loud"]
            strength = 10

            def grade(self, actual):
                print("GRADING-OUT-LOUD")
                return passed()
    """
    root = _suite(
        tmp_path / "suite",
        [{"id": "a", "input": {}, "expect": {"x": {"mode": "loud"}}}],
        {"checks.py": checks, "agent.py": MISBEHAVING},
        agent={"callable": "agent:run"},
        checks="checks.py",
    )
    validated = caseforge_process("validate", str(root), "--json")
    assert json.loads(validated.stdout)["ok"] is True  # stdout is the JSON, whole
    assert "CHECKS-MODULE-LOADING" in validated.stderr
    ran = caseforge_process("run", str(root), "--store", f"sqlite:///{tmp_path / 's.db'}")
    assert ran.returncode == 0, ran
    assert "GRADING-OUT-LOUD" not in ran.stdout and "CHECKS-MODULE-LOADING" not in ran.stdout
    assert "GRADING-OUT-LOUD" in ran.stderr
