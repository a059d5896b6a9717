"""The release habits, checked offline: the pre-commit hooks are ruff's, and the release
workflow (docs/ci/release.yml) builds, checks and publishes with trusted publishing (that it
is a valid workflow, tests/docs/test_ci_recipes.py checks with the CI recipes)."""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML

from tests.helpers import REPO_ROOT


def load(path: str) -> Any:
    return YAML(typ="safe").load((REPO_ROOT / path).read_text(encoding="utf-8"))


def test_pre_commit_runs_ruff_check_and_ruff_format_at_a_pinned_version() -> None:
    [repo] = load(".pre-commit-config.yaml")["repos"]
    assert repo["repo"] == "https://github.com/astral-sh/ruff-pre-commit"
    assert [hook["id"] for hook in repo["hooks"]] == ["ruff-check", "ruff-format"]
    major, minor, patch = repo["rev"].removeprefix("v").split(".")
    assert repo["rev"].startswith("v") and all(p.isdigit() for p in (major, minor, patch))


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
