"""``caseforge resynth``: turn a sensitive failed case into a committable one that fails the
same way — never by redaction.

1. Refuse unless the source case's goal state is written: an ``exact_set`` of
   ``<item>:<kind>`` flags, the structure that made the agent fail.
2. Find identifiers (patterns plus the case's glossary from the private store) and replace
   them with shape-keeping surrogates seeded from the local secret.
3. Ask the model to rewrite the case into the target domain under a structure contract
   derived from the goal state, returning the new text, the item mapping and new values for
   the wording-bound checks.
4. Remap the goal state, then verify cell by cell: structure, leaks, redaction marks.
5. Re-run the agent configuration that failed, k times on the original and the variant,
   and confirm the same miss reproduces under the mapping.

Any failed verification keeps the variant out of the suite and says which check failed. A
passing variant is written to ``cases/`` with provenance (never the original content or a
hash of it); the original ↔ variant mapping goes to the private store only.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from caseforge.case.load import load_case, load_suite
from caseforge.case.model import (
    Case,
    ExactSetCheck,
    IgnoreCheck,
    IncludeShorthand,
    JudgeCheck,
    MustIncludeCheck,
    MustNotIncludeCheck,
)
from caseforge.errors import CaseforgeError
from caseforge.files import write_yaml
from caseforge.synth.private import PrivateStore
from caseforge.synth.verify import (
    Check,
    check_leaks,
    check_redaction,
    check_structure,
    flag_structure,
)

ITEM_LINE = re.compile(r"(?m)^\s*AC\s*(\d+)\b")

SYSTEM = """You rewrite test cases for an AI agent into a new business domain. The rewrite must
read like something a real person wrote: natural text, no placeholders, no blanks, no
redaction marks. Change the domain, the wording and the length completely; copy no sentence
or clause. Keep exactly the structure the contract describes. Answer with JSON only."""


@dataclass
class ResynthResult:
    """What the re-synthesis produced and how each verification went."""

    case_id: str | None
    passed: bool
    checks: list[Check]
    variant: dict[str, Any] = field(default_factory=dict)
    reproduction: dict[str, Any] = field(default_factory=dict)

    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


def flag_fields(case: Case) -> dict[str, list[str]]:
    """The ``exact_set`` checks whose values are ``<item>:<kind>`` flags."""
    found = {}
    for name, _, check in case.checks():
        if (
            isinstance(check, ExactSetCheck)
            and check.values
            and all(":" in str(v) for v in check.values)
            and flag_structure(check.values)
        ):
            found[name] = [str(v) for v in check.values]
    return found


def text_field(case: Case) -> str:
    """The input field holding the text (the longest string)."""
    strings = {k: v for k, v in case.input.items() if isinstance(v, str)}
    if not strings:
        raise CaseforgeError(f"case {case.id}: no text in its input to re-synthesise")
    return max(strings, key=lambda k: len(strings[k]))


def wording_checks(case: Case) -> dict[str, list[str]]:
    """Checks whose values are tied to the wording of the domain (they get new values)."""
    out: dict[str, list[str]] = {}
    for key, check in case.expect.items():
        if isinstance(check, MustIncludeCheck | MustNotIncludeCheck) or (
            isinstance(check, JudgeCheck) and check.values
        ):
            out[key] = [str(v) for v in (check.values or [])]
        elif isinstance(check, IncludeShorthand):
            out[key] = [str(v) for v in check.must_include + check.must_not_include]
    return out


def contract(case: Case, fields: dict[str, list[str]], items_now: int, target_items: int) -> str:
    """The structure contract handed to the model, derived from the goal state."""
    lines = [
        f"The source has {items_now} numbered items (AC1…AC{items_now}); write {target_items}.",
    ]
    for name, values in fields.items():
        structure = flag_structure(values)
        lines.append(f"Its expected `{name}` has exactly {len(values)} flags:")
        for item, kinds in sorted(structure.items()):
            if set(kinds) >= {"conflict", "mismatch"}:
                lines.append(
                    f"- item {item} must BOTH conflict with another item and contradict the "
                    "description; put the conflicting pair at positions you choose, apart, "
                    "not adjacent, not first or last"
                )
            else:
                lines.append(f"- item {item} must be flagged: {', '.join(kinds)}")
        lines.append("No other item may have a problem of these kinds.")
    lines.append(
        'Return {"text": <the new card>, "items": <number of items>, '
        '"mapping": {"<source item>": <new item number>, …} for every flagged item, '
        '"values": {<check>: [new values]} for the checks listed below}.'
    )
    return "\n".join(lines)


def _schema(wording: dict[str, list[str]], flagged: list[int]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "items": {"type": "integer"},
            "mapping": {
                "type": "object",
                "properties": {str(i): {"type": "integer"} for i in flagged},
                "required": [str(i) for i in flagged],
                "additionalProperties": False,
            },
            "values": {
                "type": "object",
                "properties": {k: {"type": "array", "items": {"type": "string"}} for k in wording},
                "required": list(wording),
                "additionalProperties": False,
            },
        },
        "required": ["text", "items", "mapping", "values"],
        "additionalProperties": False,
    }


def _parse(flagged: list[int], wording: dict[str, list[str]]) -> Any:
    def parse(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            raise ValueError("`text` must be the new case text")
        mapping = data.get("mapping") or {}
        missing = [str(i) for i in flagged if not isinstance(mapping.get(str(i)), int)]
        if missing:
            raise ValueError(f"`mapping` lacks items {missing}")
        values = data.get("values") or {}
        lacking = [k for k in wording if not isinstance(values.get(k), list)]
        if lacking:
            raise ValueError(f"`values` lacks {lacking}")
        return data

    return parse


def source_case(suite_dir: Path, case_id: str, private: PrivateStore) -> Case:
    """The case to re-synthesise: from the private store (sensitive) or the suite."""
    sensitive = private.source_case_path(case_id)
    if sensitive.is_file():
        return load_case(sensitive)
    for loaded in load_suite(suite_dir).cases:
        if loaded.case.id == case_id:
            return loaded.case
    raise CaseforgeError(
        f"no case {case_id!r} in {private.root / 'cases'} or {suite_dir / 'cases'}"
    )


async def resynth(
    suite_dir: Path,
    case_id: str,
    domain: str,
    client: Any,
    private: PrivateStore,
    reproduce: str | None,
    trials: int = 3,
    new_id: str | None = None,
    glossary_file: Path | None = None,
    lang: str | None = None,
    reviewer: str = "",
) -> ResynthResult:
    """Re-synthesise ``case_id`` into ``domain``; write it only when every check passes."""
    from caseforge.synth.identifiers import IdentifierDetector, load_glossary
    from caseforge.synth.surrogates import SurrogateMaker

    suite = load_suite(suite_dir)
    case = source_case(suite_dir, case_id, private)
    fields = flag_fields(case)
    if not fields:
        raise CaseforgeError(
            f"case {case_id}: resynth refuses to run before the goal state is written — it "
            "needs an exact_set of <item>:<kind> flags (the structure that made the agent "
            "fail) to preserve and verify"
        )
    if reproduce is not None and reproduce not in suite.config.configs:
        raise CaseforgeError(f"--reproduce {reproduce!r}: the suite has no such configuration")
    field_name = text_field(case)
    original = str(case.input[field_name])
    glossary_path = glossary_file or private.glossary_path(case_id)
    glossary = load_glossary(glossary_path) if glossary_path.is_file() else None
    detector = IdentifierDetector(glossary)
    spans = detector.scan(original, lang)
    maker = SurrogateMaker(private.secret(), case_key=case_id, locale=_locale(lang, original))
    substituted, surrogate_map = maker.apply(original, spans)

    items_now = len(set(ITEM_LINE.findall(original))) or max(
        n for values in fields.values() for n in flag_structure(values)
    )
    target_items = max(items_now + 3, round(items_now * 1.6))
    wording = wording_checks(case)
    flagged = sorted({n for values in fields.values() for n in flag_structure(values)})
    rules = contract(case, fields, items_now, target_items)
    prompt = (
        f"Target domain: {domain}\n\nContract:\n{rules}\n\n"
        f"Checks whose values must be rewritten for the new card (same meaning, new domain): "
        f"{json.dumps(wording, ensure_ascii=False)}\n\nThe source case:\n{substituted}"
    )
    answer, _ = await client.chat_json(
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        _schema(wording, flagged),
        _parse(flagged, wording),
        temperature=0.7,
        seed=0,
        schema_name="resynthesis",
    )
    mapping = {int(k): int(v) for k, v in answer["mapping"].items()}
    variant_text = str(answer["text"]).strip()
    items = len(set(ITEM_LINE.findall(variant_text))) or int(answer["items"])
    expect = _remap(case, fields, mapping, answer["values"])
    identifiers = [s.text for s in spans] + (
        [v for values in glossary.terms.values() for v in values] if glossary else []
    )
    checks = [check_structure(fields[name], expect[name]["values"], items) for name in fields]
    variant_id = new_id or _next_id(suite_dir)
    variant_input = {k: v for k, v in case.input.items() if k != field_name}
    variant: dict[str, Any] = {
        "id": variant_id,
        "input": {**variant_input, field_name: variant_text},
        "expect": expect,
        "tags": [t for t in case.tags if t != "must-pass"],
        "source": "synthetic",
        "added": dt.date.today().isoformat(),
    }
    Case.model_validate(variant)
    # Everything but the rewritten text is searched for identifiers too: the other input
    # fields, the tags and the expectations come from the original case.
    others = {k: v for k, v in variant.items() if k not in ("id", "input", "added")}
    others["input"] = variant_input
    rest = json.dumps(others, ensure_ascii=False, default=str)
    checks.append(check_leaks(original, identifiers, variant_text, rest))
    checks.append(check_redaction(variant_text + "\n" + rest))
    reproduction: dict[str, Any] = {}
    if all(c.passed for c in checks) and reproduce is not None:
        reproduction = await _reproduce(
            suite_dir, case, Case.model_validate(variant), fields, mapping, reproduce, trials
        )
        checks.append(Check("reproduction", reproduction["reproduced"], reproduction["detail"]))
    run_id = "resynth-" + secrets.token_hex(4)
    passed = all(c.passed for c in checks)
    if not passed:
        private.write(
            f"rejected/{run_id}.json",
            json.dumps(
                {"variant": variant, "checks": [c.__dict__ for c in checks]},
                ensure_ascii=False,
                indent=1,
            ),
        )
        return ResynthResult(None, False, checks, variant, reproduction)
    variant["provenance"] = {
        "synth_run": run_id,
        "method": "structure-preserving re-synthesis",
        "domain": domain,
        "model": getattr(client, "model", None),
        "identifier_classes_replaced": sorted({s.cls for s in spans}),
        "verification": {c.name: c.to_json() for c in checks},
        "reproduction": reproduction,
        "reviewed_by": reviewer,
        "reviewed_on": dt.date.today().isoformat() if reviewer else None,
    }
    private.save_mapping(
        variant_id,
        {
            "source_case": case.id,
            "variant_case": variant_id,
            "synth_run": run_id,
            "domain": domain,
            "items": {str(k): v for k, v in mapping.items()},
            "replacements": surrogate_map.replacements,
            "money_factor": surrogate_map.money_factor,
            "date_offset_days": surrogate_map.date_offset_days,
        },
    )
    write_yaml(suite_dir / "cases" / f"{variant_id}.yaml", variant)
    return ResynthResult(variant_id, True, checks, variant, reproduction)


def _locale(lang: str | None, text: str) -> str:
    if lang:
        return {"zh-TW": "zh_TW", "zh-CN": "zh_CN", "vi": "vi_VN", "en": "en_US"}.get(lang, "zh_TW")
    if re.search(r"[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", text.lower()):
        return "vi_VN"
    if re.search(r"[\u4e00-\u9fff]", text):
        simplified = sum(text.count(c) for c in "这个们说时会对发开关")
        traditional = sum(text.count(c) for c in "這個們說時會對發開關")
        return "zh_CN" if simplified > traditional else "zh_TW"
    return "en_US"


def _remap(
    case: Case, fields: dict[str, list[str]], mapping: dict[int, int], values: dict[str, Any]
) -> dict[str, Any]:
    expect: dict[str, Any] = {}
    for key, check in case.expect.items():
        data = check.model_dump(mode="json", exclude_defaults=True)
        if key in fields:
            remapped = []
            for flag in fields[key]:
                item, kind = flag.split(":", 1)
                remapped.append(f"{mapping.get(int(item), int(item))}:{kind}")
            data["values"] = remapped
        elif key in values and not isinstance(check, IgnoreCheck):
            new = [str(v) for v in values[key]]
            if isinstance(check, IncludeShorthand):
                half = len(check.must_include)
                data = {"must_include": new[:half] or new, "must_not_include": new[half:]}
                data = {k: v for k, v in data.items() if v}
            else:
                data["values"] = new
        expect[key] = data
    return expect


async def _reproduce(
    suite_dir: Path,
    original: Case,
    variant: Case,
    fields: dict[str, list[str]],
    mapping: dict[int, int],
    config_name: str,
    trials: int,
) -> dict[str, Any]:
    """Run the failing configuration on both; the miss reproduces when, in most trials, the
    variant misses (and adds) exactly the mapped items the original misses (and adds)."""
    from caseforge.agent.transports import resolve_agent
    from caseforge.grade.trial import grade_trial
    from caseforge.run.executor import TrialTask
    from caseforge.run.trial import RetryPolicy, TrialRunner, clock_for, seed_for
    from caseforge.vcs import git_toplevel

    suite = load_suite(suite_dir)
    config = suite.config.configs[config_name]
    agent = resolve_agent(suite.config.agent, None, suite.root)
    top = git_toplevel(suite.root) or suite.root
    runner = TrialRunner(
        agent, suite.config.timeout_s, RetryPolicy(), top / ".caseforge" / "work" / "resynth"
    )
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)

    async def misses(case: Case) -> list[tuple[frozenset[str], frozenset[str]]]:
        found: list[tuple[frozenset[str], frozenset[str]]] = []
        for trial in range(1, trials + 1):
            task = TrialTask(
                "resynth",
                config_name,
                config,
                case,
                trial,
                seed_for(case, trial),
                clock_for(case, now).isoformat(),
            )
            outcome = await runner(task)
            if outcome.result is None:
                found.append((frozenset({"<error>"}), frozenset()))
                continue
            _, checks = grade_trial(case, outcome.result)
            missing: set[str] = set()
            extra: set[str] = set()
            for check in checks:
                if check.name in fields and isinstance(check.actual, list):
                    want, got = set(map(str, check.expected)), set(map(str, check.actual))
                    missing |= {f"{check.name}:{v}" for v in want - got}
                    extra |= {f"{check.name}:{v}" for v in got - want}
            found.append((frozenset(missing), frozenset(extra)))
        return found

    def mapped(item: str) -> str:
        name, rest = item.split(":", 1)
        number, kind = rest.split(":", 1)
        return f"{name}:{mapping.get(int(number), int(number))}:{kind}"

    try:
        before = await misses(original)
        after = await misses(variant)
    finally:
        await agent.aclose()
    failing = [m for m in before if m != (frozenset(), frozenset())]
    if not failing:
        return {
            "config": config_name,
            "trials": trials,
            "reproduced": False,
            "detail": f"{config_name} does not fail the original: nothing to reproduce",
        }
    miss, extra = max(set(failing), key=failing.count)
    target = (frozenset(map(mapped, miss)), frozenset(map(mapped, extra)))
    same = sum(1 for m in after if m == target)

    def shown(items: frozenset[str]) -> list[str]:
        return sorted(x.split(":", 1)[1] for x in items)

    return {
        "config": config_name,
        "trials": trials,
        "original_miss": shown(miss),
        "original_extra": shown(extra),
        "variant_miss_expected": shown(target[0]),
        "variant_trials_with_the_same_miss": same,
        "reproduced": same * 2 > trials,
        "detail": f"{same} of {trials} {config_name} trials on the variant miss "
        f"{shown(target[0]) or 'nothing'}"
        + (f" and add {shown(target[1])}" if target[1] else "")
        + f", as the original misses {shown(miss) or 'nothing'}",
    }


def _next_id(suite_dir: Path) -> str:
    from caseforge.synth.review import taken_ids

    taken = taken_ids(suite_dir)
    number = 1
    while f"resynth-{number:03d}" in taken:
        number += 1
    return f"resynth-{number:03d}"
