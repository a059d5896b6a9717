"""The release habits, checked offline: the pre-commit hooks are ruff's, and the release
workflow (docs/ci/release.yml) is a valid GitHub Actions workflow that builds, checks and
publishes with trusted publishing. check-jsonschema vendors the workflow schema."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from ruamel.yaml import YAML

from tests.helpers import REPO_ROOT

RELEASE = REPO_ROOT / "docs" / "ci" / "release.yml"
WORKFLOWS = [RELEASE, REPO_ROOT / "docs" / "ci-sharded.yml"]


def load(path: str) -> Any:
    return YAML(typ="safe").load((REPO_ROOT / path).read_text(encoding="utf-8"))


def test_pre_commit_runs_ruff_check_and_ruff_format_at_a_pinned_version() -> None:
    [repo] = load(".pre-commit-config.yaml")["repos"]
    assert repo["repo"] == "https://github.com/astral-sh/ruff-pre-commit"
    assert [hook["id"] for hook in repo["hooks"]] == ["ruff-check", "ruff-format"]
    major, minor, patch = repo["rev"].removeprefix("v").split(".")
    assert repo["rev"].startswith("v") and all(p.isdigit() for p in (major, minor, patch))


def test_the_workflows_are_valid_github_actions_workflows() -> None:
    """Against the schema check-jsonschema ships; proxies that lead nowhere prove that
    nothing is downloaded."""
    nowhere = "http://127.0.0.1:9"
    env = {**os.environ, "HTTP_PROXY": nowhere, "HTTPS_PROXY": nowhere, "NO_PROXY": ""}
    env.update({k.lower(): v for k, v in env.items() if k.endswith("_PROXY")})
    checked = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
         *map(str, WORKFLOWS)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok -- validation done" in checked.stdout


def test_a_v_tag_builds_checks_and_publishes_with_trusted_publishing() -> None:
    workflow = load("docs/ci/release.yml")
    assert workflow["on"] == {"push": {"tags": ["v*"]}}
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    commands = "\n".join(step.get("run", "") for step in build["steps"])
    assert "python -m build" in commands and "twine check --strict dist/*" in commands
    assert publish["needs"] == "build"
    assert publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    uses = [step.get("uses", "") for step in publish["steps"]]
    assert uses[-1].startswith("pypa/gh-action-pypi-publish@")
    assert not any("password" in step.get("with", {}) for step in publish["steps"])  # no token
