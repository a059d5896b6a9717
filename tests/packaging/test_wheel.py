"""The built wheel carries the example suites: install it in a fresh venv, then `init`.

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
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
         "--quiet", "--disable-pip-version-check", "-w", str(tmp / "dist")],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = (tmp / "dist").glob("caseforge-*.whl")
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
