"""``caseforge export promptfoo``: a suite as a promptfoo config, as far as promptfoo can say
it, with what it cannot listed (printed, and as comments at the top of the file).

- ``providers``: each configuration's ``provider`` (``label``, ``options`` as its
  ``config``); a configuration without one is listed.
- ``prompts``: the configurations' ``prompt`` templates (with their ``prompt_label``), else
  ``{{prompt}}``, which promptfoo renders with each test's ``prompt`` var, else
  ``{{FIELD}}`` when every case's input is that one field (cases without a prompt otherwise
  are listed).
- ``tests``: a test per case: ``description`` (``provenance.description``, else the note,
  else the id), ``vars`` (the input; without ``prompt`` when the prompts are templates that
  render it), ``metadata`` and what the import kept of promptfoo's own in
  ``provenance.promptfoo`` (``threshold``, options, provider filters), and an assertion per
  check (the reverse of ``interop/promptfoo_asserts.py``):

  - ``exact`` on text: ``equals`` (``negate``: ``not-equals``); with ``any_of`` or
    ``case_sensitive: false``: ``javascript``; an object value: ``python`` comparing the
    parsed JSON;
  - ``must_include``: ``contains``, ``contains-all``, ``contains-any`` (``match: any``),
    ``i…`` when ``case_sensitive: false``; ``must_not_include``: ``not-contains``,
    ``not-contains-any`` (``i…``);
  - ``regex``: ``starts-with`` (``\\A`` and a literal), else ``regex`` in JavaScript's
    dialect; with ``case_sensitive: false``, ``javascript`` with the ``i`` flag;
  - ``json``: ``is-json`` / ``contains-json``, the schema as ``value``;
  - ``number``: ``javascript``, within the tolerance;
  - ``cost``, ``latency``: the same, the limit as ``threshold``;
  - ``javascript``, ``python``: the same, the code or the ``file://`` script;
  - ``judge``: ``llm-rubric``, the rubric or the facts to convey;
  - ``ignore``: nothing (it grades nothing), except one the import made of an assertion it
    could not map: that assertion again.

  The check's key is the assertion's ``metric`` (left out when it is the type's own name),
  so an import gives it back.

Not expressed, and listed: a check on another field than the reply (promptfoo grades the
output text), on one turn, ``exact_set``, ``outcome``, ``tool_calls``, the suite's own modes,
``normalize`` and ``word``; a conversation case.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.case.load import LoadedCase, load_suite
from caseforge.case.model import Case
from caseforge.checks.builtin import (
    ExactCheck,
    IgnoreCheck,
    JudgeCheck,
    MustIncludeCheck,
    MustNotIncludeCheck,
    NumberCheck,
    RegexCheck,
)
from caseforge.checks.json_mode import JsonCheck
from caseforge.checks.measures import CostCheck, LatencyCheck
from caseforge.checks.scripts import JavascriptCheck, PythonCheck
from caseforge.checks.spans import SpansCheck
from caseforge.errors import DatasetError
from caseforge.files import write_atomic, yaml_text
from caseforge.interop.jsregex import to_javascript
from caseforge.interop.promptfoo_asserts import FIELD, equals_code, key_of

DEFAULT_PROMPT = "{{prompt}}"
_KEPT = (
    "threshold",
    "options",
    "providers",
    "prompts",
    "provider",
    "providerOutput",
    "assertScoringFunction",
)


class NotExpressed(DatasetError):
    """A check promptfoo cannot say; the message says why."""


@dataclass
class PromptfooExport:
    """What an export wrote: the file, its tests and assertions, what it could not express
    (one line each), and notes on where promptfoo reads an assertion differently."""

    path: Path
    tests: int = 0
    assertions: int = 0
    lost: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def export_promptfoo(suite_dir: Path, out: Path) -> PromptfooExport:
    """Write ``out`` (a promptfoo config) from the suite; the file appears whole or not at all.

    Raises:
        CaseforgeError: the suite does not load (each problem with its file and line).
    """
    suite = load_suite(suite_dir)
    result = PromptfooExport(out)
    configs = suite.config.configs
    prompts = _prompts(configs.values())
    if prompts == [DEFAULT_PROMPT]:
        prompts = _field_prompt(suite.cases, result) or prompts
    templated = prompts != [DEFAULT_PROMPT]
    config: dict[str, object] = {}
    if suite.config.description:
        config["description"] = suite.config.description
    config["prompts"] = prompts
    config["providers"] = _providers(configs, result)
    if suite.config.trials > 1:
        config["evaluateOptions"] = {"repeat": suite.config.trials}
    tests = []
    for loaded in suite.cases:
        where = _shown(loaded.path, suite.suite_dir)
        test = _test(loaded.case, where, suite.suite_dir, out.parent, templated, result)
        if test is not None and templated:
            _check_rendering(loaded.case, where, prompts, result)
        if test is not None:
            tests.append((str(test["description"]), loaded.case.id, test))
    # By description (an import keeps it; case ids it may change): a round trip keeps order.
    tests.sort(key=lambda entry: (entry[0], entry[1]))
    config["tests"] = [test for _, _, test in tests]
    result.tests = len(tests)
    write_atomic(out, _header(suite.config.name, result) + yaml_text(config))
    return result


def _check_rendering(
    case: Case, where: str, prompts: list[object], result: PromptfooExport
) -> None:
    """A case's ``input.prompt`` that no prompt template renders from its vars is not what
    promptfoo will send: it is listed, never dropped silently."""
    from caseforge.interop.nunjucks import Unrenderable, render_prompt

    sent = case.input.get("prompt")
    if not isinstance(sent, str):
        return
    values = {k: v for k, v in case.input.items() if k != "prompt"}
    for prompt in prompts:
        template = prompt.get("raw") if isinstance(prompt, dict) else prompt
        if not isinstance(template, str):
            continue
        try:
            if render_prompt(template, values)[0] == sent:
                return
        except Unrenderable:
            return  # a template promptfoo renders its own way: not ours to judge
    shown = sent if len(sent) <= 40 else sent[:39] + "…"
    result.lost.append(
        f"{where}: input.prompt {shown!r} is not what the prompt template renders from the "
        "case's vars; promptfoo sends the template's rendering"
    )


def _shown(path: Path, suite_dir: Path) -> str:
    try:
        return path.relative_to(suite_dir).as_posix()
    except ValueError:
        return str(path)


def _field_prompt(cases: Iterable[LoadedCase], result: PromptfooExport) -> list[object] | None:
    """With no template in the configurations and no ``prompt`` in the inputs (a suite
    imported from Inspect or a table, or written by hand): ``{{FIELD}}`` when every
    single-turn case's input is that one field; else each case without a ``prompt`` is
    listed, since promptfoo would send it an empty prompt."""
    inputs = [(c, c.case.input) for c in cases if c.case.conversation is None]
    if any("prompt" in given for _, given in inputs):
        lacking = [c for c, given in inputs if "prompt" not in given]
    else:
        names = {tuple(given) for _, given in inputs}
        if len(names) == 1 and len(next(iter(names))) == 1:
            (name,) = next(iter(names))
            result.notes.append(
                f"prompts: {{{{{name}}}}}, the one input field of every case (the suite's "
                "configurations have no prompt template): edit it to the prompt you send"
            )
            return ["{{" + name + "}}"]
        lacking = [c for c, _ in inputs]
    if lacking:
        shown = ", ".join(c.case.id for c in lacking[:3]) + (", …" if len(lacking) > 3 else "")
        result.lost.append(
            f"{len(lacking)} case(s) ({shown}) have no input.prompt, and the configurations no "
            "prompt template: promptfoo would send them an empty prompt; write one under "
            "prompts: from their vars"
        )
    return None


def _prompts(configs: Iterable[dict[str, object]]) -> list[object]:
    prompts: list[object] = []
    for values in configs:
        template = values.get("prompt")
        if not isinstance(template, str):
            continue
        label = values.get("prompt_label")
        prompt: object = {"raw": template, "label": label} if isinstance(label, str) else template
        if prompt not in prompts:
            prompts.append(prompt)
    return prompts or [DEFAULT_PROMPT]


def _providers(configs: dict[str, dict[str, object]], result: PromptfooExport) -> list[object]:
    providers: list[object] = []
    for name, values in configs.items():
        pid = values.get("provider")
        if not isinstance(pid, str):
            result.lost.append(
                f"configuration {name}: names no promptfoo provider (`provider:`); "
                "add the provider to call"
            )
            continue
        provider: dict[str, object] = {"id": pid}
        label = values.get("label")
        if isinstance(label, str):
            provider["label"] = label
        if isinstance(values.get("options"), dict) and values["options"]:
            provider["config"] = values["options"]
        entry: object = provider if len(provider) > 1 else pid
        if entry not in providers:
            providers.append(entry)
    if not configs:
        result.lost.append("the suite has no configurations: add promptfoo providers")
    return providers


def _test(
    case: Case,
    where: str,
    suite_dir: Path,
    out_dir: Path,
    templated: bool,
    result: PromptfooExport,
) -> dict[str, object] | None:
    if case.conversation is not None:
        result.lost.append(
            f"{where}: a conversation case (a scripted or simulated user): "
            "promptfoo's tests are single-turn; not exported"
        )
        return None
    provenance = case.provenance
    own = provenance.get("promptfoo") if isinstance(provenance.get("promptfoo"), dict) else {}
    assert isinstance(own, dict)
    description = provenance.get("description") or case.note or case.id
    variables = dict(case.input)
    if templated:
        variables.pop("prompt", None)
    kept_vars = provenance.get("vars")
    if isinstance(kept_vars, dict):
        variables.update(kept_vars)
    test: dict[str, object] = {"description": description, "vars": variables}
    unmapped = own.get("unmapped") if isinstance(own.get("unmapped"), dict) else {}
    assert isinstance(unmapped, dict)
    weights = own.get("weights") if isinstance(own.get("weights"), dict) else {}
    assert isinstance(weights, dict)
    asserts = []
    for name, target, check in case.checks():
        try:
            assertion = _assertion(check, target, suite_dir, out_dir, unmapped.get(name), result)
        except NotExpressed as exc:
            result.lost.append(f"{where}: check {name} ({check.mode}): {exc}")
            continue
        if assertion is None:
            continue
        wanted = key_of({"type": assertion["type"]})
        if key_of({"metric": name}) != wanted and "metric" not in assertion:
            assertion["metric"] = key_of({"metric": name})
        if name in weights and "weight" not in assertion:
            assertion["weight"] = weights[name]  # an import kept it
        asserts.append(assertion)
    if asserts:
        test["assert"] = asserts
        result.assertions += len(asserts)
    if isinstance(provenance.get("metadata"), dict) and provenance["metadata"]:
        test["metadata"] = provenance["metadata"]
    for key in _KEPT:
        if key in own:
            test[key] = own[key]
    return test


def _trace(check: SpansCheck) -> dict[str, object]:
    """A spans check as the one promptfoo trace assertion that says the same, if any."""
    matchers = [*check.must_have, *check.must_not_have, *check.order]
    if check.max_errors is not None and not matchers:
        limits = check.max_errors if isinstance(check.max_errors, dict) else {"*": check.max_errors}
        if len(limits) == 1:
            [(pattern, most)] = limits.items()
            return {"type": "trace-error-spans", "value": {"max_count": most, "pattern": pattern}}
    if len(check.must_have) == 1 and len(matchers) == 1 and check.max_errors is None:
        [matcher] = check.must_have
        if not matcher.attributes:
            count = matcher.counted
            if matcher.max_duration_ms is None:
                value: dict[str, object] = {"pattern": matcher.name, "min": count.min}
                if count.max is not None:
                    value["max"] = count.max
                return {"type": "trace-span-count", "value": value}
            if count.min == 0 and count.max is None:
                value = {"pattern": matcher.name, "max": matcher.max_duration_ms}
                if matcher.percentile is not None:
                    value["percentile"] = matcher.percentile
                return {"type": "trace-span-duration", "value": value}
    raise NotExpressed(
        "a spans check with more than one expectation, attributes, an order or forbidden "
        "spans: promptfoo's trace assertions each say one count, duration or error limit"
    )


def _assertion(
    check: object,
    target: str,
    suite_dir: Path,
    out_dir: Path,
    kept: object,
    result: PromptfooExport,
) -> dict[str, object] | None:
    """The assertion for one check; ``None`` for an ignore check with nothing to say."""
    if isinstance(check, IgnoreCheck):
        return dict(kept) if isinstance(kept, dict) else None
    if isinstance(check, CostCheck):
        return {"type": "cost", "threshold": check.max_usd}
    if isinstance(check, LatencyCheck):
        return {"type": "latency", "threshold": check.max_ms}
    if isinstance(check, SpansCheck):
        return _trace(check)
    if target != FIELD:
        raise NotExpressed(
            f"reads the output field {target!r}; promptfoo grades the "
            "provider's output text (the reply)"
        )
    if getattr(check, "turn", None) is not None:
        raise NotExpressed("grades one turn of a conversation")
    if getattr(check, "normalize", False) or getattr(check, "word", False):
        raise NotExpressed("normalize and word have no promptfoo equivalent")
    if isinstance(check, ExactCheck):
        return _exact(check)
    if isinstance(check, MustIncludeCheck | MustNotIncludeCheck):
        return _includes(check)
    if isinstance(check, RegexCheck):
        return _regex(check, result)
    if isinstance(check, JsonCheck):
        assertion: dict[str, object] = {"type": "contains-json" if check.find else "is-json"}
        if isinstance(check.schema, dict):
            assertion["value"] = check.schema
        elif isinstance(check.schema, str):
            assertion["value"] = _file(suite_dir / check.schema, out_dir)
        return assertion
    if isinstance(check, NumberCheck):
        values = json.dumps([check.value, *check.any_of])
        code = f"{values}.some((v) => Math.abs(Number(output) - v) <= {check.tolerance!r})"
        return {"type": "javascript", "value": code}
    if isinstance(check, JavascriptCheck | PythonCheck):
        return _code(check, suite_dir, out_dir)
    if isinstance(check, JudgeCheck):
        if check.rubric:
            return {"type": "llm-rubric", "value": check.rubric}
        facts = "; ".join(check.values or [])
        return {"type": "llm-rubric", "value": f"The reply conveys each of these facts: {facts}"}
    mode = getattr(check, "mode", type(check).__name__)
    raise NotExpressed(f"promptfoo has no assertion for a {mode} check")


def _exact(check: ExactCheck) -> dict[str, object]:
    negate = check.negate
    if isinstance(check.value, dict | list):
        if check.any_of:
            raise NotExpressed("a structure with alternatives (any_of)")
        return {"type": "python", "value": equals_code(check.value, negate)}
    values = [_text(v) for v in (check.value, *check.any_of)]
    if not check.any_of and check.case_sensitive:
        return {"type": "not-equals" if negate else "equals", "value": values[0]}
    if check.case_sensitive:
        code = f"{json.dumps(values, ensure_ascii=False)}.includes(String(output))"
    else:
        lowered = json.dumps([v.lower() for v in values], ensure_ascii=False)
        code = f"{lowered}.includes(String(output).toLowerCase())"
    return {"type": "javascript", "value": f"!{code}" if negate else code}


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _includes(check: MustIncludeCheck | MustNotIncludeCheck) -> dict[str, object]:
    values = [_text(v) for v in check.values]
    i = "" if check.case_sensitive else "i"
    if isinstance(check, MustNotIncludeCheck):
        kind = f"not-{i}contains" if len(values) == 1 else f"not-{i}contains-any"
    elif check.match == "any":
        kind = f"{i}contains-any"
    else:
        kind = f"{i}contains" if len(values) == 1 else f"{i}contains-all"
    return {
        "type": kind,
        "value": values[0]
        if len(values) == 1 and "any" not in kind and "all" not in kind
        else values,
    }


def _regex(check: RegexCheck, result: PromptfooExport) -> dict[str, object]:
    negate = "not-" if check.negate else ""
    literal = _starts_with(check.value)
    if literal is not None and check.case_sensitive:
        return {"type": f"{negate}starts-with", "value": literal}
    translated = to_javascript(check.value)
    if translated is None:
        raise NotExpressed(
            f"the pattern {check.value!r} uses Python-only syntax (inline flags, conditionals…)"
        )
    pattern, notes = translated
    result.notes += [f"regex {check.value!r}: {note}" for note in notes]
    if check.case_sensitive:
        return {"type": f"{negate}regex", "value": pattern}
    code = f"new RegExp({json.dumps(pattern, ensure_ascii=False)}, 'i').test(String(output))"
    return {"type": "javascript", "value": f"!{code}" if negate else code}


def _starts_with(pattern: str) -> str | None:
    """The text of ``\\A`` + an escaped literal (what the import makes of starts-with)."""
    if not pattern.startswith("\\A"):
        return None
    body = pattern[2:]
    literal = re.sub(r"\\(.)", r"\1", body, flags=re.S)
    return literal if literal and re.escape(literal) == body else None


def _code(
    check: JavascriptCheck | PythonCheck, suite_dir: Path, out_dir: Path
) -> dict[str, object]:
    assertion: dict[str, object] = {"type": check.mode}
    if check.code is not None:
        assertion["value"] = check.code
    else:
        assert check.file is not None
        function = check.function if check.function not in (None, "get_assert") else None
        reference = _file(suite_dir / check.file, out_dir)
        assertion["value"] = f"{reference}:{function}" if function else reference
    if check.threshold is not None:
        assertion["threshold"] = check.threshold
    return assertion


def _file(path: Path, out_dir: Path) -> str:
    """A ``file://`` reference to a file of the suite, relative to the exported config."""
    relative = os.path.relpath(path.resolve(), out_dir.resolve())
    return "file://" + Path(relative).as_posix()


def _header(suite: str, result: PromptfooExport) -> str:
    lines = [f"# A promptfoo config exported by caseforge from the suite {suite}."]
    if result.lost:
        lines.append("# Not expressed in promptfoo (see `caseforge export promptfoo`'s output):")
        lines += [f"#   {line}" for line in result.lost]
    if result.notes:
        lines.append("# Read differently by promptfoo:")
        lines += [f"#   {note}" for note in result.notes]
    return "\n".join(lines) + "\n"
