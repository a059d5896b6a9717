"""Parsed YAML case files kept between commands, under ``.caseforge/cache/cases/``.

Parsing is most of loading a suite: 2,000 YAML files take 0.3 s in ruamel's C loader, and
every ``run`` and ``validate`` loads them all. An unchanged file parses to the same value,
so the parsed value of each case file is kept under its path, size and modification time
(what git trusts too): a suite edited in one file re-parses that file only. A value is
kept only once it has parsed and passed the limits (``case/limits.py``); the pydantic
validation still runs on every load, and a case that fails it is read again from its
text so the error names its line. The cache is an optimisation: one that cannot be read
or written is left alone, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from caseforge._version import __version__
from caseforge.paths import ensure_state_dir, suite_paths

_Key = tuple[int, int]  # size, modification time in nanoseconds


class ParsedCases:
    """The parsed case files of one suite, by path."""

    def __init__(self, file: Path | None, state: Path | None = None) -> None:
        self.file = file
        self.state = state  # the .caseforge folder the file is under (made ignoring itself)
        self.entries: dict[str, tuple[_Key, object]] = {}
        self.changed = False
        if file is not None:
            with contextlib.suppress(Exception):  # absent, or from another version: empty
                with file.open("rb") as handle:
                    version, entries = pickle.load(handle)
                if version == __version__:
                    self.entries = entries

    @classmethod
    def of(cls, suite_dir: Path) -> ParsedCases:
        """The cache of the suite at ``suite_dir`` (several suites share a state folder)."""
        try:
            paths = suite_paths(suite_dir)
            name = hashlib.sha1(str(suite_dir.resolve()).encode()).hexdigest()[:16]
        except OSError:
            return cls(None)
        return cls(paths.cache / "cases" / f"{name}.pickle", paths.state)

    @staticmethod
    def key(path: Path) -> _Key | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        return stat.st_size, stat.st_mtime_ns

    def get(self, path: Path) -> tuple[bool, object]:
        """(found, value) for ``path`` as it is now."""
        entry = self.entries.get(str(path))
        if entry is None or entry[0] != self.key(path):
            return False, None
        return True, entry[1]

    def put(self, path: Path, value: object) -> None:
        key = self.key(path)
        if key is not None:
            self.entries[str(path)] = (key, value)
            self.changed = True

    def save(self, keep: set[str]) -> None:
        """Write the cache with the entries of the files in ``keep`` (those gone go)."""
        if self.file is None:
            return
        stale = set(self.entries) - keep
        if not self.changed and not stale:
            return
        for path in stale:
            del self.entries[path]
        with contextlib.suppress(Exception):
            if self.state is not None:
                ensure_state_dir(self.state)
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    pickle.dump((__version__, self.entries), handle, pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, self.file)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
