"""Oracles are the suite's own code: ``validate`` runs them in worker processes, so one that
exits, prints, hangs or crashes costs only its own finding, and it reuses the answers of
an unchanged suite, recomputing when anything the oracle reads changes (a helper it
imports inside or outside the suite folder, a data file it opens)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.case.validate import validate_suite
from caseforge.cli import app
from tests.helpers import caseforge_process, write_toy_suite

runner = CliRunner()


def _suite(tmp_path: Path, oracles: str, cases: dict[str, str], **config: object) -> Path:
    settings = {"name": "o", "oracles": "oracles.py", **config}
    written = [
        {
            "id": case_id,
            "input": {"n": 2},
            "expect": {"x": {"mode": "exact", "value": 4, "oracle": oracle_name}},
        }
        for case_id, oracle_name in cases.items()
    ]
    source = "from caseforge.oracle import oracle\n" + textwrap.dedent(oracles)
    return write_toy_suite(tmp_path / "suite", written, settings, files={"oracles.py": source})


GOOD = """
@oracle("double")
def double(input):
    return input["n"] * 2
"""


def test_an_oracle_calling_sys_exit_0_is_its_failure_not_a_valid_suite(tmp_path: Path) -> None:
    """It made `validate` exit 0 with no output, which CI reads as valid."""
    root = _suite(
        tmp_path,
        GOOD + "\n@oracle('quits')\ndef quits(input):\n    import sys\n    sys.exit(0)\n",
        {"a": "double", "b": "quits"},
    )
    done = caseforge_process("validate", str(root))
    assert done.returncode == 1, done
    assert "b.yaml:1:" in done.stderr and "oracle 'quits' called sys.exit(0)" in done.stderr
    assert "a.yaml" not in done.stderr  # the other case is fine
    assert "invalid: 1 error(s)" in done.stdout


def test_keyboard_interrupt_and_os_exit_in_an_oracle_cost_only_their_case(tmp_path: Path) -> None:
    root = _suite(
        tmp_path,
        GOOD
        + "\n@oracle('interrupts')\ndef interrupts(input):\n    raise KeyboardInterrupt\n"
        + "\n@oracle('dies')\ndef dies(input):\n    import os\n    os._exit(7)\n",
        {"a": "double", "b": "interrupts", "c": "dies", "d": "double"},
    )
    report = validate_suite(root, cache=False)
    messages = {p.case_id: p.message for p in report.errors}
    assert set(messages) == {"b", "c"}
    assert messages["b"] == "oracle 'interrupts' raised KeyboardInterrupt"
    assert "oracle 'dies' its process ended (exit code 7)" in messages["c"]


def test_an_oracle_that_never_returns_is_killed_and_named(tmp_path: Path) -> None:
    root = _suite(
        tmp_path,
        GOOD + "\n@oracle('hangs')\ndef hangs(input):\n    while True:\n        pass\n",
        {"a": "double", "b": "hangs", "c": "double"},
        oracle_timeout_s=3,
    )
    done = caseforge_process("validate", str(root))
    assert done.returncode == 1, done
    [line] = [x for x in done.stderr.splitlines() if "hangs" in x]
    assert "b.yaml" in line and "expect.x" in line
    assert "oracle 'hangs' timed out after 3 s (oracle_timeout_s in caseforge.yaml)" in line
    assert "oracle checks: 3 recomputed" in done.stdout


def test_an_oracles_module_that_exits_while_importing_is_one_line(tmp_path: Path) -> None:
    root = _suite(tmp_path, "import sys\nsys.exit(2)\n", {"a": "double"})
    done = caseforge_process("validate", str(root))
    assert done.returncode == 1, done
    assert "importing the oracles module failed: called sys.exit(2)" in done.stderr
    assert "Traceback" not in done.stderr


def test_what_an_oracle_prints_goes_to_stderr_named_and_json_still_parses(
    tmp_path: Path,
) -> None:
    root = _suite(
        tmp_path,
        "import os\nprint('loading the policy')\n\n"
        "@oracle('double')\ndef double(input):\n"
        "    print('computing', input['n'])\n"
        "    os.write(1, b'raw bytes to fd 1\\n')\n"
        "    return input['n'] * 2\n",
        {"a": "double"},
    )
    done = caseforge_process("validate", str(root), "--json")
    assert done.returncode == 0, done
    data = json.loads(done.stdout)  # nothing the oracle wrote is in it
    assert data["ok"] is True and data["oracle_checks"] == 1
    assert "oracle double (case a): computing 2" in done.stderr
    assert "oracles module: loading the policy" in done.stderr
    assert "raw bytes to fd 1" in done.stderr


COUNTING = """
import json, pathlib
from helper import factor
from caseforge.oracle import oracle as register

CALLS = pathlib.Path(__file__).with_name("calls.log")


@register("scaled")
def scaled(input):
    with CALLS.open("a") as log:
        log.write("x")
    outside = pathlib.Path({outside!r}).read_text()
    return input["n"] * factor() * int(outside)
"""


def test_an_unchanged_suite_reuses_its_answers_and_any_change_recomputes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"  # a helper package outside the suite folder
    shared.mkdir()
    (shared / "sharedlib.py").write_text("def base():\n    return 2\n", encoding="utf-8")
    data = tmp_path / "outside.txt"  # a data file outside the suite folder
    data.write_text("1", encoding="utf-8")
    root = _suite(tmp_path, COUNTING.format(outside=str(data)), {"a": "scaled", "b": "scaled"})
    (root / "helper.py").write_text(
        "from sharedlib import base\n\ndef factor():\n    return base()\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(shared))
    calls = root / "calls.log"

    def validate(cache: bool = True) -> tuple[int, list[str]]:
        calls.unlink(missing_ok=True)
        report = validate_suite(root, cache=cache)
        made = len(calls.read_text()) if calls.exists() else 0
        return made, [p.message for p in report.errors]

    assert validate() == (2, [])
    assert validate() == (0, [])  # unchanged: nothing recomputed
    assert (root / ".caseforge" / "cache" / "oracles" / "answers.db").is_file()
    assert validate(cache=False) == (2, [])  # --no-cache

    (root / "helper.py").write_text(  # a helper in the suite folder changed
        "from sharedlib import base\n\ndef factor():\n    return base() + 1\n", encoding="utf-8"
    )
    made, errors = validate()
    assert made == 2 and len(errors) == 2 and "now gives 6" in errors[0]
    (root / "helper.py").write_text(
        "from sharedlib import base\n\ndef factor():\n    return base()\n", encoding="utf-8"
    )
    assert validate() == (2, [])
    assert validate() == (0, [])

    (shared / "sharedlib.py").write_text(  # an imported helper outside the suite changed
        "def base():\n    return 3\n", encoding="utf-8"
    )
    sys.modules.pop("sharedlib", None)
    made, errors = validate()
    assert made == 2 and "now gives 6" in errors[0]
    (shared / "sharedlib.py").write_text("def base():\n    return 2\n", encoding="utf-8")
    assert validate() == (2, [])

    data.write_text("5", encoding="utf-8")  # a file it opens outside the suite changed
    made, errors = validate()
    assert made == 2 and "now gives 20" in errors[0]

    data.write_text("1", encoding="utf-8")
    assert validate() == (2, [])
    case = json.loads((root / "cases" / "b.yaml").read_text(encoding="utf-8"))
    case["input"]["n"] = 3  # one case's input changed: only it is recomputed
    (root / "cases" / "b.yaml").write_text(json.dumps(case), encoding="utf-8")
    made, errors = validate()
    assert made == 1 and len(errors) == 1 and "now gives 6" in errors[0]


def test_a_nan_the_oracle_still_gives_is_no_drift(tmp_path: Path) -> None:
    """A case saying `.nan` could never validate: 'file says NaN, oracle now gives NaN'."""
    root = _suite(
        tmp_path, "@oracle('nan')\ndef nan(input):\n    return float('nan')\n", {"a": "nan"}
    )
    (root / "cases" / "a.yaml").write_text(
        "id: a\ninput: {n: 2}\nexpect:\n  x: {mode: number, value: .nan, oracle: nan}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["validate", str(root)])
    assert result.exit_code == 0, result.output


READS = """
import json, pathlib, sqlite3, subprocess, sys

HERE = pathlib.Path(__file__).parent
CALLS = HERE / "calls.log"


@oracle("sibling")
def sibling(input):  # a folder beside the suite whose name starts like the suite's
    with CALLS.open("a") as log:
        log.write("s")
    return input["n"] * int((HERE.parent / "suite_data" / "factor.txt").read_text())


@oracle("database")
def database(input):
    with CALLS.open("a") as log:
        log.write("d")
    db = sqlite3.connect(str(HERE.parent / "policy.db"))
    [(factor,)] = db.execute("SELECT factor FROM policy").fetchall()
    return input["n"] * factor


@oracle("shells_out")
def shells_out(input):
    with CALLS.open("a") as log:
        log.write("p")
    out = subprocess.run([sys.executable, "-c", "print(2)"], capture_output=True, text=True)
    return input["n"] * int(out.stdout)


@oracle("flaky")
def flaky(input):
    with CALLS.open("a") as log:
        log.write("f")
    raise RuntimeError("the policy service is down")
"""


def test_what_an_oracle_reads_outside_files_is_in_the_key_or_not_cached(tmp_path: Path) -> None:
    """A review found a sibling folder (`suite_data` beside `suite`) taken for the suite's
    own, a SQLite database not keyed, and a process's output cached as if it were a file."""
    import sqlite3

    (tmp_path / "suite_data").mkdir()
    (tmp_path / "suite_data" / "factor.txt").write_text("2", encoding="utf-8")
    with sqlite3.connect(tmp_path / "policy.db") as db:
        db.execute("CREATE TABLE policy (factor INTEGER)")
        db.execute("INSERT INTO policy VALUES (2)")
    root = _suite(
        tmp_path,
        READS,
        {"s": "sibling", "d": "database", "p": "shells_out", "f": "flaky"},
    )
    calls = root / "calls.log"

    def validate() -> tuple[str, list[str]]:
        calls.unlink(missing_ok=True)
        report = validate_suite(root)
        made = "".join(sorted(calls.read_text())) if calls.exists() else ""
        return made, sorted(str(p.case_id) for p in report.errors)

    assert validate() == ("dfps", ["f"])
    # Unchanged: the process's answer and the error are computed again, the rest is not.
    assert validate() == ("fp", ["f"])
    (tmp_path / "suite_data" / "factor.txt").write_text("3", encoding="utf-8")
    with sqlite3.connect(tmp_path / "policy.db") as db:
        db.execute("UPDATE policy SET factor = 3")
    made, errors = validate()
    assert made == "dfps" and errors == ["d", "f", "s"]  # both drifts found


def test_an_oracle_that_starts_a_process_and_hangs_is_killed_with_it(tmp_path: Path) -> None:
    """Killing the worker left the process it started alive, holding caseforge's stderr:
    `validate` waited for it to end."""
    root = _suite(
        tmp_path,
        GOOD + "\n@oracle('waits')\ndef waits(input):\n    import subprocess\n"
        "    subprocess.run(['sleep', '600'])\n",
        {"a": "double", "b": "waits"},
        oracle_timeout_s=3,
    )
    done = caseforge_process("validate", str(root), timeout=300)  # far less than 600 s
    assert done.returncode == 1, done
    assert "oracle 'waits' timed out after 3 s" in done.stderr


def test_a_replacement_worker_that_cannot_load_answers_the_rest_as_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first call kills its worker; the module then takes too long to import in the
    replacement: every case left gets an error naming why, never a crash (it was exit 5,
    'handle is closed')."""
    root = _suite(
        tmp_path,
        "import os, pathlib, time\n"
        "MARK = pathlib.Path(__file__).with_name('loaded-once')\n"
        "if MARK.exists():\n    time.sleep(600)\n"
        "MARK.touch()\n\n"
        "@oracle('dies')\ndef dies(input):\n    os._exit(3)\n\n"
        "@oracle('double')\ndef double(input):\n    return input['n'] * 2\n",
        {"a": "dies", "b": "double", "c": "double"},
        oracle_timeout_s=3,
    )
    from caseforge.case import validate

    monkeypatch.setattr(validate, "pool_size", lambda calls: 1)  # one worker, then a replacement
    report = validate_suite(root, cache=False)
    messages = {p.case_id: p.message for p in report.errors}
    assert "its process ended (exit code 3)" in messages["a"]
    assert messages["b"] == messages["c"] == "oracle 'double' no worker process could start"
