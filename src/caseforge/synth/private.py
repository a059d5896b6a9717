"""The private store: what must never enter the repository.

It holds, per suite, the local secret that seeds the surrogates, the per-case glossaries
(the names the case author knows are sensitive), sensitive source cases, and the
original ↔ variant mappings of re-synthesised cases. It lives outside the repository — in
``$CASEFORGE_PRIVATE`` or the user data folder (``$XDG_DATA_HOME/caseforge/private``,
``~/.local/share/caseforge/private``) — and caseforge refuses to write it inside a git work
tree unless the path is git-ignored.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from caseforge.errors import CaseforgeError
from caseforge.files import write_atomic
from caseforge.vcs import git_toplevel, is_ignored

SECRET_FILE = "secret.key"


def default_root() -> Path:
    if os.environ.get("CASEFORGE_PRIVATE"):
        return Path(os.environ["CASEFORGE_PRIVATE"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "caseforge" / "private"


def inside_unignored_work_tree(path: Path) -> Path | None:
    """The work tree ``path`` would be committed from, or None when it is outside every work
    tree or git-ignored there."""
    top = git_toplevel(path)
    return None if top is None or is_ignored(path) else top


class PrivateStore:
    """One suite's private folder."""

    def __init__(self, suite_name: str, root: Path | None = None) -> None:
        self.root = (root or default_root()) / suite_name

    def _guard(self, path: Path) -> None:
        tree = inside_unignored_work_tree(path)
        if tree is not None:
            raise CaseforgeError(
                f"refusing to write private data to {path}: it is inside the git work tree "
                f"{tree} and not git-ignored, so originals would reach the repository; "
                "set CASEFORGE_PRIVATE to a folder outside it, or git-ignore the path"
            )

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        self._guard(path)
        write_atomic(path, text)
        return path

    def read(self, relative: str) -> str | None:
        path = self.root / relative
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def secret(self) -> bytes:
        """The local secret that seeds surrogates (created on first use, mode 0600)."""
        existing = self.read(SECRET_FILE)
        if existing:
            return bytes.fromhex(existing.strip())
        path = self.write(SECRET_FILE, secrets.token_hex(32) + "\n")
        path.chmod(0o600)
        return bytes.fromhex(path.read_text().strip())

    def glossary_path(self, case_id: str) -> Path:
        return self.root / "glossaries" / f"{case_id}.yaml"

    def source_case_path(self, case_id: str) -> Path:
        return self.root / "cases" / f"{case_id}.yaml"

    def save_mapping(self, variant_id: str, data: dict[str, Any]) -> Path:
        return self.write(
            f"mappings/{variant_id}.json", json.dumps(data, ensure_ascii=False, indent=1)
        )

    def mappings(self) -> list[dict[str, Any]]:
        folder = self.root / "mappings"
        return (
            [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
            if folder.is_dir()
            else []
        )

    def private_strings(self) -> set[str]:
        """Every original string the store knows: glossary entries and mapped originals."""
        from caseforge.synth.identifiers import load_glossary

        strings: set[str] = set()
        folder = self.root / "glossaries"
        for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
            for values in load_glossary(path).terms.values():
                strings.update(v for v in values if v.strip())
        for mapping in self.mappings():
            strings.update(k for k in mapping.get("replacements", {}) if k.strip())
        return strings

    def exists(self) -> bool:
        return self.root.is_dir()
