"""A promptfoo assertion that transforms the output first, as one ``javascript`` check.

promptfoo runs a test's ``options.transform``, then the assertion's own ``transform``, on the
provider's output, and grades what they return. A caseforge check grades the field as the
agent returned it, so such an assertion becomes JavaScript that does both: the transforms
(each an expression, or a function body when it has several lines, of ``output`` and
``context``, as promptfoo runs them), then the assertion's test on the value they give,
written as promptfoo's handler tests it (an object is compared as its JSON text, as
promptfoo's ``coerceString`` writes it).

The assertions that have such a test: ``equals``, the ``contains`` family, ``starts-with``,
``regex`` (JavaScript's own), ``is-json`` without a schema, ``word-count``, and inline
``javascript``, each with ``not-``. The others raise :class:`NotComposable`: the importer
reports them.
"""

from __future__ import annotations

import json

from caseforge.errors import DatasetError
from caseforge.interop.promptfoo_mapping import as_text

_TEXT = "const text = typeof value === 'string' ? value : JSON.stringify(value);"
_EQUAL = (
    "const same = (a, b) => a === b || (a !== null && b !== null && typeof a === 'object' && "
    "typeof b === 'object' && Object.keys(a).length === Object.keys(b).length && "
    "Object.keys(a).every((k) => same(a[k], b[k])));"
)


class NotComposable(DatasetError):
    """The assertion has no JavaScript test here; the message says why."""


def body(code: str) -> str:
    """promptfoo's reading of a transform or an inline assertion: several lines are a
    function body, one line an expression returned."""
    return code if "\n" in code.strip() else f"return ({code.strip()});"


def compose(transforms: list[str], kind: str, value: object, code: str | None = None) -> str:
    """JavaScript code: ``transforms`` applied in turn to ``output``, then ``kind``'s test
    (with ``value``, rendered; ``code`` for an inline ``javascript`` assertion)."""
    negate = kind.startswith("not-")
    base = kind.removeprefix("not-")
    steps = ["let value = output;"]
    for transform in transforms:
        steps.append(f"value = ((output, context) => {{\n{body(transform)}\n}})(value, context);")
    test = _test(base, value, code)
    steps.append(f"return {'!' if negate else ''}({test});")
    return "\n".join(steps)


def _literal(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _test(kind: str, value: object, code: str | None) -> str:
    if kind == "javascript":
        assert code is not None
        return f"((output, context) => {{\n{body(code)}\n}})(value, context)"
    if kind == "equals":
        if isinstance(value, dict | list):
            parsed = "typeof value === 'string' ? JSON.parse(value) : value"
            return (
                f"(() => {{ {_EQUAL} try {{ return same({parsed}, {_literal(value)}); }} "
                "catch (e) { return false; } })()"
            )
        return f"(() => {{ {_TEXT} return text === {_literal(as_text(value))}; }})()"
    if kind in ("contains", "icontains", "starts-with"):
        lower = kind == "icontains"
        needle = as_text(value).lower() if lower else as_text(value)
        method = "startsWith" if kind == "starts-with" else "includes"
        text = "text.toLowerCase()" if lower else "text"
        return f"(() => {{ {_TEXT} return {text}.{method}({_literal(needle)}); }})()"
    if kind in ("contains-all", "icontains-all", "contains-any", "icontains-any"):
        lower = kind.startswith("i")
        values = value if isinstance(value, list) else [value]
        needles = [as_text(v).lower() if lower else as_text(v) for v in values]
        every = "every" if kind.endswith("-all") else "some"
        text = "text.toLowerCase()" if lower else "text"
        return (
            f"(() => {{ {_TEXT} return {_literal(needles)}.{every}((v) => "
            f"{text}.includes(v)); }})()"
        )
    if kind == "regex":
        return f"(() => {{ {_TEXT} return new RegExp({_literal(as_text(value))}).test(text); }})()"
    if kind == "is-json" and value in (None, ""):
        return (
            "(() => { if (typeof value !== 'string') return value !== undefined; "
            "try { JSON.parse(value); return true; } catch (e) { return false; } })()"
        )
    if kind == "word-count" and isinstance(value, int | float) and not isinstance(value, bool):
        return (
            f"(() => {{ {_TEXT} return text.trim().split(/\\s+/).filter(Boolean).length "
            f"=== {_literal(value)}; }})()"
        )
    raise NotComposable(f"a {kind} assertion after a transform has no JavaScript form here")
