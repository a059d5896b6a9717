"""Every exception caseforge defines is a CaseforgeError with an exit code from the README's
table, and the CLI turns one into a one-line message and that code."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from typer.testing import CliRunner

import caseforge
from caseforge.cli import app
from caseforge.errors import CaseforgeError, Interrupted, UsageError
from caseforge.synth._moved import MOVED

README = Path(__file__).parents[1] / "README.md"


def _exceptions() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(caseforge.__path__, "caseforge."):
        if info.name.endswith("__main__") or ".migrations" in info.name:
            continue  # these run something when imported
        if info.name in MOVED:
            continue  # a deprecated path that warns; its module is walked at its new path
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                found.append(value)
    return found


def test_every_caseforge_exception_is_a_caseforge_error_with_a_documented_code() -> None:
    table = {int(code) for code in re.findall(r"^\| (\d) \|", README.read_text(), re.M)}
    assert table == {0, 1, 2, 3, 4, 5}
    exceptions = _exceptions()
    assert len(exceptions) >= 10
    for exc in exceptions:
        if exc is Interrupted:  # a stop asked for, never an error: 130 or 143 (the table)
            assert {Interrupted("SIGINT").exit_code, Interrupted("SIGTERM").exit_code} == {130, 143}
            continue
        assert issubclass(exc, CaseforgeError), exc
        assert exc.exit_code in table - {0}, exc


def test_a_usage_error_is_one_line_on_stderr_and_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(tmp_path / "r.json"), "--format", "pdf"])
    assert result.exit_code == UsageError.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "--format must be one of" in result.output
    assert "Traceback" not in result.output


def test_help_gives_the_readmes_exit_code_table() -> None:
    readme = README.read_text()
    table = dict(re.findall(r"^\| (\d+) \| ([^|]+) \|", readme, re.M))
    assert set(table) == {"0", "1", "2", "3", "4", "5", "130", "143"}
    help_text = " ".join(CliRunner().invoke(app, ["--help"]).output.split())
    for code, meaning in table.items():
        first_words = " ".join(meaning.split()[:2]).rstrip(",:")
        if code in ("130", "143"):
            first_words = "SIGINT" if code == "130" else "SIGTERM"
        assert f"{code} " in help_text, code
        assert first_words.lower() in help_text.lower(), (code, first_words)
    assert "interrupted, environment, usage, budget, agent errors, regression" in help_text


def test_an_unexpected_os_error_is_one_line_naming_the_path() -> None:
    from caseforge.cli.command import App

    demo = App()

    @demo.command()
    def read(kind: str) -> None:
        errors: dict[str, OSError] = {
            "perm": PermissionError(13, "Permission denied", "/srv/suite/cases/a.yaml"),
            "gone": FileNotFoundError(2, "No such file or directory", "/srv/suite/glossary.txt"),
            "disk": OSError(5, "Input/output error", "/srv/suite/big.jsonl"),
        }
        raise errors[kind]

    @demo.command()
    def other() -> None: ...

    seen = {}
    for kind in ("perm", "gone", "disk"):
        result = CliRunner().invoke(demo, ["read", kind])
        assert "Traceback" not in result.output and result.output.count("\n") == 1
        seen[kind] = (result.exit_code, result.output.strip())
    assert seen == {
        "perm": (5, "/srv/suite/cases/a.yaml: Permission denied; check its permissions"),
        "gone": (2, "/srv/suite/glossary.txt: No such file or directory; check the path"),
        "disk": (5, "/srv/suite/big.jsonl: Input/output error"),
    }


def test_a_position_that_is_not_known_is_left_out() -> None:
    from caseforge.errors import Problem

    where = Path("suite/cases/a.yaml")
    assert Problem(where, 3, 7, "id", "bad").format() == "suite/cases/a.yaml:3:7: id: bad"
    assert Problem(where, 3, 0, "", "bad").format() == "suite/cases/a.yaml:3: bad"
    assert Problem(where, 0, 0, "", "bad").format() == "suite/cases/a.yaml: bad"  # not :0:0
    assert Problem(where, 0, 0, "", "bad").to_json()["line"] == 0  # JSON keeps the 0
