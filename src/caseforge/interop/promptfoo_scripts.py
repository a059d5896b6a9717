"""promptfoo's code assertions (``javascript``, ``python``) as checks, and the files an
assertion names copied into the suite.

Inline code is kept as it is (JavaScript that needs Node or does not compile, or Python
that does not compile, is not mapped, with why); a ``file://x.js[:fn]`` or
``file://x.py[:fn]`` script is copied into the suite's ``asserts/`` (its path under the
config's folder kept) and named by the check with its ``function``. A TypeScript file, a
file that is not there, or a script that needs Node is reported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from caseforge.checks.scripts import compile_python, javascript_syntax_error, needs_node
from caseforge.interop.promptfoo_config import FileRef, file_ref, read_text
from caseforge.interop.promptfoo_mapping import Context, NotMapped, reply


def code_check(kind: str, assertion: Mapping[str, object], context: Context) -> dict[str, object]:
    value = assertion.get("value")
    if not isinstance(value, str) or not value.strip():
        raise NotMapped("no value", "needs code or a file:// script")
    check: dict[str, object] = {"mode": kind}
    if value.startswith("file://"):
        ref = file_ref(value, context.base)
        check.update(_script(kind, ref, context))
    elif kind == "javascript":
        node = needs_node(value)
        if node is not None:
            raise NotMapped(
                "needs Node",
                f"needs Node (`{node}`); caseforge runs JavaScript "
                "in an embedded engine without it",
            )
        wrong = javascript_syntax_error("code", value)
        if wrong is not None:
            raise NotMapped("code not valid", f"not valid JavaScript: {wrong}")
        check["code"] = value
    else:
        try:
            compile_python(value)
        except ValueError as exc:
            raise NotMapped("code not valid", str(exc)) from None
        check["code"] = value
    threshold = assertion.get("threshold")
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        check["threshold"] = threshold
    return reply(check)


def _script(kind: str, ref: FileRef, context: Context) -> dict[str, object]:
    suffixes = (".js", ".cjs", ".mjs") if kind == "javascript" else (".py",)
    if ref.suffix in (".ts", ".mts", ".cts"):
        raise NotMapped(
            "TypeScript", f"{ref.text} is TypeScript: compile it to JavaScript and import again"
        )
    if ref.suffix not in suffixes:
        raise NotMapped("unreadable file", f"{ref.text} is not a {'/'.join(suffixes)} script")
    if not ref.path.is_file():
        raise NotMapped("missing file", f"{ref.text}: no such file")
    source = read_text(ref.path)
    if kind == "javascript":
        node = needs_node(source)
        if node is not None:
            raise NotMapped(
                "needs Node",
                f"{ref.text} needs Node (`{node}`); caseforge runs "
                "JavaScript in an embedded engine without it",
            )
        wrong = javascript_syntax_error("file", source)
        if wrong is not None:
            raise NotMapped("code not valid", f"{ref.text} is not valid JavaScript: {wrong}")
    target = copy_file(ref.path, source, "asserts", context)
    out: dict[str, object] = {"file": target}
    if ref.function and not (kind == "python" and ref.function == "get_assert"):
        out["function"] = ref.function
    return out


def copy_file(path: Path, text: str, folder: str, context: Context) -> str:
    """Put ``path``'s text into the suite under ``folder/`` (its path under the config's
    folder, else its name; a different file of the same name gets ``-2``); its suite path."""
    resolved, base = path.resolve(), context.base.resolve()
    common = Path(os.path.commonpath([resolved, base]))
    relative = resolved.relative_to(common).as_posix()
    target = relative if relative.startswith(f"{folder}/") else f"{folder}/{relative}"
    stem, dot, suffix = target.rpartition(".")
    number = 1
    while context.files.get(target, text) != text:
        number += 1
        target = f"{stem}-{number}{dot}{suffix}"
    context.files[target] = text
    return target
