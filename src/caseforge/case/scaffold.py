"""``caseforge init``: a new suite folder, from the starter or from one of the shipped
example suites.

The examples ship inside the wheel (``caseforge/_examples``, see ``pyproject.toml``); a
source checkout reads the repository's ``examples/`` folder instead. The copy is made in a
hidden sibling folder and renamed into place, so a failed ``init`` leaves nothing behind.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from caseforge.errors import EnvError, UsageError

STARTER = "starter"
_ALWAYS_SKIPPED = (
    "__pycache__",
    "*.pyc",
    ".caseforge",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
)
_HERE = Path(__file__).resolve()


def examples_root() -> Path:
    """The folder holding the example suites: inside the installed wheel, or the checkout's."""
    for candidate in (_HERE.parents[1] / "_examples", _HERE.parents[3] / "examples"):
        if (candidate / STARTER / "caseforge.yaml").is_file():
            return candidate
    raise EnvError(
        f"the example suites are not installed with this caseforge ({_HERE.parents[1]}); "
        "reinstall it from its wheel or a source checkout"
    )


def example_names() -> list[str]:
    root = examples_root()
    return sorted(p.name for p in root.iterdir() if (p / "caseforge.yaml").is_file())


@dataclass(frozen=True)
class InitResult:
    suite_dir: Path
    example: str
    name: str
    files: int


def init_suite(dest: Path, example: str = STARTER) -> InitResult:
    """Write a new suite at ``dest`` (a new or empty folder) from ``example``."""
    names = example_names()
    if example not in names:
        raise UsageError(
            f"--example {example!r} is not a shipped suite; choose one of: {', '.join(names)}"
        )
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        what = "a file" if not dest.is_dir() else "a folder that is not empty"
        raise UsageError(f"{dest}: is {what}; `caseforge init` writes into a new or empty folder")
    source = examples_root() / example
    parent = dest.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=parent))
    except OSError as exc:
        raise EnvError(f"{exc.filename or parent}: cannot create: {exc.strerror or exc}") from None
    try:
        tree = staging / "suite"
        shutil.copytree(source, tree, ignore=_ignore(source), copy_function=shutil.copy)
        name = _rename(tree / "caseforge.yaml", dest) if example == STARTER else example
        files = sum(1 for p in tree.rglob("*") if p.is_file())
        if dest.exists():
            dest.rmdir()
        os.replace(tree, dest)
    except OSError as exc:
        raise EnvError(f"{exc.filename or dest}: cannot write: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return InitResult(suite_dir=dest, example=example, name=name, files=files)


def _ignore(source: Path) -> Callable[[str, list[str]], set[str]]:
    """Skip caches, and what the example's own ``.gitignore`` ignores (its built database)."""
    patterns = list(_ALWAYS_SKIPPED)
    ignore_file = source / ".gitignore"
    if ignore_file.is_file():
        for line in ignore_file.read_text(encoding="utf-8").splitlines():
            line = line.strip().rstrip("/")
            if line and not line.startswith(("#", "!")):
                patterns.append(line)

    def ignored(_folder: str, entries: list[str]) -> set[str]:
        return {e for e in entries if any(fnmatch.fnmatch(e, p) for p in patterns)}

    return ignored


def _rename(config: Path, dest: Path) -> str:
    """Give the starter suite the folder's name (``name:`` is the suite's identity)."""
    name = re.sub(r"[^a-z0-9]+", "-", dest.absolute().name.lower()).strip("-") or STARTER
    text = config.read_text(encoding="utf-8")
    config.write_text(re.sub(r"(?m)^name: .*$", f"name: {name}", text, count=1), encoding="utf-8")
    return name
