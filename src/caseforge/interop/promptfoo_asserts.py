"""promptfoo's assertions as caseforge checks: the mapping table, one row per type.

Every check reads the agent's ``reply`` (promptfoo grades the provider's output text),
except ``cost`` and ``latency``, which read what the run measured. A check's key is the
assertion's ``metric`` (lower case, ``_`` between words), else its type (``contains``,
``llm_rubric``); the importer numbers repeats (``contains_2``).

- ``equals`` / ``not-equals``: ``exact`` (``negate: true``); an object value: a ``python``
  check comparing the reply parsed as JSON, as promptfoo does;
- ``contains``, ``contains-all``: ``must_include`` (``icontains…``: ``case_sensitive:
  false``); ``contains-any``, ``icontains-any``: ``must_include`` with ``match: any``;
- ``not-contains``, ``not-contains-any`` (and ``-i``): ``must_not_include``;
  ``not-contains-all``: a ``javascript`` check that not every value is there;
- ``starts-with``: ``regex`` of ``\\A`` and the escaped text; ``regex``: ``regex``, the
  JavaScript dialect translated (``interop/jsregex.py``); ``not-``: ``negate: true``;
- ``is-json`` / ``contains-json``: ``json`` (``find: true``), ``value`` as its ``schema``;
  ``not-is-json``: ``javascript``; ``is-xml`` without a value: ``python``;
- ``cost`` / ``latency``: ``cost`` ``max_usd`` / ``latency`` ``max_ms``, the ``threshold``;
- ``javascript``, ``python``: the same modes, inline or ``file://x.js[:fn]`` (``.py``),
  the script copied into the suite's ``asserts/``; ``threshold`` kept;
- ``word-count``: ``javascript`` counting words as promptfoo does;
- ``trace-span-count``, ``trace-span-duration``, ``trace-error-spans``: one ``spans`` check
  each (a ``must_have`` matcher with the pattern, its count or longest duration and
  percentile; ``max_errors``), which reads the agent's OpenTelemetry spans;
- ``llm-rubric``, ``model-graded-closedqa``, ``factuality``, ``g-eval``,
  ``answer-relevance``, ``context-faithfulness``, ``conversation-relevance``,
  ``search-rubric``: ``judge`` with a rubric.

An assertion after a ``transform`` (the test's ``options.transform`` and its own) becomes one
``javascript`` check that runs the transform, then the assertion's test
(``interop/promptfoo_transform.py``); where that test has no JavaScript form here, it is
reported. ``similar`` becomes a ``judge`` check when the suite it is imported into
configures a judge (``judge:``), else it is reported.

An assertion of ``weight: 0`` counts for nothing in promptfoo's score: it becomes an
``ignore`` check saying so, never one that could fail the case.

What has no equivalent is not mapped: the case gets an ``ignore`` check whose reason says
why (``similar`` needs an embedding model; trajectory assertions are tool_calls checks to
write by hand; and so on:
``interop/promptfoo_reported.py``), and the report names it. So does a transform with no
JavaScript form to follow, a value read from a script, code that needs Node or a file that
is not there (``interop/promptfoo_scripts.py``), and a regex that cannot be translated.
The shared vocabulary (the context, the result) is ``interop/promptfoo_mapping.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from caseforge.checks.scripts import javascript_syntax_error, needs_node
from caseforge.interop.jsregex import Untranslatable, to_python
from caseforge.interop.nunjucks import Unrenderable
from caseforge.interop.promptfoo_config import file_ref, load_file, read_text
from caseforge.interop.promptfoo_mapping import (
    FIELD,
    Context,
    Mapped,
    NotMapped,
    as_text,
    negated,
    reply,
    short,
)
from caseforge.interop.promptfoo_reported import NEGATED, no_check
from caseforge.interop.promptfoo_scripts import code_check, copy_file
from caseforge.interop.promptfoo_transform import NotComposable, compose

__all__ = [
    "FIELD",
    "JUDGE_NOTE",
    "TRACE_NOTE",
    "TRACE_TYPES",
    "Context",
    "Mapped",
    "equals_code",
    "judged",
    "key_of",
    "map_assertion",
]

JUDGE_NOTE = (
    "model-graded assertions (llm-rubric and the like) became `judge` checks with the rubric. "
    "promptfoo's grading prompts and their 0-1 scores are not caseforge's judge, which asks "
    "its own model (judge: in caseforge.yaml) whether the reply meets the rubric, yes or no; "
    "a grader's provider or rubricPrompt is not carried over."
)

TRACE_TYPES = ("trace-span-count", "trace-span-duration", "trace-error-spans")
TRACE_NOTE = (
    "trace assertions became `spans` checks, which read the agent's OpenTelemetry spans kept "
    "with each case-trial (see the tracing guide for how an agent sends them). Span names "
    "match case-sensitively (promptfoo ignores case); an error span is one whose status is "
    "ERROR (promptfoo also counts an HTTP status of 400 or more, or an error word in the "
    "status message); a case-trial with no spans at all is `incomplete`, where promptfoo's "
    "assertion errors."
)

_TEXT = {
    "contains": ("must_include", False, "all"),
    "icontains": ("must_include", True, "all"),
    "contains-all": ("must_include", False, "all"),
    "icontains-all": ("must_include", True, "all"),
    "contains-any": ("must_include", False, "any"),
    "icontains-any": ("must_include", True, "any"),
    "not-contains": ("must_not_include", False, "all"),
    "not-icontains": ("must_not_include", True, "all"),
    "not-contains-any": ("must_not_include", False, "all"),
    "not-icontains-any": ("must_not_include", True, "all"),
}
_RUBRICS = {
    "llm-rubric": "{value}",
    "model-graded-closedqa": "{value}",
    "search-rubric": "{value}",
    "factuality": "The reply is factually consistent with this reference answer: {value}",
    "model-graded-factuality": "The reply is factually consistent with this reference "
    "answer: {value}",
    "g-eval": "The reply meets these criteria: {value}",
    "answer-relevance": "The reply is relevant to, and answers, the question it was asked: {query}",
    "context-faithfulness": "Every claim the reply makes is supported by this context: {context}",
    "conversation-relevance": "The reply stays relevant to the conversation so far.",
}
_NEEDS_VALUE = {
    "llm-rubric",
    "model-graded-closedqa",
    "search-rubric",
    "factuality",
    "model-graded-factuality",
    "g-eval",
}


def key_of(assertion: Mapping[str, object]) -> str:
    """The check key an assertion wants: its metric, else its type, in ``snake_case``."""
    metric = assertion.get("metric")
    name = metric if isinstance(metric, str) and metric.strip() else str(assertion.get("type"))
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "check"


def map_assertion(
    assertion: Mapping[str, object], context: Context, transforms: Sequence[object] = ()
) -> Mapped:
    """The check for one promptfoo assertion (a mapping with ``type``); ``transforms`` are
    the test's ``options.transform`` (applied before the assertion's own)."""
    kind = str(assertion.get("type"))
    key = key_of(assertion)
    if _weightless(assertion):
        why = "has weight 0: it counts for nothing in promptfoo's score, so it grades nothing here"
        ignored: dict[str, object] = {
            "mode": "ignore",
            "reason": f"promptfoo's {kind} assertion {why}",
        }
        return Mapped(key, ignored, f"{kind}: {why}", why, "weight 0")
    chain = [*transforms, *([assertion["transform"]] if "transform" in assertion else [])]
    kept = [t for t in chain if not _moot(kind, t)]
    try:
        if kept and kind not in ("cost", "latency", *TRACE_TYPES):
            check = _transformed(kind, assertion, kept, context)
            shown = ", then ".join(short(t) for t in kept)
            return Mapped(key, check, f"{kind} after the transform {shown} -> javascript")
        check, notes = _check(kind, assertion, context)
        notes += [
            f"{kind}: the transform {short(t)} changes nothing it grades"
            for t in chain
            if t not in kept
        ]
    except NotMapped as exc:
        ignored = {
            "mode": "ignore",
            "reason": f"promptfoo's {kind} assertion: {exc.reason}",
        }
        return Mapped(key, ignored, f"{kind}: {exc.reason}", exc.reason, exc.kind)
    line = f"{kind} -> {_became(check)}"
    moot = [short(t) for t in chain if t not in kept]
    if moot:
        line += f" (its transform {', '.join(moot)} changes nothing it grades)"
    return Mapped(key, check, line, notes=notes)


def _weightless(assertion: Mapping[str, object]) -> bool:
    """Whether the assertion has ``weight: 0``, which promptfoo leaves out of the score."""
    weight = assertion.get("weight")
    return isinstance(weight, int | float) and not isinstance(weight, bool) and weight == 0


_TRIM = re.compile(r"^\s*(return\s+)?output\s*\.\s*trim\s*\(\s*\)\s*;?\s*$")
_PARSE = re.compile(r"^\s*(return\s+)?JSON\s*\.\s*parse\s*\(\s*output\s*\)\s*;?\s*$")


def judged(kind: str) -> bool:
    """Whether an assertion of this type is graded by a model (a judge check, if mapped)."""
    return kind in _RUBRICS or kind.startswith("similar")


def _moot(kind: str, transform: object) -> bool:
    """Whether ``transform`` changes nothing the assertion grades: white space trimmed
    before a model reads the reply, JSON parsed before ``is-json`` checks it is JSON."""
    if not isinstance(transform, str):
        return False
    if _TRIM.match(transform):
        return judged(kind)
    return bool(_PARSE.match(transform)) and kind in ("is-json", "contains-json")


def _transformed(
    kind: str, assertion: Mapping[str, object], chain: list[object], context: Context
) -> dict[str, object]:
    """An assertion after promptfoo's transforms, as one javascript check."""
    reported = no_check(kind)
    if reported is not None:  # no check at all: its own reason, not the transform's
        raise NotMapped(*reported)
    shown = ", then ".join(short(t) for t in chain)
    for transform in chain:
        if not isinstance(transform, str) or transform.startswith("file://"):
            raise NotMapped(
                "transform",
                f"transforms the output first with a script "
                f"({shown}), which caseforge does not run",
            )
        node = needs_node(transform)
        if node is not None:
            raise NotMapped("needs Node", f"its transform needs Node (`{node}`)")
        wrong = javascript_syntax_error("code", transform)
        if wrong is not None:
            raise NotMapped(
                "code not valid",
                f"its transform {short(transform)} is not valid JavaScript: {wrong}",
            )
    texts = [str(t) for t in chain]
    code: str | None = None
    value: object = None
    if kind in ("javascript", "not-javascript"):
        raw = assertion.get("value")
        if not isinstance(raw, str) or raw.startswith("file://"):
            raise NotMapped(
                "transform",
                f"transforms the output ({shown}) before a script "
                "file, which caseforge cannot join to it",
            )
        node = needs_node(raw)
        if node is not None:
            raise NotMapped("needs Node", f"needs Node (`{node}`)")
        wrong = javascript_syntax_error("code", raw)
        if wrong is not None:
            raise NotMapped("code not valid", f"not valid JavaScript: {wrong}")
        code = raw
    else:
        value = _value(kind, assertion, context)
        if isinstance(value, str) and kind.endswith(("-any", "-all")):
            value = _split(value)
    try:
        composed = compose(texts, kind, value, code)
    except NotComposable:
        raise NotMapped(
            "transform",
            f"transforms the output first ({shown}), and a {kind} "
            "assertion has no JavaScript form to follow it: rewrite it as a "
            "javascript check",
        ) from None
    wrong = javascript_syntax_error("code", composed)
    if wrong is not None:
        raise NotMapped(
            "code not valid", f"not valid JavaScript with its transforms ({shown}): {wrong}"
        )
    check: dict[str, object] = {"mode": "javascript", "code": composed}
    threshold = assertion.get("threshold")
    if kind == "javascript" and isinstance(threshold, int | float):
        check["threshold"] = threshold
    return reply(check)


def _became(check: Mapping[str, object]) -> str:
    extra = [
        f"{k}: {as_text(check[k])}"
        for k in ("match", "case_sensitive", "negate", "find")
        if k in check
    ]
    return ", ".join([str(check["mode"]), *extra])


def _check(
    kind: str, assertion: Mapping[str, object], context: Context
) -> tuple[dict[str, object], list[str]]:
    notes: list[str] = []
    if kind.startswith("similar") and context.judge:
        return _similar(assertion, context)
    if kind in TRACE_TYPES:
        return _spans(kind, _value(kind, assertion, context)), notes
    if kind.removeprefix("not-") in TRACE_TYPES:
        raise NotMapped(
            "negated trace assertion",
            "a negated trace assertion: a spans check says what must hold, not what must not",
        )
    reported = no_check(kind)
    if reported is not None:
        raise NotMapped(*reported)
    if kind in ("javascript", "python"):
        return code_check(kind, assertion, context), notes
    if kind in ("not-javascript", "not-python"):
        raise NotMapped(
            "negated code",
            "a negated code assertion: return the opposite verdict from the code instead",
        )
    value = _value(kind, assertion, context)
    if kind in _TEXT or kind in ("not-contains-all", "not-icontains-all"):
        return _text(kind, value), notes
    if kind in ("equals", "not-equals"):
        return _equals(kind, value), notes
    if kind in ("starts-with", "not-starts-with"):
        if not isinstance(value, str | int | float) or value == "":
            raise NotMapped("no value", "needs a text value")
        check = reply({"mode": "regex", "value": "\\A" + re.escape(str(value))})
        return negated(check, kind), notes
    if kind in ("regex", "not-regex"):
        if not isinstance(value, str) or not value:
            raise NotMapped("no value", "needs a pattern")
        try:
            pattern = to_python(value)
        except Untranslatable as exc:
            raise NotMapped(
                "regex not translated",
                f"the JavaScript pattern {short(value)} "
                f"cannot be said the same way in Python: {exc}",
            ) from None
        return negated(reply({"mode": "regex", "value": pattern}), kind), notes
    if kind in ("is-json", "contains-json"):
        return _json(kind, value, assertion.get("value"), context), notes
    if kind == "not-is-json":
        code = "(() => { try { JSON.parse(output); return false; } catch (e) { return true; } })()"
        return reply({"mode": "javascript", "code": code}), notes
    if kind == "is-xml" and value is None:
        return reply({"mode": "python", "code": _XML}), notes
    if kind in ("cost", "latency"):
        return _limit(kind, assertion), notes
    if kind == "word-count":
        return reply({"mode": "javascript", "code": _word_count(value)}), notes
    if kind in _RUBRICS:
        return _judge(kind, value, assertion, context)
    if kind.startswith("not-") and kind[4:] in _RUBRICS:
        raise NotMapped("negated model-graded", NEGATED)
    if kind == "is-xml":
        raise NotMapped("markup check", "is-xml with required elements: no caseforge mode")
    raise NotMapped("unknown type", "not a promptfoo assertion type caseforge knows")


def _spans(kind: str, value: object) -> dict[str, object]:
    """A trace assertion as a ``spans`` check."""
    if (
        kind == "trace-error-spans"
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    ):
        value = {"max_count": value}
    if value is None and kind == "trace-error-spans":
        value = {}
    if not isinstance(value, Mapping):
        raise NotMapped("no value", "needs a value object ({pattern, …})")
    pattern = value.get("pattern", "*")
    if not isinstance(pattern, str) or not pattern.strip():
        raise NotMapped("no value", "needs a span name pattern")
    if kind == "trace-span-count":
        low, high = value.get("min"), value.get("max")
        if not all(v is None or _count(v) for v in (low, high)):
            raise NotMapped("no value", "min and max must be whole numbers of spans")
        count: dict[str, object] = {"min": int(low) if low is not None else 0}
        if high is not None:
            count["max"] = int(high)
        return {"mode": "spans", "must_have": [{"name": pattern, "count": count}]}
    if kind == "trace-span-duration":
        longest, percentile = value.get("max"), value.get("percentile")
        if not _number(longest):
            raise NotMapped("no value", "needs `max`, the longest duration in milliseconds")
        matcher: dict[str, object] = {
            "name": pattern,
            "count": {"min": 0},  # promptfoo passes when no span matches
            "max_duration_ms": longest,
        }
        if percentile is not None:
            if not _number(percentile) or not 0 < float(percentile) <= 100:
                raise NotMapped("no value", "its percentile is not a number from 0 to 100")
            matcher["percentile"] = percentile
        return {"mode": "spans", "must_have": [matcher]}
    most, share = value.get("max_count"), value.get("max_percentage")
    if most is None and share is not None:
        raise NotMapped(
            "error share",
            "bounds the share of error spans (max_percentage); a spans check bounds their "
            "number (max_errors)",
        )
    most = 0 if most is None else most
    if not _count(most):
        raise NotMapped("no value", "max_count must be a whole number of spans")
    limit: object = int(most) if pattern == "*" else {pattern: int(most)}
    return {"mode": "spans", "max_errors": limit}


def _count(value: object) -> bool:
    return _number(value) and float(value) >= 0 and float(value).is_integer()  # type: ignore[arg-type]


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _similar(
    assertion: Mapping[str, object], context: Context
) -> tuple[dict[str, object], list[str]]:
    """``similar`` where the suite has a judge: a judge check that the reply means the same."""
    value = _value("similar", assertion, context)
    if not isinstance(value, str) or not value.strip():
        raise NotMapped("no value", "needs the text the reply should mean")
    threshold = assertion.get("threshold", 0.75)
    note = (
        f"similar: promptfoo compares embeddings (cosine similarity of at least "
        f"{threshold}); the suite's judge decides whether the reply means the same"
    )
    rubric = f"The reply means the same as this text: {value}"
    return reply({"mode": "judge", "rubric": rubric}), [note]


def _value(kind: str, assertion: Mapping[str, object], context: Context) -> object:
    """The assertion's value, rendered with the test's vars; a ``file://`` value read."""
    value = assertion.get("value")
    if isinstance(value, str) and value.startswith("file://"):
        ref = file_ref(value, context.base)
        if ref.suffix in (".js", ".cjs", ".mjs", ".ts", ".py"):
            raise NotMapped(
                "value from a script",
                f"its value comes from a script ({value}), which caseforge does not run to import",
            )
        if not ref.path.is_file():
            raise NotMapped("missing file", f"its value is in {value}: no such file")
        value = (
            load_file(ref.path)
            if ref.suffix in (".json", ".yaml", ".yml")
            else read_text(ref.path).strip()
        )
    return _rendered(value, context)


def _rendered(value: object, context: Context) -> object:
    try:
        if isinstance(value, str):
            return context.render(value)
        if isinstance(value, list):
            return [context.render(v) if isinstance(v, str) else v for v in value]
    except Unrenderable as exc:
        raise NotMapped(
            "template", f"its value uses more Nunjucks than {{{{var}}}} ({exc})"
        ) from None
    return value


def _split(value: str) -> list[str]:
    """A comma-separated value as promptfoo splits it (double quotes keep a comma)."""
    parts = re.findall(r'\s*("(?:[^"\\]|\\.)*"|[^,]*)\s*(?:,|$)', value)
    out = [p.strip() for p in parts]
    out = [p[1:-1].replace('\\"', '"') if len(p) > 1 and p[0] == p[-1] == '"' else p for p in out]
    while out and out[-1] == "" and len(out) > 1:
        out.pop()
    return out


def _text(kind: str, value: object) -> dict[str, object]:
    listed = kind.endswith(("-any", "-all"))
    if listed and isinstance(value, str):
        value = _split(value)
    values = value if isinstance(value, list) else [value]
    texts = [as_text(v) for v in values if v is not None]
    if not texts or any(t == "" for t in texts):
        raise NotMapped("no value", "needs a non-empty value")
    if kind in ("not-contains-all", "not-icontains-all"):
        lower = ".toLowerCase()" if kind == "not-icontains-all" else ""
        listed_js = json.dumps([t.lower() if lower else t for t in texts], ensure_ascii=False)
        code = f"!{listed_js}.every((v) => String(output){lower}.includes(v))"
        return reply({"mode": "javascript", "code": code})
    mode, insensitive, match = _TEXT[kind]
    check: dict[str, object] = {"mode": mode, "values": texts}
    if match == "any":
        check["match"] = "any"
    if insensitive:
        check["case_sensitive"] = False
    return reply(check)


def _equals(kind: str, value: object) -> dict[str, object]:
    if value is None:
        raise NotMapped("no value", "needs a value")
    if isinstance(value, dict | list):
        return reply({"mode": "python", "code": equals_code(value, kind == "not-equals")})
    return negated(reply({"mode": "exact", "value": as_text(value)}), kind)


def equals_code(value: object, negate: bool = False) -> str:
    """Python code that compares the output, parsed as JSON, with ``value`` (promptfoo's
    ``equals`` with an object; output that is not JSON is not equal)."""
    literal = json.dumps(json.dumps(value, ensure_ascii=False), ensure_ascii=False)
    body = f"__import__('json').loads(output) == __import__('json').loads({literal})"
    return (
        "try:\n"
        f"    return {'not (' + body + ')' if negate else body}\n"
        "except ValueError:\n"
        f"    return {negate}"
    )


def _json(kind: str, value: object, raw_value: object, context: Context) -> dict[str, object]:
    check: dict[str, object] = {"mode": "json"}
    if kind == "contains-json":
        check["find"] = True
    scheme = isinstance(raw_value, str) and raw_value.startswith("file://")
    ref = file_ref(raw_value, context.base) if scheme and isinstance(raw_value, str) else None
    if ref is not None and ref.suffix in (".json", ".yaml", ".yml"):
        # A schema file (read by _value already, so it is there): copied, and named.
        check["schema"] = copy_file(ref.path, read_text(ref.path), "schemas", context)
        return reply(check)
    raw = value
    if isinstance(raw, str) and raw.strip():
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        try:
            raw = YAML(typ="safe", pure=True).load(raw)
        except YAMLError:
            raise NotMapped("schema not read", "its schema is neither JSON nor YAML") from None
    if isinstance(raw, dict):
        check["schema"] = raw
    elif raw not in (None, ""):
        raise NotMapped("schema not read", "its value is not a JSON Schema")
    return reply(check)


_XML = (
    "import xml.etree.ElementTree as ET\n"
    "try:\n"
    "    ET.fromstring(str(output).strip())\n"
    "except ET.ParseError:\n"
    "    return False\n"
    "return True"
)


def _word_count(value: object) -> str:
    count = "String(output).trim().split(/\\s+/).filter(Boolean).length"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{count} === {as_text(value)}"
    if isinstance(value, dict) and {"min", "max"} & set(value):
        tests = []
        if isinstance(value.get("min"), int | float):
            tests.append(f"n >= {as_text(value['min'])}")
        if isinstance(value.get("max"), int | float):
            tests.append(f"n <= {as_text(value['max'])}")
        if tests:
            return f"((n) => {' && '.join(tests)})({count})"
    raise NotMapped("no value", "word-count needs a number or {min, max}")


def _limit(kind: str, assertion: Mapping[str, object]) -> dict[str, object]:
    threshold = assertion.get("threshold")
    if not isinstance(threshold, int | float) or isinstance(threshold, bool) or threshold < 0:
        raise NotMapped(
            "no threshold", f"a {kind} assertion needs a threshold (promptfoo fails without one)"
        )
    if kind == "cost":
        return {"mode": "cost", "max_usd": threshold}
    return {"mode": "latency", "max_ms": threshold}


def _judge(
    kind: str, value: object, assertion: Mapping[str, object], context: Context
) -> tuple[dict[str, object], list[str]]:
    if kind in _NEEDS_VALUE and (value is None or value == "" or value == []):
        raise NotMapped("no value", "needs a rubric")
    if isinstance(value, list):
        value = "; ".join(as_text(v) for v in value)
    elif isinstance(value, dict):
        value = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, str):
        value = value.strip()  # `llm-rubric: …` in a CSV keeps the space after the colon
    variables = context.variables
    query = variables.get("query", variables.get("question", "the prompt"))
    if kind == "context-faithfulness" and (
        "contextTransform" in assertion or "context" not in variables
    ):
        raise NotMapped(
            "grades the retrieved context",
            "its context comes from contextTransform or a var caseforge does not have",
        )
    rubric = _RUBRICS[kind].format(
        value=value, query=as_text(query), context=as_text(variables.get("context"))
    )
    notes = []
    threshold = assertion.get("threshold")
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        notes.append(
            f"{kind}: promptfoo passes it at a grader score of {threshold:g} or more; "
            "caseforge's judge says yes or no"
        )
    if "provider" in assertion or "rubricPrompt" in assertion:
        notes.append(f"{kind}: its own grader (provider or rubricPrompt) is not carried over")
    if kind == "search-rubric":
        notes.append(
            "search-rubric: promptfoo's grader searches the web; caseforge's judge does not"
        )
    return reply({"mode": "judge", "rubric": rubric}), notes
