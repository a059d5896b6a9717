"""Leaks of private data into the repository.

With the suite's private store at hand, every original string it knows (glossary entries,
mapped originals) is searched for in every tracked file of the suite, normalised (NFKC,
casefold). Without it — in CI — the suite's data files (cases, retired cases, fixtures,
labels) are linted instead: full 40-character commit SHAs, e-mail addresses on real-looking
domains, and redaction marks.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from caseforge.synth.verify import REDACTION
from caseforge.vcs import tracked_files as vcs_tracked_files

SHA40 = re.compile(r"(?<![0-9a-fA-F])[0-9a-f]{40}(?![0-9a-fA-F])")
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@((?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,})(?![\w-])")
RESERVED_DOMAINS = ("example.com", "example.org", "example.net")
RESERVED_SUFFIXES = (".test", ".example", ".invalid", ".localhost", ".local")
DATA_PARTS = ("cases", "fixtures", "labels")
DATA_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")


@dataclass(frozen=True)
class Leak:
    path: Path
    line: int
    col: int
    kind: str
    detail: str

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.kind}: {self.detail}"


def tracked_files(suite_dir: Path) -> list[Path]:
    """The suite's files under version control (every file when it is not in git)."""
    tracked = vcs_tracked_files(suite_dir)
    if tracked is not None:
        return tracked
    return [p for p in suite_dir.rglob("*") if p.is_file() and ".git" not in p.parts]


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def private_string_leaks(suite_dir: Path, strings: set[str]) -> list[Leak]:
    """Every tracked occurrence of a private original string."""
    wanted = sorted({_norm(s) for s in strings if len(s.strip()) >= 2}, key=len, reverse=True)
    leaks = []
    for path in tracked_files(suite_dir):
        text = _text(path)
        if text is None:
            continue
        folded = _norm(text)
        for needle in wanted:
            index = folded.find(needle)
            if index >= 0:
                line, col = _position(folded, index)
                shown = needle if len(needle) <= 4 else needle[:2] + "…"
                leaks.append(
                    Leak(
                        path,
                        line,
                        col,
                        "private string",
                        f"an original ({shown}) from the private store",
                    )
                )
    return leaks


def lint(suite_dir: Path) -> list[Leak]:
    """Without the private store: SHAs, real-looking e-mail domains, redaction marks."""
    leaks = []
    for path in tracked_files(suite_dir):
        relative = path.relative_to(suite_dir)
        if path.suffix not in DATA_SUFFIXES or (
            not any(part in DATA_PARTS for part in relative.parts)
            and relative.name != "retired.yaml"
        ):
            continue
        text = _text(path)
        if text is None:
            continue
        for match in SHA40.finditer(text):
            line, col = _position(text, match.start())
            leaks.append(
                Leak(
                    path,
                    line,
                    col,
                    "commit SHA",
                    f"{match.group()[:10]}… looks like a real 40-hex commit",
                )
            )
        for match in EMAIL.finditer(text):
            domain = match.group(1).lower()
            if (
                domain in RESERVED_DOMAINS
                or domain.endswith(RESERVED_SUFFIXES)
                or domain.endswith(tuple("." + d for d in RESERVED_DOMAINS))
            ):
                continue
            line, col = _position(text, match.start())
            leaks.append(
                Leak(path, line, col, "e-mail domain", f"{domain} is not a reserved example domain")
            )
        for match in REDACTION.finditer(text):
            line, col = _position(text, match.start())
            leaks.append(
                Leak(
                    path,
                    line,
                    col,
                    "redaction mark",
                    f"{match.group()!r}: re-synthesise instead of redacting",
                )
            )
    return leaks
