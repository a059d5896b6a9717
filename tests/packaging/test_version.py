"""One version: src/caseforge/_version.py. The package metadata reads it (hatch's dynamic
version in pyproject.toml), and `caseforge --version` prints it."""

from __future__ import annotations

import importlib.metadata
import tomllib

import caseforge
from caseforge._version import __version__
from tests.helpers import REPO_ROOT, caseforge_process


def test_the_cli_the_metadata_and_the_package_agree() -> None:
    said = caseforge_process("--version")
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip() == f"caseforge {caseforge.__version__}"
    # The installed metadata: `make` reinstalls when _version.py changes (the stamp's input).
    assert importlib.metadata.version("caseforge") == caseforge.__version__ == __version__


def test_pyproject_writes_no_version_of_its_own() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"] == {"path": "src/caseforge/_version.py"}
