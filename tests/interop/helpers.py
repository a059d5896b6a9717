"""What the interop tests share: the CLI in-process, the fixtures' folder, and the mark for
tests that need must_include's `match: any` (another branch adds it to the check mode)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from caseforge.checks.builtin import MustIncludeCheck
from caseforge.cli import app

DATA = Path(__file__).resolve().parent / "data"

# A list target imports as `must_include` with `match: any`, an option the import-checks
# branch adds to the mode. Until it is merged, such a case is written but does not validate
# (the import says so and exits 1); the tests that need it to validate wait for it.
needs_match_any = pytest.mark.skipif(
    "match" not in MustIncludeCheck.model_fields,
    reason="must_include `match: any` lands with the import-checks branch (issue 25)",
)


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
