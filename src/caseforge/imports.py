"""Importing a suite's own Python files (``oracles.py``, ``checks.py``), and package names
loaded on first use."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType

from caseforge.errors import DatasetError, suite_exit

# Packages no command may import before it needs them: each costs start-up time, and every
# `caseforge` invocation (and a pytest run with the plugin installed) would pay it. The
# start-up tests (tests/test_startup.py) hold `--version` and `--help` to none of them and
# each command to its own budget; a new heavy dependency joins this set.
HEAVY_MODULES = frozenset(
    {
        "openai", "sqlalchemy", "alembic", "scipy", "numpy", "fastapi", "uvicorn", "ray",
        "opencc", "datasketch", "statsmodels", "text_to_num", "phonenumbers", "jsonschema",
        # interop and privacy; opentelemetry only for an instrumented agent or an OTLP endpoint
        "jieba", "wordfreq", "inspect_ai", "pyarrow", "py_mini_racer", "opentelemetry",
    }
)  # fmt: skip


class SuiteImportError(DatasetError):
    """A suite's module failed to import; ``line`` is where in it, 0 if not known."""

    def __init__(self, path: Path, error: BaseException | None, line: int = 0) -> None:
        self.path, self.error, self.line = path, error, line
        super().__init__(f"{path}: {error!r}" if error else f"{path}: cannot import it")


def import_suite_file(path: Path, kind: str) -> ModuleType:
    """Import ``path`` with its folder on ``sys.path`` (so it can import its neighbours).

    The module's name comes from the file's path and content: two suites' ``oracles.py``
    do not clash, a file is executed once per content, and a long-lived process picks up
    an edited file.
    """
    digest = hashlib.sha1(str(path).encode() + b"\0" + path.read_bytes()).hexdigest()[:12]
    name = f"caseforge_suite_{kind}_{digest}"
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SuiteImportError(path, None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        # What the module prints while it loads is not caseforge's output: stderr (so
        # `validate --json` and `report --format json` still parse).
        with contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise SuiteImportError(path, exc, _line_in(exc, path)) from exc
    except (SystemExit, KeyboardInterrupt) as exc:  # the module's own exit: its failure
        del sys.modules[name]
        failure = suite_exit(exc)
        if failure is None:
            raise
        raise SuiteImportError(path, failure, _line_in(exc, path)) from None
    finally:
        if added:
            sys.path.remove(folder)
    return module


def _line_in(exc: BaseException, path: Path) -> int:
    """The last line of ``path`` the traceback passed through (a syntax error's own line)."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return exc.lineno
    line = 0
    tb = exc.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def lazy_names(package: str, where: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` that imports ``name`` from ``where[name]`` on first use."""

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
