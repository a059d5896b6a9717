"""The few git questions caseforge asks: where the work tree is, which commit a dataset is
at and whether it is dirty, which files are tracked, and whether a path is ignored."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    """Run ``git`` in ``cwd``; None when git is missing or ``cwd`` is not a folder."""
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError:
        return None


def _existing_folder(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path.parent if path.is_file() else path


def git_toplevel(path: Path) -> Path | None:
    """The top of the work tree holding ``path``, or None outside git."""
    out = git(["rev-parse", "--show-toplevel"], _existing_folder(path))
    return Path(out.stdout.strip()) if out is not None and out.returncode == 0 else None


def dataset_state(folder: Path) -> tuple[str | None, bool | None]:
    """The commit of ``folder``'s repository and whether ``folder`` has uncommitted changes."""
    head = git(["rev-parse", "HEAD"], folder)
    if head is None or head.returncode != 0:
        return None, None
    dirty = git(["status", "--porcelain", "--", "."], folder)
    return head.stdout.strip(), bool(dirty and dirty.stdout.strip())


def is_ignored(path: Path) -> bool:
    """Whether git ignores ``path`` (which need not exist yet)."""
    out = git(["check-ignore", "-q", str(path.resolve())], _existing_folder(path))
    return out is not None and out.returncode == 0


def tracked_files(folder: Path) -> list[Path] | None:
    """The files under ``folder`` that git tracks, or None outside git."""
    out = git(["ls-files", "-z", "--", "."], folder)
    if out is None or out.returncode != 0:
        return None
    return [folder / p for p in out.stdout.split("\0") if p]
