"""promptfoo's templates (Nunjucks), as far as a plain substitution goes.

promptfoo renders its prompts and assertion values with Nunjucks and a test's vars. The
importer renders the simple part of it the way Nunjucks does: ``{{ name }}`` and
``{{ name.key }}`` (``{{ name[0] }}`` too) become the var's text; a var that is not there
becomes nothing, as in Nunjucks. A number is written as JavaScript writes it (``1.0`` is
``1``), a boolean ``true``/``false``, a list its items joined with ``,``, an object
``[object Object]``.

Anything more (``{% if %}``, ``{{ x | dump }}``, expressions) raises :class:`Unrenderable`:
the importer keeps such a template as it is and says so, rather than guess.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping

from caseforge.errors import DatasetError

_EXPRESSION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_PATH = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[\d+\]|\[(['\"])[^'\"]*\1\])*")
_PART = re.compile(r"\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\[['\"]([^'\"]*)['\"]\]")
_STATEMENT = re.compile(r"\{%|\{#")


class Unrenderable(DatasetError):
    """A template that uses more of Nunjucks than ``{{ var }}``; the message says what."""


def variables(template: str) -> list[str]:
    """The top-level names a template's ``{{ … }}`` read (in order, once each)."""
    names: list[str] = []
    for match in _EXPRESSION.finditer(template):
        head = re.match(r"[A-Za-z_$][\w$]*", match.group(1))
        if head and head.group(0) not in names:
            names.append(head.group(0))
    return names


def is_template(text: str) -> bool:
    """Whether ``text`` holds any Nunjucks at all."""
    return "{{" in text or bool(_STATEMENT.search(text))


def render(template: str, values: Mapping[str, object]) -> tuple[str, list[str]]:
    """``template`` with each ``{{ name }}`` replaced, and the names it read that
    ``values`` lacks (rendered as nothing, as Nunjucks does).

    Raises:
        Unrenderable: a statement, a filter or an expression.
    """
    statement = _STATEMENT.search(template)
    if statement:
        end = template.find("}", statement.start())
        shown = template[statement.start() : end + 1 if end >= 0 else statement.start() + 20]
        raise Unrenderable(f"a Nunjucks statement or comment ({shown.strip()[:40]})")
    missing: list[str] = []

    def one(match: re.Match[str]) -> str:
        expression = match.group(1)
        if not _PATH.fullmatch(expression):
            raise Unrenderable(f"a Nunjucks expression or filter ({{{{ {expression[:40]} }}}})")
        head = re.match(r"[A-Za-z_$][\w$]*", expression)
        assert head is not None
        if head.group(0) not in values:
            missing.append(head.group(0))
            return ""
        value: object = values[head.group(0)]
        for part in _PART.finditer(expression, head.end()):
            value = _step(value, part)
        return text_of(value)

    return _EXPRESSION.sub(one, template), missing


def _step(value: object, part: re.Match[str]) -> object:
    key, index, quoted = part.group(1), part.group(2), part.group(3)
    if index is not None:
        return value[int(index)] if isinstance(value, list) and int(index) < len(value) else None
    name = key if key is not None else quoted
    return value.get(name) if isinstance(value, dict) else None


def render_prompt(template: str, values: Mapping[str, object]) -> tuple[str, list[str]]:
    """A prompt as promptfoo renders it: a template that is JSON (a chat prompt) has the
    vars rendered inside each of its strings, so a var holding a quote or a line break
    keeps it valid JSON (written back with an indent of 2, as promptfoo writes it);
    any other template is rendered as text."""
    try:
        parsed = json.loads(template)
    except ValueError:
        return render(template, values)
    if isinstance(parsed, str):
        return render(template, values)
    missing: list[str] = []

    def walk(value: object) -> object:
        if isinstance(value, str):
            text, lacking = render(value, values)
            missing.extend(name for name in lacking if name not in missing)
            return text
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        return value

    return json.dumps(walk(parsed), ensure_ascii=False, indent=2), missing


def text_of(value: object) -> str:
    """A value as Nunjucks writes it into text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return str(int(value)) if value == int(value) else repr(value)
    if isinstance(value, list):
        return ",".join(text_of(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)
