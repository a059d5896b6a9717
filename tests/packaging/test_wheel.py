"""The built wheel carries the example suites and py.typed: install it in a fresh venv, then
`init`, run, and type-check a caller of the public API against it.

The fresh venv holds only the wheel (installed with ``--no-deps``). Its dependencies come
from this test environment's site-packages through ``PYTHONPATH``, which does not process
``.pth`` files, so the editable checkout of caseforge stays invisible: every import of
``caseforge`` below is the wheel's (the test asserts it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from caseforge._version import __version__

REPO = Path(__file__).resolve().parents[2]

# A library user's code, checked by mypy --strict against the installed wheel's types.
TYPED_USE = """
from pathlib import Path

import caseforge
from caseforge import CaseforgeError, RunReport, run_suite


def fully_passing(suite: Path) -> dict[str | None, int]:
    try:
        reports: list[RunReport] = run_suite(suite, trials=1, judge=False)
    except CaseforgeError as error:
        raise SystemExit(error.exit_code) from error
    return {report.config: report.summary.fully_passing_cases for report in reports}


version: str = caseforge.__version__
"""

# The same calls, wrong: mypy must say so, or the check above proves nothing.
TYPE_ERRORS = """
from caseforge import RunReport, run_suite

reports: list[RunReport] = run_suite("suite", trials="3")
names: list[str] = [report.summary.fully_passing_cases for report in reports]
"""


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
         "--quiet", "--disable-pip-version-check", "-w", str(tmp / "dist")],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = (tmp / "dist").glob("caseforge-*.whl")
    assert wheel.name.startswith(f"caseforge-{__version__}-"), wheel.name
    assert "caseforge/py.typed" in zipfile.ZipFile(wheel).namelist()
    venv.create(tmp / "venv", with_pip=True)
    bin_dir = tmp / "venv" / "bin"
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
         "--disable-pip-version-check", str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CASEFORGE_STORE": f"sqlite:///{tmp / 'store.db'}",
    }
    return bin_dir, env


def test_the_wheel_is_what_runs(fresh: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    bin_dir, env = fresh
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import caseforge.cli, sys; print(caseforge.cli.__file__)"],
        check=True, capture_output=True, text=True, env=env, cwd=tmp_path,
    ).stdout  # fmt: skip
    assert where.startswith(str(bin_dir.parent)), where


@pytest.mark.parametrize("example", ["test-agent", "ac-clarifier"])
def test_init_example_from_the_wheel_copies_a_valid_suite(
    fresh: tuple[Path, dict[str, str]], tmp_path: Path, example: str
) -> None:
    bin_dir, env = fresh
    cli = str(bin_dir / "caseforge")
    made = subprocess.run(
        [cli, "init", "copy", "--example", example],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "copy" / "README.md").is_file()
    valid = subprocess.run(
        [cli, "validate", "copy"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "valid" in valid.stdout


def test_the_starter_from_the_wheel_runs(
    fresh: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = fresh
    cli = str(bin_dir / "caseforge")
    subprocess.run([cli, "init", "mine"], check=True, capture_output=True, env=env, cwd=tmp_path)
    ran = subprocess.run(
        [cli, "run", "mine", "--trials", "1"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    assert "fully passing cases  1 of 2" in ran.stdout
    assert 'order-status #1: reply.must_include: does not include ["ORD-1042"]' in ran.stdout


def test_a_caller_type_checks_against_the_wheel(
    fresh: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """mypy reads caseforge's own annotations from the installed wheel (its py.typed); the
    editable checkout is not on its path, as for any user of the published package."""
    bin_dir, env = fresh
    (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\n", encoding="utf-8")
    (tmp_path / "typed_use.py").write_text(TYPED_USE, encoding="utf-8")
    (tmp_path / "type_errors.py").write_text(TYPE_ERRORS, encoding="utf-8")

    def mypy(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bin_dir / "python"), "-m", "mypy", "--config-file", "mypy.ini",
             "--cache-dir", str(tmp_path / "cache"), name],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
        )  # fmt: skip

    good = mypy("typed_use.py")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Success: no issues found in 1 source file" in good.stdout
    bad = mypy("type_errors.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert 'type_errors.py:4: error: Argument "trials" to "run_suite" has incompatible type' in (
        bad.stdout
    ), bad.stdout
    assert "type_errors.py:5: error: List comprehension has incompatible type" in bad.stdout
    assert "Found 2 errors in 1 file" in bad.stdout


def test_the_wheel_says_its_version(fresh: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    bin_dir, env = fresh
    said = subprocess.run(
        [str(bin_dir / "caseforge"), "--version"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=True,
    ).stdout  # fmt: skip
    assert said.strip() == f"caseforge {__version__}"
    script = "import importlib.metadata as m; print(m.version('caseforge'))"
    metadata = subprocess.run(
        [str(bin_dir / "python"), "-c", script],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=True,
    ).stdout  # fmt: skip
    assert metadata.strip() == __version__
