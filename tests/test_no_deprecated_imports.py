"""caseforge's own code imports no deprecated path: in a fresh interpreter with
``-W error::DeprecationWarning``, every module of the package imports, except the shims left
at the old paths of moved modules (``caseforge.synth._moved.MOVED``), which warn by design;
and no import statement in the source, a function's lazy import included, names a shim."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from caseforge.synth._moved import MOVED

SCRIPT = """
import importlib, pkgutil, sys
import caseforge

skip = set(sys.argv[1:])
imported = 0
def fail(name):
    raise ImportError(f"cannot import {name}")
for info in pkgutil.walk_packages(caseforge.__path__, "caseforge.", onerror=fail):
    if info.name not in skip:
        importlib.import_module(info.name)
        imported += 1
print(imported)
"""
# Not the shims; not what runs something when imported (the CLI's entry, Alembic's env).
SKIP = [*MOVED, "caseforge.__main__", "caseforge.store.migrations.env"]


def test_every_module_but_the_shims_imports_with_deprecation_warnings_as_errors() -> None:
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", SCRIPT, *SKIP],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout.split()[-1]) > 100


def test_a_shim_imported_by_caseforge_code_would_fail_it() -> None:
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", "import caseforge.synth.scan"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "caseforge.synth.scan moved to caseforge.privacy.scan" in result.stderr


def test_no_import_statement_in_the_source_names_a_shim() -> None:
    """Lazy imports inside functions (the CLI's) run only when called: read them instead."""
    src = Path(__file__).parents[1] / "src" / "caseforge"
    shims = {src / "synth" / f"{old.rsplit('.', 1)[1]}.py" for old in MOVED}
    found = []
    for path in sorted(src.rglob("*.py")):
        if path in shims:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            found += [f"{path.relative_to(src)}:{node.lineno} {n}" for n in names if n in MOVED]
    assert len(shims) == len(MOVED) and all(path.is_file() for path in shims)
    assert found == []
