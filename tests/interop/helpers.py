"""What the interop tests share: the CLI in-process and the fixtures' folder."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from caseforge.cli import app

DATA = Path(__file__).resolve().parent / "data"


def cli(*argv: str) -> Result:
    """``caseforge ARGV`` in this process; the caller asserts the exit code."""
    return CliRunner().invoke(app, [str(a) for a in argv])


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path, with its bytes."""
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }
