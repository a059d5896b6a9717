"""A suite's identity, the same on every machine: its name, its folder relative to the
repository's top, and the repository's root commit. Runs, reports and baselines carry it,
so that comparing or gating two different suites is refused instead of "passing"."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from caseforge.vcs import git_toplevel, root_commit


class SuiteIdentity(BaseModel):
    """Never an absolute path or a remote URL: those differ between machines."""

    model_config = ConfigDict(frozen=True)

    name: str
    path: str | None = None  # the suite folder relative to the repository top, POSIX
    root_commit: str | None = None  # the repository's first commit; None outside git

    def same_suite(self, other: SuiteIdentity) -> bool:
        """Whether two identities are one suite (a side outside git is matched by name)."""
        if self.name != other.name:
            return False
        if self.root_commit is None or other.root_commit is None:
            return True
        return self.root_commit == other.root_commit and self.path == other.path

    def describe(self) -> str:
        if self.root_commit is None:
            return f"{self.name!r} (outside git)"
        return f"{self.name!r} at {self.path or '.'} in repository {self.root_commit[:10]}"


def suite_identity(suite_dir: Path, name: str) -> SuiteIdentity:
    """The identity of the suite in ``suite_dir`` whose config calls it ``name``."""
    top = git_toplevel(suite_dir)
    root = root_commit(suite_dir) if top is not None else None
    if top is None or root is None:
        return SuiteIdentity(name=name)
    relative = suite_dir.resolve().relative_to(top.resolve()).as_posix()
    return SuiteIdentity(name=name, path=relative or ".", root_commit=root)
