"""``SUITE/context/``: what a model-backed agent needs beside each case (a domain policy,
tool schemas), read once per run and handed to every transport: as the request's
``context`` and as ``ctx.context`` for a callable.

Each file is keyed by its path under ``context/``. ``.json``, ``.yaml`` and ``.yml`` files
are parsed; any other file is text (UTF-8). A file that does not parse is a one-line error
naming it."""

from __future__ import annotations

import json
from pathlib import Path

from caseforge.case.limits import exceeded, limit_message, yaml_limit_problem
from caseforge.errors import CaseforgeError, Problem
from caseforge.jsontypes import JSONObject, JSONValue

CONTEXT_DIR = "context"
MAX_CONTEXT_BYTES = 2_000_000  # sent with every request: keep it to what the agent reads


def load_context(suite_dir: Path) -> JSONObject | None:
    """The suite's context files by name, or None when it has no ``context/`` folder."""
    folder = suite_dir / CONTEXT_DIR
    if not folder.is_dir():
        return None
    found: JSONObject = {}
    total = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
        name = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        total += len(data)
        if total > MAX_CONTEXT_BYTES:
            raise CaseforgeError(
                f"{folder}: over {MAX_CONTEXT_BYTES // 1_000_000} MB of context, which every "
                "request would carry; keep only what the agent reads"
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CaseforgeError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        found[name] = _parsed(path, text)
    return found


def _parsed(path: Path, text: str) -> JSONValue:
    """A context file's value; one sent with every request is held to the limits a case is
    (:mod:`caseforge.case.limits`): an alias bomb would be expanded into each request."""
    value: JSONValue
    if path.suffix == ".json":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CaseforgeError(
                f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"
            ) from None
        except RecursionError:
            raise CaseforgeError(Problem(path, 0, 0, "", limit_message("depth"))) from None
        limit = exceeded(value)
        if limit is not None:
            raise CaseforgeError(Problem(path, 0, 0, "", limit_message(limit)))
        return value
    if path.suffix in (".yaml", ".yml"):
        from ruamel.yaml import YAML
        from ruamel.yaml.error import MarkedYAMLError

        try:
            value = YAML(typ="safe").load(text)
        except MarkedYAMLError as exc:
            mark = exc.problem_mark
            where = f"{mark.line + 1}:{mark.column + 1}" if mark else "1:1"
            raise CaseforgeError(f"{path}:{where}: invalid YAML: {exc.problem}") from None
        except RecursionError:
            raise CaseforgeError(yaml_limit_problem(path, text, "depth")) from None
        limit = exceeded(value)
        if limit is not None:
            raise CaseforgeError(yaml_limit_problem(path, text, limit))
        return value
    return text
