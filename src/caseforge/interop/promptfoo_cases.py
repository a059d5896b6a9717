"""One promptfoo test as caseforge cases: ``defaultTest`` merged in, its vars (expanded), its
prompt rendered, its assertions mapped.

The merge is promptfoo's own (``prepareTestCaseForEval``): ``defaultTest``'s assertions come
first (unless the test's ``options.disableDefaultAsserts``), its vars, options and metadata
under the test's, its ``threshold`` when the test has none. A var whose value is a list
makes one case per value (per combination of several), as promptfoo expands it, unless
``options.disableVarExpansion``.

The case:

- ``input``: the vars (a ``file://`` var's text file read, a JSON or YAML one parsed), and
  ``prompt``: the one prompt rendered with them (``__prefix``/``__suffix`` around it);
- ``expect``: a check per assertion (``interop/promptfoo_asserts.py``), or, for a test with
  none, an ``ignore`` check saying so;
- ``provenance``: ``description`` (which code checks see as ``context.test.description``),
  ``metadata``, and under ``promptfoo`` what only promptfoo reads: ``threshold``, the
  assertions that were not mapped (by check key, so an export writes them back), the test's
  other options, its provider filters.

Whatever of the test the case does not hold as promptfoo meant it goes into the report.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.interop.ids import join, slugify
from caseforge.interop.nunjucks import Unrenderable, render, render_prompt, text_of
from caseforge.interop.promptfoo_asserts import Context, Mapped, key_of, map_assertion
from caseforge.interop.promptfoo_config import Prompt, failure, file_ref, load_file, read_text
from caseforge.interop.promptfoo_tests import SourceTest

NO_ASSERTIONS = (
    "the promptfoo test has no assertions: promptfoo records its output without grading it"
)
_OWN_OPTIONS = {
    "prefix",
    "suffix",
    "transform",
    "postprocess",
    "disableDefaultAsserts",
    "disableVarExpansion",
}
_GRADER_OPTIONS = {"provider", "rubricPrompt", "factuality"}
_QUIET_OPTIONS = {"runSerially", "disableConversationVar"}  # scheduling: kept, not noted
_OPTION_NOTES = {
    "transformVars": "promptfoo rewrites the vars with this code before rendering the prompt; "
    "not run: the input holds the vars as written",
    "storeOutputAs": "promptfoo stores the output in a var that later tests read; caseforge "
    "cases share nothing",
}
_TEXT_VARS = (".txt", ".md", ".markdown", ".html", ".xml", ".csv")
_DATA_VARS = (".json", ".yaml", ".yml")


@dataclass(frozen=True)
class Outcome:
    """What became of one assertion: where (the item), its type, mapped or not, and the
    reason's kind when not."""

    where: str
    type: str
    mapped: bool
    kind: str = ""


@dataclass
class Built:
    """One case made from a test (a test with list vars makes several)."""

    where: str
    case: dict[str, object]
    slug: str
    original_id: object
    mapped: list[str] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (reason kind, text)
    outcomes: list[Outcome] = field(default_factory=list)
    unmapped: dict[str, object] = field(default_factory=dict)  # by check key
    weights: dict[str, object] = field(default_factory=dict)  # a mapped check's, by its key


@dataclass
class Setting:
    """What every test of one import shares: the one prompt (``None``: none or several),
    the config's folder, the suite files the checks use (filled as tests are built), and
    whether the suite configures a judge."""

    prompt: Prompt | None
    base: Path
    files: dict[str, str] = field(default_factory=dict)
    judge: bool = False


def merged(test: Mapping[str, object], default: Mapping[str, object]) -> dict[str, object]:
    """The test with ``defaultTest`` merged in, as promptfoo merges it."""
    options = {**_mapping(default.get("options")), **_mapping(test.get("options"))}
    asserts = [] if options.get("disableDefaultAsserts") is True else _list(default.get("assert"))
    out: dict[str, object] = {**{k: v for k, v in default.items() if k != "description"}, **test}
    out["assert"] = asserts + _list(test.get("assert"))
    out["options"] = options
    out["metadata"] = {**_mapping(default.get("metadata")), **_mapping(test.get("metadata"))}
    if test.get("threshold") is None and default.get("threshold") is not None:
        out["threshold"] = default["threshold"]
    out["vars"] = {**_mapping(default.get("vars")), **_mapping(test.get("vars"))}
    return out


def _mapping(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def check_shape(source: SourceTest, default: Mapping[str, object]) -> None:
    """A test promptfoo would not read either is an error naming its file, line and field."""
    test = source.test
    for name, part in (("the test", test), ("defaultTest", default)):
        if "assert" in part and part["assert"] is not None and not isinstance(part["assert"], list):
            where = [*source.parts, "assert"] if name == "the test" else ["defaultTest", "assert"]
            raise failure(source.file, where, "a list of assertions")
    for index, assertion in enumerate(_list(test.get("assert"))):
        if not isinstance(assertion, dict) or not isinstance(assertion.get("type"), str):
            raise failure(
                source.file,
                [*source.parts, "assert", index],
                "an assertion is a mapping with a `type`",
            )
    variables = test.get("vars")
    if variables is not None and not isinstance(variables, dict | str | list):
        raise failure(
            source.file,
            [*source.parts, "vars"],
            "vars is a mapping of names to values (or a file:// path)",
        )


def build(source: SourceTest, test: dict[str, object], setting: Setting) -> list[Built]:
    """The cases of one merged test (several when a var is a list)."""
    notes: list[tuple[str, str]] = []
    variables = _variables(test, setting.base, notes)
    own_vars = set(_mapping(source.test.get("vars")))  # the test's own, not defaultTest's
    options = _mapping(test.get("options"))
    combos = _expand(variables) if options.get("disableVarExpansion") is not True else []
    if len(combos) <= 1:
        chosen_vars = combos[0] if combos else variables
        return [_one(source.where, test, chosen_vars, setting, list(notes), "", own_vars)]
    built = []
    for number, combo in enumerate(combos, 1):
        chosen = {k: v for k, v in combo.items() if _expands(variables.get(k))}
        shown = ", ".join(f"{k}={text_of(v)[:30]}" for k, v in chosen.items())
        suffix = join(*(slugify(text_of(v), "") for v in chosen.values()))
        one = _one(f"{source.where} #{number}", test, combo, setting, list(notes), suffix, own_vars)
        one.mapped.insert(0, f"vars: a list expanded, as promptfoo does: {shown}")
        built.append(one)
    return built


def _expands(value: object) -> bool:
    """Whether promptfoo makes a test of each item of a var: a list whose first item is a
    string (a list of numbers or objects is one value, as promptfoo passes it)."""
    return isinstance(value, list) and bool(value) and isinstance(value[0], str)


def _expand(variables: dict[str, object]) -> list[dict[str, object]]:
    listed = {k: v for k, v in variables.items() if isinstance(v, list) and _expands(v)}
    if not listed:
        return [variables]
    names = list(listed)
    return [
        {**variables, **dict(zip(names, values, strict=True))}
        for values in itertools.product(*(listed[n] for n in names))
    ]


def _variables(
    test: Mapping[str, object], base: Path, notes: list[tuple[str, str]]
) -> dict[str, object]:
    raw = test.get("vars")
    if isinstance(raw, str | list) and not isinstance(raw, dict):
        notes.append(
            (
                "vars from a file",
                f"vars: {raw!r} (vars read from files): not read; write them into the test",
            )
        )
        return {}
    variables: dict[str, object] = {}
    for name, value in _mapping(raw).items():
        if isinstance(value, str) and value.startswith("file://"):
            variables[name] = _file_var(name, value, base, notes)
        else:
            variables[name] = value
    return variables


def _file_var(name: str, value: str, base: Path, notes: list[tuple[str, str]]) -> object:
    """A ``file://`` var as promptfoo loads it: a text file's text, JSON/YAML parsed; other
    files (images, PDFs, scripts) stay references, reported."""
    ref = file_ref(value, base)
    if not ref.path.is_file():
        notes.append(("missing file", f"vars.{name}: {value}: no such file; kept as the reference"))
        return value
    if ref.suffix in _TEXT_VARS and ref.function is None:
        return read_text(ref.path)
    if ref.suffix in _DATA_VARS:
        return load_file(ref.path)
    notes.append(
        (
            "file var",
            f"vars.{name}: {value}: promptfoo loads this file (an image, a "
            "PDF, a script's result) into the var; the case keeps the reference for the "
            "agent to read",
        )
    )
    return value


def _one(
    where: str,
    test: dict[str, object],
    variables: dict[str, object],
    setting: Setting,
    notes: list[tuple[str, str]],
    suffix: str,
    own_vars: set[str],
) -> Built:
    options = _mapping(test.get("options"))
    description = test.get("description")
    described = isinstance(description, str) and bool(description.strip())
    case_input = dict(variables)
    built = Built(where, {}, "", None, notes=notes)
    prompt = setting.prompt
    if prompt is not None and prompt.template is not None:
        rendered = _prompt(prompt, variables, options, built)
        if rendered is not None:
            if "prompt" in variables and variables["prompt"] != rendered:
                built.notes.append(
                    (
                        "var named prompt",
                        "vars.prompt: the rendered prompt "
                        "takes its place in input.prompt; the var is kept in "
                        "provenance.vars",
                    )
                )
            case_input["prompt"] = rendered
    expect = _expect(test, variables, setting, built)
    provenance: dict[str, object] = {}
    if described:
        provenance["description"] = str(description).strip()
    if "prompt" in variables and case_input.get("prompt") != variables["prompt"]:
        provenance["vars"] = {"prompt": variables["prompt"]}
    if _mapping(test.get("metadata")):
        provenance["metadata"] = test["metadata"]
    own = _own(test, options, built)
    if own:
        provenance["promptfoo"] = own
    built.case = {"input": case_input, "expect": expect, "provenance": provenance}
    named = {k: v for k, v in variables.items() if k in own_vars} or variables
    base_slug = slugify(description, "") if described else _vars_slug(named)
    built.slug = (join(base_slug, suffix) if described else base_slug) or "test"
    return built


def _vars_slug(variables: Mapping[str, object]) -> str:
    texts = [text_of(v) for v in variables.values() if isinstance(v, str | int | float)]
    slug = slugify(" ".join(t for t in texts if not t.startswith("file://"))[:200], "")
    return slug[:48].rsplit("-", 1)[0] if len(slug) > 48 else slug


def _prompt(
    prompt: Prompt, variables: Mapping[str, object], options: Mapping[str, object], built: Built
) -> str | None:
    assert prompt.template is not None
    try:
        text, missing = render_prompt(prompt.template, variables)
    except Unrenderable as exc:
        built.notes.append(
            (
                "prompt not rendered",
                f"prompt: {exc}: not rendered; the agent renders the configuration's template",
            )
        )
        return None
    if missing:
        built.notes.append(
            (
                "missing var",
                f"prompt: no var {', '.join(missing)}: rendered as nothing, as promptfoo does",
            )
        )
    prefix, suffix = options.get("prefix"), options.get("suffix")
    before = prefix if isinstance(prefix, str) else ""
    after = suffix if isinstance(suffix, str) else ""
    return before + text + after


def _expect(
    test: Mapping[str, object], variables: Mapping[str, object], setting: Setting, built: Built
) -> dict[str, object]:
    asserts = [a for a in _list(test.get("assert")) if isinstance(a, dict)]
    if not asserts:
        built.mapped.append("no assertions -> an ignore check saying so")
        return {"reply": {"mode": "ignore", "reason": NO_ASSERTIONS}}

    def rendered(text: str) -> str:
        return render(text, variables)[0]

    context = Context(setting.base, variables, rendered, setting.files, setting.judge)
    options = _mapping(test.get("options"))
    transform = options.get("transform", options.get("postprocess"))
    expect: dict[str, object] = {}
    unmapped: dict[str, object] = {}
    taken: Counter[str] = Counter()
    for index, assertion in enumerate(asserts, 1):
        kind = str(assertion.get("type"))
        # the test's options.transform runs before every assertion's own transform
        before = [transform] if transform is not None and kind not in ("cost", "latency") else []
        mapped: Mapped = map_assertion(assertion, context, before)
        taken[mapped.key] += 1
        key = mapped.key if taken[mapped.key] == 1 else f"{mapped.key}_{taken[mapped.key]}"
        while key in expect:
            taken[mapped.key] += 1
            key = f"{mapped.key}_{taken[mapped.key]}"
        expect[key] = mapped.check
        built.outcomes.append(Outcome(built.where, kind, mapped.mapped, mapped.kind))
        weight = assertion.get("weight")
        if mapped.mapped and isinstance(weight, int | float) and not isinstance(weight, bool):
            built.weights[key] = weight  # for an export: promptfoo scores with it
        if mapped.mapped:
            built.mapped.append(
                f"assert {index}: {mapped.line}" + (f" ({key})" if key != key_of(assertion) else "")
            )
        else:
            unmapped[key] = assertion
            built.notes.append(
                (
                    mapped.kind,
                    f"assert {index}: {mapped.line}; an ignore check "
                    f"{key} says so, the assertion is kept in provenance",
                )
            )
        built.notes += [("", note) for note in mapped.notes]
    built.unmapped = unmapped
    return expect


def _own(
    test: Mapping[str, object], options: Mapping[str, object], built: Built
) -> dict[str, object]:
    """What only promptfoo reads, kept for the report and for an export."""
    own: dict[str, object] = {}
    if built.unmapped:
        own["unmapped"] = built.unmapped
    if built.weights:
        own["weights"] = built.weights
    weights: dict[str, object] = {}
    seen: Counter[str] = Counter()
    for assertion in _list(test.get("assert")):
        if not isinstance(assertion, dict):
            continue
        name = str(assertion.get("metric") or assertion.get("type"))
        seen[name] += 1  # a repeated type is numbered, as its check key is
        if isinstance(assertion.get("weight"), int | float):
            weights[name if seen[name] == 1 else f"{name}_{seen[name]}"] = assertion["weight"]
    threshold = test.get("threshold")
    if threshold is not None:
        # Without a threshold promptfoo too passes a test when every assertion passes: the
        # weights then change its score, not its verdict.
        own["threshold"] = threshold
        weighted = f", weights {json.dumps(weights)}" if weights else ""
        built.notes.append(
            (
                "weighted threshold",
                f"scoring: promptfoo passes this test when "
                f"the weighted mean of its assertions' scores reaches the threshold "
                f"(a threshold of {threshold}{weighted}); caseforge passes a case when every "
                "check passes",
            )
        )
    others = {k: v for k, v in options.items() if k not in _OWN_OPTIONS}
    graders = sorted(set(others) & _GRADER_OPTIONS)
    if graders:
        built.notes.append(
            (
                "own grader",
                f"options.{', options.'.join(graders)}: promptfoo's "
                "grader settings; caseforge's judge checks use the suite's judge "
                "(judge: in caseforge.yaml)",
            )
        )
    if others:
        own["options"] = others
    for name in sorted(set(others) & set(_OPTION_NOTES)):
        built.notes.append((name, f"options.{name}: {_OPTION_NOTES[name]}"))
    rest = sorted(set(others) - _GRADER_OPTIONS - _QUIET_OPTIONS - set(_OPTION_NOTES))
    if rest:
        built.notes.append(
            (
                "test options",
                f"options.{', options.'.join(rest)}: kept in provenance.promptfoo.options "
                "(promptfoo hands them to the provider)",
            )
        )
    for key, kind, why in (
        (
            "providers",
            "provider filter",
            "runs only on these providers in promptfoo; caseforge "
            "runs every case in every configuration",
        ),
        ("prompts", "prompt filter", "runs only with these prompts in promptfoo"),
        ("provider", "test provider", "its own provider in promptfoo"),
        (
            "providerOutput",
            "providerOutput",
            "a fixed output promptfoo grades without calling "
            "the provider; caseforge runs the agent",
        ),
        (
            "assertScoringFunction",
            "scoring function",
            "promptfoo scores its assertions with "
            "this function; caseforge passes a case when every check passes",
        ),
    ):
        if test.get(key) is not None:
            own[key] = test[key]
            built.notes.append((kind, f"{key}: {why}; kept in provenance.promptfoo.{key}"))
    return own
