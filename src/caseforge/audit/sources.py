"""What the leak audit reads: every file git would publish, every version in the history,
every commit message — decoded by ``caseforge.decoding``.

- the work tree: tracked files and untracked files that are not ignored, in the whole
  repository (or, outside git, every file under the suite folder);
- the history: every blob reachable from any ref or the reflog (so content committed and
  later reverted or deleted is read), and every commit message; a shallow clone is said so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from caseforge.decoding import MAX_BYTES, Text, Unreadable, decode, escapes
from caseforge.vcs import GitBatch, git, work_tree

_SKIP_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".caseforge"})


def repo_files(folder: Path) -> tuple[Path, list[Path]]:
    """The top of the repository holding ``folder`` and every file git would publish from it:
    tracked, and untracked but not ignored. Outside git: ``folder`` and every file in it."""
    top = work_tree(folder)
    if top is None:
        files = [
            p
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not (_SKIP_DIRS & set(p.relative_to(folder).parts))
        ]
        return folder, files
    out = git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], top)
    names = sorted(set(out.stdout.split("\0"))) if out is not None and out.returncode == 0 else []
    return top, [top / name for name in names if name and (top / name).is_file()]


def blob_id(data: bytes) -> str:
    """The object id git gives these bytes (so a history version equal to it is not re-read)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def read_file(path: Path, shown: str, read: set[str] | None = None) -> Iterator[Text | Unreadable]:
    """The texts of one work-tree file; its blob id goes into ``read`` when it was read whole."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        yield Unreadable(shown, f"cannot read: {exc.strerror or exc}")
        return
    if len(data) > MAX_BYTES:
        yield Unreadable(shown, f"larger than {MAX_BYTES // 2**20} MB: only the start was read")
        data = data[:MAX_BYTES]
    elif read is not None:
        read.add(blob_id(data))
    yield from decode(shown, data)


@dataclass
class GitHistory:
    """What the git history holds beyond the work tree (not ``compare.history.History``,
    the history of runs)."""

    texts: list[Text | Unreadable]
    commits: int
    shallow: bool


def git_history(top: Path, current: set[str]) -> GitHistory:
    """Every blob in the history (but those already read whole from the work tree, ``current``
    object ids) and every commit message, decoded."""
    shallow_out = git(["rev-parse", "--is-shallow-repository"], top)
    shallow = shallow_out is not None and shallow_out.stdout.strip() == "true"
    listed = git(["rev-list", "--all", "--reflog", "--objects"], top)
    blobs: dict[str, str] = {}
    for line in listed.stdout.splitlines() if listed is not None and listed.returncode == 0 else []:
        sha, _, path = line.partition(" ")
        if path and sha not in current and sha not in blobs:
            blobs[sha] = path
    texts: list[Text | Unreadable] = []
    with GitBatch(top, "the leak audit reads the git history") as batch:
        for sha, path in blobs.items():
            found = batch.blob(sha)
            if found is None:
                continue  # a tree, or gone
            for item in decode(f"history:{sha[:10]}:{path}", found[1][:MAX_BYTES]):
                texts.append(
                    Text(item.origin, item.text, item.encoding, sha)
                    if isinstance(item, Text)
                    else item
                )
    log = git(["log", "--all", "--reflog", "--format=%H%x1f%B%x1e"], top)
    commits = 0
    for record in log.stdout.split("\x1e") if log is not None and log.returncode == 0 else []:
        sha, _, message = record.strip("\n").partition("\x1f")
        if sha:
            commits += 1
            texts.append(Text(f"commit:{sha[:10]}", message))
            decoded = escapes(message)
            if decoded != message:
                texts.append(Text(f"commit:{sha[:10]}", decoded, "escapes decoded"))
    return GitHistory(texts, commits, shallow)


def first_commit_with(top: Path, blob: str) -> str | None:
    """The oldest commit that added or removed a blob (for a finding in the history)."""
    out = git(
        ["log", "--all", "--reflog", "--reverse", "--format=%h", f"--find-object={blob}"], top
    )
    if out is None or out.returncode != 0:
        return None
    lines = out.stdout.split()
    return lines[0] if lines else None
