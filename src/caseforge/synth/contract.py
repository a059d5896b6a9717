"""The structure contract: what ``resynth`` may tell a model about a sensitive case.

By default the request carries *structure* and never a value of the original:

- the check names and modes of the goal state, and how many values each holds;
- the item count, and which items carry which flag kinds (``item 3 of 7: conflict,
  mismatch``);
- the types and shapes of the input fields and expected values (``text with 7 numbered
  items``, ``2 short phrases``), never their content;
- the target domain and language;
- the failure's ``shape``: abstract words the user writes in the private store
  (``shapes/<case>.txt``), or, when there is none, a sentence derived from the goal state.

Every value of the new case comes back from the model. Goal states other than
``exact_set`` flags on numbered items have no contract yet: ``derive`` refuses them with a
one-line reason naming the check.

``check_structure`` holds a variant to the contract: its remapped goal state has the same
number of flags, the same multi-flagged item with the same kinds, and the same kinds overall;
``check_form`` holds its text to the source's form (``synth/form.py``): a chat log stays a
chat log, with its speakers, turns and @mentions, an email thread a thread.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from caseforge.case.model import Case
from caseforge.checks import (
    ExactSetCheck,
    IgnoreCheck,
    IncludeShorthand,
    JudgeCheck,
    MustIncludeCheck,
    MustNotIncludeCheck,
    ToolCallsCheck,
)
from caseforge.errors import CaseforgeError
from caseforge.privacy.fold import HAN
from caseforge.privacy.policy import detect_language
from caseforge.privacy.policy import language as canonical_language
from caseforge.privacy.verify import Verification
from caseforge.synth.form import Form, read_form

ITEM_LINE = re.compile(r"(?m)^\s*AC\s*(\d+)\b")
FLAG = re.compile(r"^(\d+):(\w+)$")

LANGUAGE_NAMES = {
    "zh-TW": "Traditional Chinese as written in Taiwan",
    "zh-CN": "Simplified Chinese as written in mainland China",
    "vi": "Vietnamese",
    "en": "English",
}

# What a flag kind means, for the three kinds the example suites use; a suite names its own
# in caseforge.yaml (``privacy.flag_kinds``).
DEFAULT_KINDS = {
    "conflict": "contradicts another numbered item",
    "mismatch": "contradicts the description above the items",
    "unverifiable": "cannot be verified as written: vague, with no measurable criterion",
}

SYSTEM = """You write test cases for an AI agent. You are given only the STRUCTURE of an existing
case, never its text: invent every name, number, date and sentence yourself, in the target
domain. Write like a real person writes a ticket: natural, messy where people are messy, no
placeholders, no blanks, no redaction marks, no template braces. Keep exactly the structure the
contract describes. Answer with JSON only."""


def flag_structure(values: list[str]) -> dict[int, list[str]]:
    """``{item number: sorted kinds}`` for flags written ``<n>:<kind>``."""
    by_item: dict[int, list[str]] = {}
    for value in values:
        match = FLAG.match(str(value))
        if match:
            by_item.setdefault(int(match.group(1)), []).append(match.group(2))
    return {k: sorted(v) for k, v in by_item.items()}


def check_structure(
    original: list[str], variant: list[str], items: int | None = None
) -> Verification:
    """Same number of flags, same multi-flagged item shape, same kinds; items in range."""
    before, after = flag_structure(original), flag_structure(variant)
    problems = []
    if len(original) != len(variant):
        problems.append(f"{len(original)} flags became {len(variant)}")
    multi_before = sorted(tuple(k) for k in before.values() if len(k) > 1)
    multi_after = sorted(tuple(k) for k in after.values() if len(k) > 1)
    if multi_before != multi_after:
        problems.append(
            f"multi-flagged items {multi_before or 'none'} became {multi_after or 'none'}"
        )
    kinds_before = Counter(k for ks in before.values() for k in ks)
    kinds_after = Counter(k for ks in after.values() for k in ks)
    if kinds_before != kinds_after:
        problems.append(f"kinds {dict(kinds_before)} became {dict(kinds_after)}")
    if items is not None:
        outside = sorted(n for n in after if not 1 <= n <= items)
        if outside:
            problems.append(f"flags on items {outside} that the {items}-item variant lacks")
    if problems:
        return Verification("structure", False, "; ".join(problems))
    return Verification(
        "structure",
        True,
        f"{len(variant)} flags, multi-flagged {multi_after or 'none'}, kinds {dict(kinds_after)}",
    )


def check_form(contract: Contract, text: str) -> Verification:
    """The variant's text keeps the source's form (a chat log, an email thread, notes)."""
    variant = read_form(text)
    problems = contract.form.problems(variant)
    if problems:
        return Verification("form", False, "; ".join(problems))
    return Verification("form", True, f"{contract.form.kind} kept")


def flag_fields(case: Case) -> dict[str, list[str]]:
    """The ``exact_set`` checks whose values are all ``<item>:<kind>`` flags."""
    found = {}
    for name, check in case.expect.items():
        if (
            isinstance(check, ExactSetCheck)
            and check.values
            and all(FLAG.match(str(v)) for v in check.values)
        ):
            found[name] = [str(v) for v in check.values]
    return found


@dataclass(frozen=True)
class Wording:
    """A check whose values are tied to the case's wording: the model writes new ones."""

    mode: str
    count: int
    shape: str
    split: int | None = None  # for the shorthand: how many of the values are must_include


@dataclass
class Contract:
    """A case's structure: everything ``resynth`` may send in the default mode."""

    case_id: str
    language: str
    text_field: str
    items: int
    target_items: int
    flags: dict[str, list[str]]
    wording: dict[str, Wording]
    inputs: dict[str, str]
    carried: list[str] = field(default_factory=list)  # checks kept as they are (ignore, …)
    form: Form = field(default_factory=lambda: Form("ticket"))  # of the text field

    @property
    def flagged_items(self) -> list[int]:
        return sorted({n for values in self.flags.values() for n in flag_structure(values)})


def value_shape(value: object) -> str:
    """A value's type and shape in words, never its content."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return f"a list of {len(value)} values" if value else "an empty list"
    if isinstance(value, dict):
        return f"a mapping with {len(value)} keys"
    text = str(value)
    if "@" in text and re.fullmatch(r"[^\s@]+@[^\s@]+\.[A-Za-z]{2,}", text.strip()):
        return "an e-mail address"
    lines = text.count("\n") + 1
    han = len(HAN.findall(text))
    if lines > 3 or len(text) > 160:
        return "free text"
    script = "Chinese" if han * 2 >= len(text.strip()) else "Latin-script"
    size = len(text.strip()) if han else len(text.split())
    unit = "characters" if han else "words"
    bucket = "1–3" if size <= 3 else "4–8" if size <= 8 else "9–20" if size <= 20 else "over 20"
    return f"a short {script} phrase of {bucket} {unit}"


def _values_shape(values: list[object]) -> str:
    shapes = sorted({value_shape(v) for v in values})
    return "; ".join(shapes)


def text_field(case: Case) -> str:
    """The input field holding the numbered items (the longest string)."""
    strings = {k: v for k, v in case.input.items() if isinstance(v, str)}
    if not strings:
        raise CaseforgeError(f"case {case.id}: no text in its input to re-synthesise")
    return max(strings, key=lambda k: len(strings[k]))


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def _near_flags(case: Case) -> str:
    """Why a goal state that looks like flags is not one (a hint for the refusal)."""
    for name, check in case.expect.items():
        values = [str(v) for v in getattr(check, "values", None) or []]
        if values and all(re.fullmatch(r"[A-Za-z]*\s?\d+:\w+", v) for v in values):
            if not isinstance(check, ExactSetCheck):
                return (
                    f"; expect.{name} is {getattr(check, 'mode', '?')}: flags must be an exact_set"
                )
            return f"; expect.{name}: write flags as <n>:<kind> (3:conflict), not {values[0]}"
    return ""


def derive(
    case: Case, language: str | None = None, kinds: Mapping[str, str] | None = None
) -> Contract:
    """The contract of ``case``; ``CaseforgeError`` when its goal state has no contract."""
    flags = flag_fields(case)
    if not flags:
        raise CaseforgeError(
            f"case {case.id}: resynth refuses to run before the goal state is written — it "
            "needs an exact_set of <item>:<kind> flags (the structure that made the agent "
            f"fail) to preserve and verify{_near_flags(case)}"
        )
    meanings = {**DEFAULT_KINDS, **(kinds or {})}
    for name, values in flags.items():
        unknown = sorted({v.split(":", 1)[1] for v in values} - set(meanings))
        if unknown:
            raise CaseforgeError(
                f"case {case.id}: expect.{name}: flag kind {unknown[0]!r} has no meaning to "
                "write into the request; add it to privacy.flag_kinds in caseforge.yaml"
            )
    if language is not None:
        try:
            language = canonical_language(language)
        except ValueError as exc:
            raise CaseforgeError(f"--lang: {exc}") from None
    wording: dict[str, Wording] = {}
    carried: list[str] = []
    for name, check in case.expect.items():
        if name in flags:
            continue
        if isinstance(check, MustIncludeCheck | MustNotIncludeCheck):
            wording[name] = Wording(check.mode, len(check.values), _values_shape(check.values))
        elif isinstance(check, JudgeCheck) and check.values and not check.rubric:
            wording[name] = Wording("judge", len(check.values), "facts, one sentence each")
        elif isinstance(check, IncludeShorthand):
            both = [*check.must_include, *check.must_not_include]
            wording[name] = Wording(
                "must_include+must_not_include",
                len(both),
                _values_shape(both),
                split=len(check.must_include),
            )
        elif isinstance(check, IgnoreCheck) or (
            isinstance(check, ToolCallsCheck)
            and not (check.must_call or check.must_not_call or check.order)
        ):
            carried.append(name)
        else:
            mode = getattr(check, "mode", type(check).__name__)
            raise CaseforgeError(
                f"case {case.id}: expect.{name} ({mode}) has no structure contract yet: resynth "
                "re-synthesises goal states of exact_set flags with must_include, "
                "must_not_include, judge-fact and ignore checks beside them"
            )
    field_name = text_field(case)
    original = str(case.input[field_name])
    items = len(set(ITEM_LINE.findall(original))) or max(
        n for values in flags.values() for n in flag_structure(values)
    )
    for name, values in flags.items():
        outside = sorted(n for n in flag_structure(values) if not 1 <= n <= items)
        if outside:
            raise CaseforgeError(
                f"case {case.id}: expect.{name}: a flag on item {outside[0]}, but "
                f"{field_name} has items 1 to {items}"
            )
    inputs = {
        key: (
            f"text holding numbered items AC1…AC{items}"
            if key == field_name
            else value_shape(value)
        )
        for key, value in case.input.items()
    }
    multi = [
        n for values in flags.values() for n, k in flag_structure(values).items() if len(k) > 1
    ]
    first = min(multi or [n for values in flags.values() for n in flag_structure(values)])
    return Contract(
        form=read_form(original, first),
        case_id=case.id,
        language=language or detect_language(original),
        text_field=field_name,
        items=items,
        target_items=max(items + 3, round(items * 1.6)),
        flags=flags,
        wording=wording,
        inputs=inputs,
        carried=carried,
    )


def derived_shape(contract: Contract) -> str:
    """A failure shape in abstract words, from the goal state alone (used when the user wrote
    none in the private store)."""
    parts = []
    for name, values in contract.flags.items():
        structure = flag_structure(values)
        multi = [(item, kinds) for item, kinds in sorted(structure.items()) if len(kinds) > 1]
        if multi:
            _, kinds = multi[0]
            parts.append(
                f"An agent fails this case when its `{name}` misses one of the flags on the item "
                f"that carries {' and '.join(kinds)} at once, even though it finds the others."
            )
        else:
            parts.append(f"An agent fails this case when its `{name}` misses a flag.")
    return " ".join(parts)


def prompt(
    contract: Contract,
    domain: str,
    shape: str,
    kinds: Mapping[str, str] | None = None,
) -> str:
    """The user message of the default (structure-only) request."""
    meanings = {**DEFAULT_KINDS, **(kinds or {})}
    lines = [
        f"Target domain: {domain}",
        f"Language: {LANGUAGE_NAMES.get(contract.language, contract.language)}",
        "",
        "Input fields to write:",
    ]
    for key, shape_text in contract.inputs.items():
        if key == contract.text_field and contract.form.kind in ("ticket", "text"):
            lines.append(
                f"- {key}: a ticket as a person would paste it (a description first, then "
                f"numbered acceptance criteria AC1…AC{contract.target_items}); the source had "
                f"{contract.items} items, write {contract.target_items}"
            )
        elif key == contract.text_field:
            lines.append(
                f"- {key}: {contract.form.describe()}, in the same form in the new domain; "
                f"inside it, numbered items AC1…AC{contract.target_items} as people write them "
                f"in that form (the source had {contract.items}, write {contract.target_items})"
            )
        else:
            lines.append(f"- {key}: {shape_text}")
    lines.append("")
    lines.append("Goal state (what the agent under test is graded on):")
    for name, values in contract.flags.items():
        structure = flag_structure(values)
        lines.append(f"- {name}: exact_set of {plural(len(values), 'flag')} on the numbered items:")
        for item, item_kinds in sorted(structure.items()):
            described = "; ".join(f"{k} ({meanings.get(k, k)})" for k in item_kinds)
            lines.append(f"  - source item {item} of {contract.items} carries {described}")
        if any(len(k) > 1 for k in structure.values()):
            lines.append(
                "  - an item carrying several flags must show every one of them; when it conflicts "
                "with another item, put the two apart, not adjacent, neither first nor last"
            )
        lines.append("  - no other item may have a problem of these kinds")
    for name, wording in contract.wording.items():
        noun, what = {
            "must_include": ("value", "the agent's answer must contain"),
            "must_not_include": ("value", "the agent's answer must not contain"),
            "judge": ("fact", "a judge checks the agent's answer states"),
            "must_include+must_not_include": (
                "value",
                f"(the first {wording.split} must be in the agent's answer, the rest must not)",
            ),
        }[wording.mode]
        lines.append(f"- {name}: {plural(wording.count, 'new ' + noun)} {what} ({wording.shape})")
    lines += [
        "",
        f"The failure this case catches: {shape}",
        "",
        'Return {"input": {<field>: <value>} for every input field, '
        '"items": <number of items written>, '
        '"mapping": {"<source item>": <new item number>} for every flagged source item, '
        '"values": {<check>: [<new values>]} for the checks listed with new values, '
        '"tags": [1 to 3 short tags naming the new domain]}.',
    ]
    return "\n".join(lines)


def answer_schema(contract: Contract) -> dict[str, object]:
    """The JSON schema of the model's answer."""
    flagged = [str(i) for i in contract.flagged_items]
    return {
        "type": "object",
        "properties": {
            "input": {
                "type": "object",
                "properties": {k: {} for k in contract.inputs},
                "required": list(contract.inputs),
            },
            "items": {"type": "integer"},
            "mapping": {
                "type": "object",
                "properties": {i: {"type": "integer"} for i in flagged},
                "required": flagged,
                "additionalProperties": False,
            },
            "values": {
                "type": "object",
                "properties": {
                    k: {"type": "array", "items": {"type": "string"}} for k in contract.wording
                },
                "required": list(contract.wording),
                "additionalProperties": False,
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["input", "items", "mapping", "values"],
    }


def parse_answer(contract: Contract) -> Any:
    """A validator for the model's answer (raises ``ValueError`` naming what is wrong)."""

    def parse(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise ValueError("the answer must be a JSON object")
        inputs = data.get("input")
        if not isinstance(inputs, dict) or not isinstance(inputs.get(contract.text_field), str):
            raise ValueError(f"`input.{contract.text_field}` must be the new ticket text")
        missing_inputs = [k for k in contract.inputs if k not in inputs]
        if missing_inputs:
            raise ValueError(f"`input` lacks {missing_inputs}")
        mapping = data.get("mapping") or {}
        missing = [
            str(i) for i in contract.flagged_items if not isinstance(mapping.get(str(i)), int)
        ]
        if missing:
            raise ValueError(f"`mapping` lacks items {missing}")
        values = data.get("values") or {}
        lacking = [
            k
            for k, w in contract.wording.items()
            if not isinstance(values.get(k), list) or len(values[k]) != w.count
        ]
        if lacking:
            raise ValueError(f"`values` needs the listed number of values for {lacking}")
        tags = data.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ValueError("`tags` must be a list of strings")
        return data

    return parse


def describe(contract: Contract) -> str:
    """The contract as JSON, for the dry run and the private store."""
    return json.dumps(
        {
            "case": contract.case_id,
            "language": contract.language,
            "items": contract.items,
            "target_items": contract.target_items,
            "flags": contract.flags,
            "wording": {k: w.__dict__ for k, w in contract.wording.items()},
            "inputs": contract.inputs,
            "carried": contract.carried,
        },
        ensure_ascii=False,
        indent=1,
    )
