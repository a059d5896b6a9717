"""The private store: what must never enter the repository or reach a model unchecked.

It holds, per suite, the local secret that seeds surrogates and keys audit tags, the
per-case glossaries (the names the case author knows are sensitive), the failure shapes
(``shapes/<case>.txt``: the abstract words ``resynth`` may send), sensitive source cases,
every outbound payload, rejected drafts, and the original ↔ variant mappings.

It lives outside the repository — ``$CASEFORGE_PRIVATE`` or the user data folder
(``$XDG_DATA_HOME/caseforge/private``, ``~/.local/share/caseforge/private``) — in a folder
named by the suite's :class:`PrivateStoreKey`: its folder relative to the repository top plus
the repository's root commit. Two suites that share a ``name:`` never share a secret or a
glossary, and a clone at another path finds the same store. The store's ``identity.json``
records the key, so a shallow clone, which lacks the root commit, finds its store by the
suite's name and folder.

caseforge refuses to write the store inside a git work tree unless the path is git-ignored,
and fails closed when it cannot tell (a ``.git`` above the path but no ``git`` to ask).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caseforge.errors import CaseforgeError, EnvError
from caseforge.files import write_atomic
from caseforge.jsontypes import JSONObject, JSONValue
from caseforge.vcs import is_ignored, is_shallow, root_commit, work_tree

SECRET_FILE = "secret.key"
IDENTITY_FILE = "identity.json"  # the store's PrivateStoreKey: {"name", "relative", "root"}


def default_root() -> Path:
    if os.environ.get("CASEFORGE_PRIVATE"):
        return Path(os.environ["CASEFORGE_PRIVATE"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "caseforge" / "private"


def inside_unignored_work_tree(path: Path) -> Path | None:
    """The work tree ``path`` would be committed from, or None when it is outside every work
    tree or git-ignored there. A ``.git`` above the path that git cannot read is an error
    (fail closed), never "outside"."""
    path = path.expanduser().resolve()
    top = work_tree(path)
    return None if top is None or is_ignored(path) else top


@dataclass(frozen=True)
class PrivateStoreKey:
    """Which suite a private store belongs to, and so the name of its folder: not the suite's
    ``name:``, which two suites may share.

    Nor is it ``case.identity.SuiteIdentity``, the identity runs and reports carry: that one is
    the same on every machine and matches two suites outside git by their name alone, while
    two suites must never share a secret, so outside git this key holds the absolute path. A
    shallow clone's root commit is only where the clone was cut, so there the key says
    ``shallow`` and the store is looked up by the suite's name and folder."""

    name: str
    relative: str  # the suite folder relative to the repository top (or its absolute path)
    root: str  # the repository's root commit, ``path`` outside git, ``shallow`` in a shallow clone

    @property
    def folder(self) -> str:
        """The store's folder under the stores' base: ``<name slug>-<12 hex digits>``."""
        digest = hashlib.sha256(f"{self.root}\0{self.relative}".encode()).hexdigest()[:12]
        slug = re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-") or "suite"
        return f"{slug}-{digest}"

    def to_json(self) -> str:
        """The store's ``identity.json``."""
        data = {"name": self.name, "relative": self.relative, "root": self.root}
        return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def private_store_key(suite_dir: Path, name: str) -> PrivateStoreKey:
    """The key of the private store of the suite in ``suite_dir`` (see :class:`PrivateStoreKey`)."""
    folder = suite_dir.expanduser().resolve()
    top = work_tree(folder)
    if top is None:
        return PrivateStoreKey(name, str(folder), "path")
    relative = folder.relative_to(top.resolve()).as_posix() or "."
    if is_shallow(top):  # its "first" commit is only where the clone was cut
        return PrivateStoreKey(name, relative, "shallow")
    commit = root_commit(top)
    return PrivateStoreKey(name, relative, commit or f"unborn:{top.resolve()}")


def _read_key(folder: Path) -> JSONObject | None:
    try:
        data: JSONValue = json.loads((folder / IDENTITY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class PrivateStore:
    """One suite's private folder."""

    def __init__(self, root: Path, key: PrivateStoreKey | None = None) -> None:
        self.root = root
        self.key = key

    @classmethod
    def for_suite(
        cls, suite_dir: Path, name: str, base: Path | None = None, *, lookup: bool = False
    ) -> PrivateStore:
        """The store of the suite in ``suite_dir`` under ``base`` (default: ``default_root``).

        ``base`` may also be a store folder itself (it holds ``identity.json``). In a shallow
        clone, which lacks the root commit, the one store under ``base`` whose key has
        the suite's name and folder is used, and none or several are an error — unless
        ``lookup`` (only reading, as the audit does): then a store that does not exist."""
        key = private_store_key(suite_dir, name)
        base = base or default_root()
        if (base / IDENTITY_FILE).is_file() or (base / SECRET_FILE).is_file():
            return cls(base, key)
        if key.root == "shallow":
            try:
                return cls._in_shallow_clone(key, base)
            except CaseforgeError:
                if not lookup:
                    raise
                return cls(base / f"{key.folder}-not-found", key)
        store = cls(base / key.folder, key)
        legacy = base / name
        if not store.root.exists() and (legacy / SECRET_FILE).is_file():
            raise CaseforgeError(
                f"{legacy}: a private store keyed by the suite's name alone (older caseforge); "
                f"stores are now keyed by the suite's identity: move it with "
                f"`mv {legacy} {store.root}`"
            )
        return store

    @classmethod
    def _in_shallow_clone(cls, key: PrivateStoreKey, base: Path) -> PrivateStore:
        matches = [
            folder
            for folder in (sorted(base.iterdir()) if base.is_dir() else [])
            if (found := _read_key(folder))
            and found.get("name") == key.name
            and found.get("relative") == key.relative
        ]
        if len(matches) == 1:
            return cls(matches[0], key)
        what = "no store" if not matches else f"{len(matches)} stores"
        raise EnvError(
            f"{base}: {what} for suite {key.name!r} ({key.relative}), and this shallow "
            "clone lacks the root commit that names it; fetch the whole history (git fetch "
            "--unshallow, fetch-depth: 0 in CI) or pass the store folder itself"
        )

    def _guard(self, path: Path) -> None:
        tree = inside_unignored_work_tree(path)
        if tree is not None:
            raise CaseforgeError(
                f"refusing to write private data to {path}: it is inside the git work tree "
                f"{tree} and not git-ignored (or git is missing and this cannot be checked), "
                "so originals could reach the repository; set CASEFORGE_PRIVATE to a folder "
                "outside it, or git-ignore the path"
            )

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        self._guard(path)
        if self.key is not None and not (self.root / IDENTITY_FILE).is_file():
            write_atomic(self.root / IDENTITY_FILE, self.key.to_json())
        write_atomic(path, text)
        return path

    def read(self, relative: str) -> str | None:
        path = self.root / relative
        if not path.is_file():
            return None
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EnvError(f"{path}: cannot read the private store: {exc}") from None

    def secret(self) -> bytes:
        """The local secret that seeds surrogates (created on first use, mode 0600)."""
        existing = self.read(SECRET_FILE)
        if existing:
            try:
                return bytes.fromhex(existing.strip())
            except ValueError:
                raise CaseforgeError(
                    f"{self.root / SECRET_FILE}: not a hex secret; restore it from a backup"
                ) from None
        path = self.write(SECRET_FILE, secrets.token_hex(32) + "\n")
        path.chmod(0o600)
        return bytes.fromhex(path.read_text().strip())

    def glossary_path(self, case_id: str) -> Path:
        return self.root / "glossaries" / f"{case_id}.yaml"

    def shape_path(self, case_id: str) -> Path:
        return self.root / "shapes" / f"{case_id}.txt"

    def source_case_path(self, case_id: str) -> Path:
        return self.root / "cases" / f"{case_id}.yaml"

    def save_mapping(self, variant_id: str, data: Mapping[str, object]) -> Path:
        return self.write(
            f"mappings/{variant_id}.json", json.dumps(data, ensure_ascii=False, indent=1)
        )

    def mappings(self) -> list[dict[str, Any]]:
        folder = self.root / "mappings"
        out = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                out.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                raise CaseforgeError(f"{path}: cannot read the mapping: {exc}") from None
        return out

    def private_terms(self) -> list[tuple[str, str, str]]:
        """Every original string the store knows, as ``(class, string, source case)``:
        glossary entries, and the originals recorded in mappings."""
        from caseforge.privacy.identifiers import load_glossary

        terms: list[tuple[str, str, str]] = []
        folder = self.root / "glossaries"
        for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
            for cls, values in load_glossary(path).terms.items():
                terms.extend((cls, v, path.stem) for v in values if v.strip())
        for mapping in self.mappings():
            source = str(mapping.get("source_case", ""))
            for cls, values in (mapping.get("originals") or {}).items():
                terms.extend((str(cls), str(v), source) for v in values if str(v).strip())
            classes = mapping.get("classes") or {}
            for original in mapping.get("replacements", {}):
                if str(original).strip():
                    terms.append((str(classes.get(original, "identifier")), str(original), source))
        return terms

    def source_case_ids(self) -> set[str]:
        """The sensitive cases the store knows: kept here, or the source of a mapping."""
        folder = self.root / "cases"
        ids = {p.stem for p in folder.glob("*.yaml")} if folder.is_dir() else set()
        ids.update(str(m["source_case"]) for m in self.mappings() if m.get("source_case"))
        return ids

    def exists(self) -> bool:
        return self.root.is_dir()
