"""Where caseforge keeps a suite's local state: ``.caseforge/`` at the top of the git work
tree holding the suite (git-ignored), or beside the suite outside git."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from caseforge.vcs import git_toplevel

STATE_DIR = ".caseforge"


@dataclass(frozen=True)
class SuitePaths:
    """A suite's local folders and files."""

    top: Path

    @property
    def state(self) -> Path:
        return self.top / STATE_DIR

    @property
    def cache(self) -> Path:
        """The model-call cache folder (``llm.db`` inside)."""
        return self.state / "cache"

    @property
    def llm_cache(self) -> Path:
        return self.cache / "llm.db"

    @property
    def work(self) -> Path:
        """Per-trial workspaces, removed when a run ends."""
        return self.state / "work"

    @property
    def db(self) -> Path:
        """The default SQLite run store."""
        return self.state / "caseforge.db"


def ensure_state_dir(folder: Path) -> None:
    """Create ``folder``; a ``.caseforge`` folder also gets a ``.gitignore`` of ``*``, so it
    ignores itself and never makes the work tree dirty."""
    folder.mkdir(parents=True, exist_ok=True)
    if folder.name == STATE_DIR:
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# caseforge's local state: runs, caches, workspaces\n*\n")


def suite_paths(suite_dir: Path) -> SuitePaths:
    """The local state folders of the suite (or of any folder) ``suite_dir``."""
    return SuitePaths(git_toplevel(suite_dir) or suite_dir)
