"""``caseforge resynth``: turn a sensitive failed case into a committable one that fails the
same way — never by redaction, and by default without any original text leaving the machine.

1. Refuse unless the source case's goal state is written (``exact_set`` flags on numbered
   items) and every other check has a contract (``contract.derive``).
2. Build the request from *structure* only (``contract.prompt``): check names and modes,
   item counts, which items carry which flags, value shapes, the target domain and the
   failure's shape in abstract words from the private store. With ``privacy.send:
   substituted`` (an explicit opt-in, allow-listed endpoints only) it also carries the
   original text with every identifier swapped for a surrogate.
3. Check the exact payload against the original (``privacy.outbound``), keep it in the
   private store, and block the send on any overlap; ``dry_run`` stops here and sends nothing.
4. Build the variant from the model's answer, then verify it field by field against the
   original: structure (``contract.check_structure``), overlap (``privacy.overlap``: runs,
   numbers, dates, names, identifiers in every fold), redaction marks (``privacy.verify``).
5. Re-run the agent configuration that failed on the original and the variant, and confirm
   the same miss reproduces under the item mapping.

A failed check keeps the variant out of the suite and names the check, the field and the
class, never the original. A passing variant is written to ``cases/`` with provenance (no
original content, no hash of it); the mapping goes to the private store only.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Required, TypedDict

from caseforge.case.load import load_case, load_suite, suite_modes
from caseforge.case.model import Case, case_model
from caseforge.checks import IgnoreCheck, IncludeShorthand
from caseforge.errors import CaseforgeError, EnvError, UsageError
from caseforge.files import write_yaml
from caseforge.privacy.outbound import Payload, check_payload, require_allowed
from caseforge.privacy.overlap import Original, Settings
from caseforge.privacy.private import PrivateStore
from caseforge.privacy.verify import (
    KnownOriginal,
    Verification,
    content_fields,
    know_original,
    verify_variant,
)
from caseforge.synth import contract as contracts

if TYPE_CHECKING:
    from caseforge.llm.client import ModelClient
    from caseforge.privacy.identifiers import Span


class Reproduction(TypedDict, total=False):
    """What re-running the failing configuration found: ``config``, ``trials``,
    ``reproduced`` and ``detail`` always; the misses when it failed the original."""

    config: Required[str]
    trials: Required[int]
    reproduced: Required[bool]
    detail: Required[str]
    original_miss: list[str]
    original_miss_from: str
    original_extra: list[str]
    variant_miss_expected: list[str]
    variant_trials_with_the_same_miss: int


@dataclass
class ResynthResult:
    """What the re-synthesis produced and how each verification went."""

    case_id: str | None
    passed: bool
    checks: list[Verification]
    variant: dict[str, Any] = field(default_factory=dict)
    reproduction: Mapping[str, object] = field(default_factory=dict)  # a Reproduction, if run
    payload: Payload | None = None
    payload_path: Path | None = None
    sent: bool = False

    def failed(self) -> list[Verification]:
        return [c for c in self.checks if not c.passed]


def source_case(suite_dir: Path, case_id: str, private: PrivateStore) -> Case:
    """The case to re-synthesise: from the private store (sensitive) or the suite."""
    sensitive = private.source_case_path(case_id)
    if sensitive.is_file():
        case = load_case(sensitive, case_model(suite_modes(suite_dir)))
        case.provenance["sensitive"] = True  # kept from caseforge's own spans (tracing.own)
        return case
    for loaded in load_suite(suite_dir).cases:
        if loaded.case.id == case_id:
            return loaded.case
    raise UsageError(f"no case {case_id!r} in {private.root / 'cases'} or {suite_dir / 'cases'}")


def _fixture_texts(suite_dir: Path, case_id: str, private: PrivateStore) -> list[str]:
    """The recorded external responses of a case (suite or private store), as text."""
    texts = []
    for folder in (suite_dir / "fixtures", private.root / "fixtures"):
        for path in sorted(folder.glob(f"{case_id}*")) if folder.is_dir() else []:
            if path.is_file():
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return texts


@dataclass
class _Known:
    """What is already public in the repository: the suite's other committed cases."""

    texts: list[str]
    tags: set[str]
    reasons: set[str]


def _known(suite_dir: Path, source_id: str, private: PrivateStore) -> _Known:
    variants = {
        str(m.get("variant_case")) for m in private.mappings() if m.get("source_case") == source_id
    }
    texts: list[str] = []
    tags: set[str] = set()
    reasons: set[str] = set()
    for loaded in load_suite(suite_dir).cases:
        other = loaded.case
        if other.id == source_id or other.id in variants:
            continue
        texts.extend(t for _, t in content_fields(other.model_dump(mode="json")))
        tags.update(other.tags)
        reasons.update(c.reason for c in other.expect.values() if isinstance(c, IgnoreCheck))
    return _Known(texts, tags, reasons)


def _original(
    suite_dir: Path,
    case: Case,
    private: PrivateStore,
    glossary_file: Path | None,
    settings: Settings,
    safe: list[str],
) -> KnownOriginal:
    from caseforge.privacy.identifiers import load_glossary

    glossary_path = glossary_file or private.glossary_path(case.id)
    glossary = load_glossary(glossary_path) if glossary_path.is_file() else None
    fixtures = _fixture_texts(suite_dir, case.id, private)
    return know_original(case.model_dump(mode="json"), glossary, fixtures, safe, settings)


def _substituted_section(
    case: Case,
    contract: contracts.Contract,
    spans: list[tuple[str, Span]],
    private: PrivateStore,
) -> tuple[str, dict[str, object]]:
    """For ``privacy.send: substituted``: the input fields and wording values with every
    identifier swapped, and the surrogate mapping."""
    from caseforge.privacy.policy import faker_locale
    from caseforge.privacy.surrogates import SurrogateMaker

    maker = SurrogateMaker(
        private.secret(), case_key=case.id, locale=faker_locale(contract.language)
    )
    replaced: dict[str, str] = {}
    classes: dict[str, str] = {}

    def swap(path: str, text: str) -> str:
        mine = [s for p, s in spans if p == path]
        new, mapping = maker.apply(text, mine)
        replaced.update(mapping.replacements)
        classes.update(mapping.classes)
        return new

    inputs = {
        key: swap(f"input.{key}", value) if isinstance(value, str) else value
        for key, value in case.input.items()
    }
    values: dict[str, list[str]] = {}
    for name in contract.wording:
        check = case.expect[name]
        raw = (
            [*check.must_include, *check.must_not_include]
            if isinstance(check, IncludeShorthand)
            else list(getattr(check, "values", None) or [])
        )
        prefix = f"expect.{name}"
        values[name] = [swap(f"{prefix}.values[{i}]", str(v)) for i, v in enumerate(raw)]
    section = (
        "\n\nThe source case, every identifier replaced by a surrogate (rewrite it into the "
        "target domain; copy no sentence):\n"
        + json.dumps({"input": inputs, "values": values}, ensure_ascii=False, indent=1)
    )
    return section, {
        "replacements": replaced,
        "classes": classes,
        "money_factor": maker.money_factor,
        "date_offset_days": maker.date_offset_days,
    }


async def resynth(
    suite_dir: Path,
    case_id: str,
    domain: str,
    client: ModelClient | None,
    private: PrivateStore,
    reproduce: str | None,
    trials: int = 3,
    new_id: str | None = None,
    glossary_file: Path | None = None,
    lang: str | None = None,
    reviewer: str = "",
    *,
    dry_run: bool = False,
    original_miss: list[str] | None = None,
) -> ResynthResult:
    """Re-synthesise ``case_id`` into ``domain``; write it only when every check passes.

    ``client`` may be None for a dry run. ``original_miss`` states the flags the failing
    configuration missed on the original instead of re-running it there.
    """
    suite = load_suite(suite_dir)
    privacy = suite.config.privacy
    settings = Settings(cjk_run=privacy.cjk_run, word_run=privacy.word_run)
    case = source_case(suite_dir, case_id, private)
    contract = contracts.derive(case, lang, privacy.flag_kinds)
    if original_miss is not None:
        flags = {f for values in contract.flags.values() for f in values}
        wrong = [m for m in original_miss if m not in flags]
        if wrong:
            raise CaseforgeError(
                f"--miss {wrong[0]}: not one of the case's flags ({', '.join(sorted(flags))})"
            )
    if reproduce is not None and reproduce not in suite.config.configs:
        raise UsageError(f"--reproduce {reproduce!r}: the suite has no such configuration")
    known = _known(suite_dir, case.id, private)
    known_original = _original(suite_dir, case, private, glossary_file, settings, known.texts)
    original, originals, spans = (
        known_original.original,
        known_original.originals,
        known_original.spans,
    )
    shape = private.read(f"shapes/{case.id}.txt")
    shape_text = (shape or "").strip() or contracts.derived_shape(contract)
    user_prompt = contracts.prompt(contract, domain, shape_text, privacy.flag_kinds)
    surrogate_info: dict[str, object] = {}
    if privacy.send == "substituted":
        section, surrogate_info = _substituted_section(case, contract, spans, private)
        user_prompt += section
    payload = Payload(
        mode=privacy.send,
        endpoint=getattr(client, "endpoint", None),
        model=getattr(client, "model", None),
        messages=[
            {"role": "system", "content": contracts.SYSTEM},
            {"role": "user", "content": user_prompt},
        ],
        schema=contracts.answer_schema(contract),
        parts={
            "domain": domain,
            "shape": shape_text,
            **{f"flag_kinds.{k}": v for k, v in privacy.flag_kinds.items()},
        },
    )
    # caseforge's own words in the request are not the original's: exempt them from runs
    # (the suite's flag_kinds are not caseforge's words: they are checked like the shape)
    own_words = [contracts.SYSTEM, contracts.prompt(contract, "", "", None)]
    payload_original = Original(
        known_original.fields,
        known_original.terms,
        [*known.texts, *own_words],
        settings,
        known_original.original.today,
    )
    findings = check_payload(payload, payload_original)
    run_id = "resynth-" + secrets.token_hex(4)
    blocked = Verification(
        "payload",
        not findings,
        "; ".join(f.message() for f in findings[:5])
        if findings
        else f"{privacy.send} payload shares nothing with the original",
    )
    if not findings and not dry_run:
        require_allowed(payload, privacy.allowed_endpoints)
    payload_path = private.write(
        f"payloads/{run_id}.json",
        json.dumps(
            {
                **payload.to_json(),
                "source_case": case.id,
                "dry_run": dry_run,
                "blocked": [f.__dict__ for f in findings],
                "shape_from": "private store" if shape else "derived from the goal state",
            },
            ensure_ascii=False,
            indent=1,
        ),
    )
    result = ResynthResult(None, False, [blocked], payload=payload, payload_path=payload_path)
    if findings or dry_run:
        result.passed = not findings
        return result
    if client is None:
        raise EnvError(
            "resynth needs a model: set synth.model in caseforge.yaml and OPENAI_API_KEY "
            "(or OPENAI_BASE_URL); --dry-run shows the request without one"
        )
    answer, _ = await client.chat_json(
        payload.messages,
        payload.schema,
        contracts.parse_answer(contract),
        temperature=0.7,
        seed=0,
        schema_name="resynthesis",
    )
    result.sent = True
    mapping = {int(k): int(v) for k, v in answer["mapping"].items()}
    variant_id = new_id or _next_id(suite_dir)
    variant = _variant(case, contract, answer, mapping, variant_id, domain, shape_text, known)
    try:
        suite.case_model.model_validate(variant)
    except ValueError as exc:
        raise CaseforgeError(f"the model's answer does not make a valid case: {exc}") from None
    text = str(variant["input"][contract.text_field])
    items = len(set(contracts.ITEM_LINE.findall(text))) or int(answer["items"])
    checks = [blocked]
    checks += [
        contracts.check_structure(contract.flags[name], variant["expect"][name]["values"], items)
        for name in contract.flags
    ]
    checks.append(contracts.check_form(contract, text))
    checks += verify_variant(original, variant)
    reproduction: Mapping[str, object] = {}
    if all(c.passed for c in checks) and reproduce is not None:
        reproduced = await _reproduce(
            suite_dir,
            case,
            suite.case_model.model_validate(variant),
            contract.flags,
            mapping,
            reproduce,
            trials,
            original_miss,
        )
        checks.append(Verification("reproduction", reproduced["reproduced"], reproduced["detail"]))
        reproduction = reproduced
    result.checks = checks
    result.variant = variant
    result.reproduction = reproduction
    if not all(c.passed for c in checks):
        private.write(
            f"rejected/{run_id}.json",
            json.dumps(
                {"variant": variant, "checks": [c.__dict__ for c in checks]},
                ensure_ascii=False,
                indent=1,
            ),
        )
        return result
    variant["provenance"] = {
        "synth_run": run_id,
        "method": "structure-preserving re-synthesis",
        "sent": privacy.send,
        "domain": domain,
        "model": getattr(client, "model", None),
        "identifier_classes_replaced": sorted(originals),
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
            "sent": privacy.send,
            "items": {str(k): v for k, v in mapping.items()},
            "originals": originals,
            **surrogate_info,
        },
    )
    write_yaml(suite_dir / "cases" / f"{variant_id}.yaml", variant)
    result.case_id = variant_id
    result.passed = True
    return result


def _variant(
    case: Case,
    contract: contracts.Contract,
    answer: dict[str, Any],
    mapping: dict[int, int],
    variant_id: str,
    domain: str,
    shape: str,
    known: _Known,
) -> dict[str, Any]:
    """The new case: every value from the model's answer or from the structure, none copied
    from the original except what is already public in the suite."""
    expect: dict[str, object] = {}
    for key, check in case.expect.items():
        if key in contract.flags:
            remapped = []
            for flag in contract.flags[key]:
                item, kind = flag.split(":", 1)
                remapped.append(f"{mapping.get(int(item), int(item))}:{kind}")
            expect[key] = {"mode": "exact_set", "values": remapped}
        elif key in contract.wording:
            new = [str(v) for v in answer["values"][key]]
            wording = contract.wording[key]
            if wording.split is not None:
                data = {
                    "must_include": new[: wording.split],
                    "must_not_include": new[wording.split :],
                }
                expect[key] = {k: v for k, v in data.items() if v}
            else:
                expect[key] = {"mode": wording.mode, "values": new}
        elif isinstance(check, IgnoreCheck):
            reason = (
                check.reason
                if check.reason in known.reasons
                else "not graded in the case this one was re-synthesised from either"
            )
            expect[key] = {"mode": "ignore", "reason": reason}
        else:  # an empty tool_calls expectation
            expect[key] = check.model_dump(mode="json", exclude_defaults=True)
    tags = [t for t in case.tags if t in known.tags and t != "must-pass"]
    tags += [str(t) for t in answer.get("tags", []) if str(t) not in tags][:3]
    inputs = {k: answer["input"][k] for k in contract.inputs}
    return {
        "id": variant_id,
        "input": inputs,
        "expect": expect,
        "tags": tags,
        "source": "synthetic",
        "added": dt.date.today().isoformat(),
        "note": f"Re-synthesised into {domain}. {shape}",
    }


async def _reproduce(
    suite_dir: Path,
    original: Case,
    variant: Case,
    fields: dict[str, list[str]],
    mapping: dict[int, int],
    config_name: str,
    trials: int,
    original_miss: list[str] | None = None,
) -> Reproduction:
    """Run the failing configuration on both; the miss reproduces when, in most trials, the
    variant misses (and adds) exactly the mapped items the original misses (and adds).

    ``original_miss`` (flags such as ``3:mismatch``) is what the configuration missed on the
    original, stated instead of re-running the agent on the original."""
    from caseforge.agent.transports import resolve_agent
    from caseforge.grade.trial import grade_trial
    from caseforge.paths import suite_paths
    from caseforge.run.executor import TrialTask
    from caseforge.run.trial import RetryPolicy, TrialRunner, clock_for, seed_for

    suite = load_suite(suite_dir)
    config = suite.config.configs[config_name]
    agent = resolve_agent(suite.config.agent, None, suite.suite_dir)
    runner = TrialRunner(
        agent, suite.config.timeout_s, RetryPolicy(), suite_paths(suite.suite_dir).work / "resynth"
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
                expected, actual = check.expected, check.actual
                if check.name in fields and isinstance(actual, list):
                    want = set(map(str, expected)) if isinstance(expected, list | tuple) else set()
                    got = set(map(str, actual))
                    missing |= {f"{check.name}:{v}" for v in want - got}
                    extra |= {f"{check.name}:{v}" for v in got - want}
            found.append((frozenset(missing), frozenset(extra)))
        return found

    def mapped(item: str) -> str:
        name, rest = item.split(":", 1)
        number, kind = rest.split(":", 1)
        return f"{name}:{mapping.get(int(number), int(number))}:{kind}"

    try:
        if original_miss is not None:
            name = next(iter(fields))
            stated: tuple[frozenset[str], frozenset[str]] = (
                frozenset(f"{name}:{m}" for m in original_miss),
                frozenset(),
            )
            before = [stated] * trials
        else:
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
        "original_miss_from": "stated" if original_miss is not None else "re-run",
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
