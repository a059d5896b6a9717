"""Every code block on the docs site is run as a reader would run it, or says why not
(``tests/docs/examples.py`` has the conventions). A page's blocks run in order in one
workspace, so a page is one test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from caseforge.case.model import Case
from caseforge.case.suite import SuiteConfig
from tests.docs.examples import Block, blocks, matches, normalise, session

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)
RUNNABLE = {"console", "sh", "bash", "shell", "python", "py", "yaml", "yml"}
SHOWN = {"json", "text", "toml", "ini", "html", "jsonl", "diff", "", "csv", "markdown", "md"}


def _workspace(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A reader's folder: the repository's examples, in git, caseforge on the PATH."""
    root = tmp / "workspace"
    shutil.copytree(REPO / "examples", root / "examples", ignore=shutil.ignore_patterns(
        ".caseforge", "__pycache__"))  # fmt: skip
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI", "CASEFORGE", "ANTHROPIC", "RAY_ADDRESS", "XDG_"))
        # A reader at a terminal, not a CI job: pytest stops cutting its summary lines to the
        # terminal's width when it sees these (``_pytest.terminal.running_on_ci``).
        and key not in {"CI", "BUILD_NUMBER"}
    }
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(tmp / "home"),
        PYTHONPATH=str(REPO / "src"),
        COLUMNS="100",
        GIT_AUTHOR_NAME="docs", GIT_AUTHOR_EMAIL="docs@example.com",
        GIT_COMMITTER_NAME="docs", GIT_COMMITTER_EMAIL="docs@example.com",
    )  # fmt: skip
    (tmp / "home").mkdir()
    for argv in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "examples"]):
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)
    return root, env


def _run(block: Block, root: Path, env: dict[str, str]) -> None:
    lang = {"shell": "sh", "py": "python", "yml": "yaml"}.get(block.lang, block.lang)
    if lang == "console":
        for command in session(block):
            done = subprocess.run(["bash", "-c", command.line], cwd=root, env=env,
                                  capture_output=True, text=True, timeout=900)  # fmt: skip
            output = done.stdout + done.stderr
            assert done.returncode == command.exit_code, (
                f"{block.where}: `{command.line}` exited {done.returncode}, not "
                f"{command.exit_code}:\n{output}"
            )
            expected = [row.rstrip() for row in command.expected if row.strip()]
            if expected:
                got = normalise(output, root)
                want = normalise("\n".join(expected), root)
                assert matches(want, got), (
                    f"{block.where}: `{command.line}` printed\n"
                    + "\n".join(got)
                    + "\nwhere the page shows\n"
                    + "\n".join(want)
                )
    elif lang in ("sh", "bash"):
        done = subprocess.run(["bash", "-e", "-c", block.body], cwd=root, env=env,
                              capture_output=True, text=True, timeout=900)  # fmt: skip
        assert done.returncode == 0, (
            f"{block.where}: the script failed:\n{done.stdout}{done.stderr}"
        )
    elif lang == "python":
        done = subprocess.run([sys.executable, "-c", block.body], cwd=root, env=env,
                              capture_output=True, text=True, timeout=900)  # fmt: skip
        assert done.returncode == 0, f"{block.where}: the code failed:\n{done.stderr}"
    elif lang == "yaml":
        _validate_yaml(block)


def _validate_yaml(block: Block) -> None:
    data = YAML(typ="safe", pure=False).load(block.body)  # caseforge's own reading
    if not isinstance(data, dict):
        return
    kind = block.marker if block.marker in ("case", "config") else None
    if kind is None and {"id", "expect"} <= set(data):
        kind = "case"
    elif kind is None and "name" in data and set(data) - {"name"} <= set(SuiteConfig.model_fields):
        kind = "config"
    if kind == "case":
        Case.model_validate(data)
    elif kind == "config":
        SuiteConfig.model_validate(data)
    elif set(data) <= set(SuiteConfig.model_fields):  # a part of caseforge.yaml (gate:, judge:)
        SuiteConfig.model_validate({"name": "fragment", **data})
    elif set(data) <= set(Case.model_fields):  # a part of a case (expect:, conversation:)
        Case.model_validate({**MINIMAL_CASE, **data})
    elif all(isinstance(v, dict) and CHECK_KEYS & set(v) for v in data.values()):  # checks
        Case.model_validate({**MINIMAL_CASE, "expect": data})


MINIMAL_CASE = {"id": "fragment", "input": {}, "expect": {"reply": {"must_include": ["x"]}}}
CHECK_KEYS = {"mode", "must_include", "must_not_include", "must_call", "must_not_call"}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_every_block_of_the_page_runs_as_written(page: Path, tmp_path: Path) -> None:
    found = blocks(page)
    for block in found:
        if block.marker == "not-run":
            assert block.reason, f"{block.where}: not-run needs a reason"
            continue
        assert block.lang in RUNNABLE | SHOWN, f"{block.where}: what is a ```{block.lang} block?"
    runnable = [b for b in found if b.marker != "not-run" and b.lang in RUNNABLE]
    if not runnable:
        return
    root, env = _workspace(tmp_path)
    for block in runnable:
        _run(block, root, env)
