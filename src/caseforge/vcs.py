"""The few git questions caseforge asks: where the work tree is, which commit a dataset is
at and whether it is dirty, which files are tracked, and whether a path is ignored."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO

from caseforge.errors import CaseforgeError, EnvError

# Set by git hooks and some CI runners; they would point git at another repository.
_GIT_LOCATION_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR")


def git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    """Run ``git`` in ``cwd``; None when git is missing or ``cwd`` is not a folder."""
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError:
        return None


def git_available() -> bool:
    """Whether a ``git`` executable is on PATH."""
    return shutil.which("git") is not None


def _existing_folder(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path.parent if path.is_file() else path


def git_toplevel(path: Path) -> Path | None:
    """The top of the work tree holding ``path``, or None outside git."""
    out = git(["rev-parse", "--show-toplevel"], _existing_folder(path))
    return Path(out.stdout.strip()) if out is not None and out.returncode == 0 else None


def git_marker_above(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` holding a ``.git`` (folder or file), if any."""
    folder = _existing_folder(path.expanduser().resolve())
    for candidate in [folder, *folder.parents]:
        if (candidate / ".git").exists():
            return candidate
    return None


def work_tree(path: Path) -> Path | None:
    """Like ``git_toplevel``, for questions whose wrong answer would leak: None only when no
    ``.git`` is above ``path``; a ``.git`` that git cannot read (git missing, a repository
    owned by another user, a broken one) is an environment error, never "not in git"."""
    marker = git_marker_above(path)
    if marker is None:
        return None
    out = git(["rev-parse", "--show-toplevel"], _existing_folder(path.expanduser().resolve()))
    if out is None or out.returncode != 0:
        why = (
            "git is not on PATH" if out is None else (out.stderr.strip().splitlines() or ["?"])[-1]
        )
        raise EnvError(
            f"{marker}: a git repository caseforge cannot read ({why}); it will not guess "
            "whether private data would be committed from here"
        )
    return Path(out.stdout.strip())


def is_shallow(top: Path) -> bool:
    """Whether the repository at ``top`` is a shallow clone (CI checkouts usually are)."""
    out = git(["rev-parse", "--is-shallow-repository"], top)
    return out is not None and out.stdout.strip() == "true"


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


def root_commit(folder: Path) -> str | None:
    """The repository's first commit (the oldest of several roots), or None without one."""
    out = git(["rev-list", "--max-parents=0", "HEAD"], folder)
    if out is None or out.returncode != 0 or not out.stdout.strip():
        return None
    return sorted(out.stdout.split())[0]


class GitBatch:
    """Runs git in a folder; reads blobs through one ``cat-file --batch``. ``purpose`` ends the
    message when git is missing (``the criteria audit reads the suite's git history``)."""

    def __init__(self, cwd: Path, purpose: str = "caseforge needs it here") -> None:
        self.cwd = cwd
        self.purpose = purpose
        self.env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_VARS}
        self._batch: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> GitBatch:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the ``cat-file`` process, if one was started."""
        if self._batch is not None:
            batch, self._batch = self._batch, None
            if batch.stdin is not None:
                batch.stdin.close()
            batch.wait()
            if batch.stdout is not None:
                batch.stdout.close()

    def _command(self, args: Iterable[str]) -> list[str]:
        return [
            "git",
            "-c",
            "core.quotepath=off",
            "-c",
            "log.showSignature=false",
            *args,
        ]

    def run(self, *args: str, ok: tuple[int, ...] = (0,)) -> tuple[int, str]:
        """Run git; return its exit status and stdout. Raise ``CaseforgeError`` on others."""
        try:
            done = subprocess.run(
                self._command(args), cwd=self.cwd, env=self.env, capture_output=True, check=False
            )
        except FileNotFoundError:
            raise CaseforgeError(f"git is not installed; {self.purpose}") from None
        if done.returncode not in ok:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = message[-1] if message else f"exit status {done.returncode}"
            raise CaseforgeError(f"{self.cwd}: git {args[0]}: {detail}")
        return done.returncode, done.stdout.decode("utf-8", "replace")

    def blob(self, spec: str) -> tuple[str, bytes] | None:
        """The object id and content of a blob (``<sha>`` or ``<rev>:<path>``), or ``None``."""
        batch = self._open()
        stdin, stdout = _pipes(batch)
        stdin.write(spec.encode("utf-8") + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3 or not header[2].isdigit() or header[-1] == b"missing":
            return None  # "<spec> missing" or "ambiguous": nothing follows the header
        data = stdout.read(int(header[2]))
        stdout.read(1)  # the newline after the content
        return (header[0].decode("ascii"), data) if header[1] == b"blob" else None

    def _open(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            self._batch = subprocess.Popen(
                self._command(["cat-file", "--batch"]),
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._batch


def _pipes(batch: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    if batch.stdin is None or batch.stdout is None:  # pragma: no cover - always piped
        raise CaseforgeError("git cat-file: no pipes")
    return batch.stdin, batch.stdout


def user_name(folder: Path) -> str:
    """git's ``user.name`` where ``folder`` is (empty when git or the setting is missing)."""
    done = git(["config", "user.name"], _existing_folder(folder))
    return done.stdout.strip() if done is not None and done.returncode == 0 else ""
