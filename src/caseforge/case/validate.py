"""``caseforge validate``: check a suite file by file and as a whole.

Errors: schema, id pattern, duplicate ids, reused retired ids, oracle drift, bad config.
Warnings: near-duplicate inputs, a category missing from a split, unassigned splits.
The pass streams the cases and keeps only a slim record of each, so 100,000 JSONL cases
fit in modest memory.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from caseforge.case.fix import retired_keys
from caseforge.case.load import (
    CASES_DIR,
    LoadedCase,
    iter_cases,
    load_config,
    require_suite_folder,
    suite_modes,
)
from caseforge.case.model import Case, case_model
from caseforge.case.neardup import near_duplicates
from caseforge.case.positions import locate_in_yaml
from caseforge.case.retire import RETIRED_FILE, retired_ids
from caseforge.case.split import groups_to_move, split_groups
from caseforge.case.suite import SuiteConfig, gate_metrics, gate_rule_problems
from caseforge.checks import BaseCheck, CallMatcher, ExactSetCheck, ToolCallsCheck
from caseforge.errors import CaseforgeError, Problem, did_you_mean
from caseforge.jsontypes import JSONValue
from caseforge.oracle.cache import OracleCache
from caseforge.oracle.pool import OracleAnswer, OracleCall, OraclePool, pool_size
from caseforge.paths import suite_paths
from caseforge.values import same

SPLITS = ("dev", "test")


@dataclass(frozen=True)
class CaseRecord:
    """What validate keeps of each case after checking it."""

    id: str
    path: Path
    line: int
    category: str
    split: str | None
    source: str
    text: str
    group: str | None = None
    conversation: bool = False  # compared by what its user says


@dataclass(frozen=True)
class DuplicatePair:
    """Two cases whose inputs are near-duplicates."""

    a: str
    b: str
    similarity: float


NEAR_DUPLICATES_SHOWN = 20  # the pairs `validate` prints; `--json` lists every one


@dataclass
class ValidationReport:
    """The outcome of ``caseforge validate``."""

    suite: str
    suite_dir: Path
    cases: int = 0
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    distribution: dict[str, dict[str, int]] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)
    near_duplicates: list[DuplicatePair] = field(default_factory=list)
    near_duplicate_warnings: list[Problem] = field(default_factory=list)  # also in warnings
    oracle_checks: int = 0
    oracle_cached: int = 0  # of those, answered from the cache (oracle/cache.py)
    oracle_output: list[OracleOutput] = field(default_factory=list)  # what oracles printed

    def ok(self, strict: bool = False) -> bool:
        """No errors (and, when ``strict``, no warnings)."""
        return not self.errors and not (strict and self.warnings)

    def shown_warnings(self, near_duplicates: int = NEAR_DUPLICATES_SHOWN) -> list[Problem]:
        """The warnings to print: all but the near-duplicates, then the ``near_duplicates``
        most similar pairs (``to_json`` lists every one; :meth:`hidden_pairs` counts the
        rest)."""
        near = {id(p) for p in self.near_duplicate_warnings}
        others = [p for p in self.warnings if id(p) not in near]
        return others + self._most_similar()[:near_duplicates]

    def hidden_pairs(self, near_duplicates: int = NEAR_DUPLICATES_SHOWN) -> int:
        """How many near-duplicate pairs :meth:`shown_warnings` leaves out."""
        return max(0, len(self.near_duplicate_warnings) - near_duplicates)

    def _most_similar(self) -> list[Problem]:
        ranked = sorted(
            zip(self.near_duplicates, self.near_duplicate_warnings, strict=True),
            key=lambda pair: -pair[0].similarity,
        )
        return [problem for _, problem in ranked]

    def to_json(self) -> dict[str, object]:
        """A JSON-ready mapping of the report."""
        return {
            "suite": self.suite,
            "root": str(self.suite_dir),
            "cases": self.cases,
            "ok": self.ok(),
            "errors": [p.to_json() for p in self.errors],
            "warnings": [p.to_json() for p in self.warnings],
            "distribution": self.distribution,
            "sources": self.sources,
            "near_duplicates": [
                {"a": d.a, "b": d.b, "similarity": round(d.similarity, 4)}
                for d in self.near_duplicates
            ],
            "oracle_checks": self.oracle_checks,
            "oracle_cached": self.oracle_cached,
        }


def case_text(case: Case, fields: list[str] | None) -> str:
    """The text compared for near-duplicates: the named input fields, else every string of
    the input. A conversation case is compared by what its user says (the scripted
    messages, or the simulated user's instruction and facts), with the named input fields
    when ``dedup.fields`` names some: its input is mostly what every conversation shares
    (a channel, a domain)."""
    said = _user_side(case)
    if fields:
        named = [str(case.input[f]) for f in fields if case.input.get(f) is not None]
        return "\n".join([*named, *said])
    if said:
        return "\n".join(said)
    return "\n".join(_strings(case.input))


def _user_side(case: Case) -> list[str]:
    """What the user of a conversation case says or is told to say (empty: not one)."""
    conversation = case.conversation
    if conversation is None:
        return []
    if conversation.user is not None:
        return [conversation.user.instruction, *_strings(conversation.user.facts)]
    return [step.say for step in conversation.script]


def _strings(value: object) -> list[str]:
    """Every string in a value, depth first."""
    parts: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(value)
    return parts


def _normalise(value: object, as_set: bool = False) -> object:
    """JSON-normal form for comparing an oracle's answer with the stored expectation."""
    normal: JSONValue = json.loads(json.dumps(value, default=str, sort_keys=True))
    if as_set and isinstance(normal, list):
        return sorted(json.dumps(v, sort_keys=True) for v in normal)
    return normal


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


@dataclass(frozen=True)
class OracleOutput:
    """What an oracle printed while ``validate`` called it (or its module, loading)."""

    oracle: str | None  # None: the module itself, while it was imported
    case_id: str | None
    text: str

    def lines(self) -> list[str]:
        """Each line prefixed with who printed it, as the CLI writes them to stderr."""
        who = f"oracle {self.oracle}" if self.oracle else "oracles module"
        where = f" (case {self.case_id})" if self.case_id else ""
        return [f"{who}{where}: {line}" for line in self.text.splitlines()]


@dataclass(frozen=True)
class _Pending:
    """An oracle check waiting for its answer: where it is and what it holds."""

    loaded: LoadedCase
    name: str
    check: BaseCheck


class _OracleChecker:
    """Recomputes every oracle-backed expectation and reports drift.

    The checks are collected while the cases stream by and answered together at the end:
    from the cache (``oracle/cache.py``) where the suite is unchanged, else in worker
    processes (``oracle/pool.py``), each call with ``oracle_timeout_s``."""

    def __init__(
        self, suite_dir: Path, config: SuiteConfig, report: ValidationReport, cache: bool = True
    ) -> None:
        self.suite_dir = suite_dir
        self.report = report
        self.module = suite_dir / config.oracles if config.oracles else None
        self.timeout_s = config.oracle_timeout_s
        self.use_cache = cache
        self.load_error: Problem | None = None
        if self.module is not None and not self.module.is_file():
            self.load_error = Problem(
                suite_dir / "caseforge.yaml",
                0,
                0,
                "oracles",
                f"{self.module}: oracles module not found",
            )
        self.calls: list[OracleCall] = []
        self.pending: list[_Pending] = []

    def check(self, loaded: LoadedCase) -> None:
        case = loaded.case
        for name, check in case.expect.items():
            if not isinstance(check, BaseCheck) or check.oracle is None:
                continue
            self.report.oracle_checks += 1
            if check.expected_field is None:
                self._error(
                    loaded,
                    ("expect", name, "oracle"),
                    f"expect.{name}.oracle",
                    f"mode {check.mode!r} declares no expected_field for an oracle to compute",
                )
                continue
            if self.module is None:
                message = "names an oracle but the suite config sets no `oracles` module"
                self._error(loaded, ("expect", name, "oracle"), f"expect.{name}.oracle", message)
                continue
            self.calls.append(
                OracleCall(len(self.calls), check.oracle, dict(case.input), check.args, case.id)
            )
            self.pending.append(_Pending(loaded, name, check))

    def finish(self) -> None:
        """Answer every collected check (cache first, then the workers) and report."""
        if self.module is None or self.load_error is not None:
            return
        cache = OracleCache(
            suite_paths(self.suite_dir).cache / "oracles", self.suite_dir, self.module
        )
        try:
            self._answer(cache)
        finally:
            cache.close()

    def _answer(self, cache: OracleCache) -> None:
        assert self.module is not None
        answers: dict[int, OracleAnswer] = {}
        names: list[str] | None = None
        if self.use_cache and cache.open():  # else every answer is computed, then kept
            names = cache.names
            for call in self.calls:
                found = cache.get(call)
                if found is not None:
                    answers[call.key] = found
            self.report.oracle_cached = len(answers)
        missing = [c for c in self.calls if c.key not in answers]
        if names is None or missing:
            with OraclePool(
                self.module, self.suite_dir, self.timeout_s, pool_size(len(missing))
            ) as pool:
                info = pool.module_info()
                if info.output:
                    self.report.oracle_output.append(OracleOutput(None, None, info.output))
                if info.names is None:
                    self.load_error = Problem(
                        self.suite_dir / "caseforge.yaml",
                        0,
                        0,
                        "oracles",
                        info.error or f"{self.module}: the oracles module did not load",
                    )
                    return
                names = info.names
                known = set(names)
                for call, answer in pool.run([c for c in missing if c.name in known]):
                    answers[call.key] = answer
                    if answer.output:
                        self.report.oracle_output.append(
                            OracleOutput(call.name, call.case_id, answer.output)
                        )
                done = [(c, answers[c.key]) for c in self.calls if c.key in answers]
                cache.save(names, pool.files | cache.outside, done)
        for call, pending in zip(self.calls, self.pending, strict=True):
            given = answers.get(call.key)
            if given is None:  # an oracle the module does not register
                known_names = ", ".join(sorted(names)) or "none"
                self._error(
                    pending.loaded,
                    ("expect", pending.name, "oracle"),
                    f"expect.{pending.name}.oracle",
                    f"unknown oracle {call.name!r}{did_you_mean(call.name, names)} "
                    f"(registered: {known_names})",
                )
                continue
            self._compare(pending, call, given)

    def _compare(self, pending: _Pending, call: OracleCall, answer: OracleAnswer) -> None:
        loaded, name, check = pending.loaded, pending.name, pending.check
        oracle_name, case = call.name, loaded.case
        assert check.expected_field is not None
        loc = ("expect", name, check.expected_field)
        if answer.error is not None:
            self._error(loaded, loc, f"expect.{name}", f"oracle {oracle_name!r} {answer.error}")
            return
        as_set = isinstance(check, ExactSetCheck)
        value, others = answer.value, answer.others
        stored = _normalise(check.expected, as_set)
        fresh = _normalise(value, as_set)
        retired = retired_keys(value)
        if retired:  # an oracle written for the retired convention
            self._error(
                loaded,
                loc,
                f"expect.{name}",
                f"oracle {oracle_name!r} returns {', '.join(retired)}, which no longer "
                "lists alternatives: return AnyOf(value, [each other right value, whole]) "
                "from caseforge.oracle",
            )
            return
        if not same(stored, fresh):
            self._error(
                loaded,
                loc,
                f"expect.{name}.{check.expected_field}",
                f"oracle drift in case {case.id}: file says {_short(check.expected)}, "
                f"oracle {oracle_name!r} now gives {_short(value)}",
            )
            return
        field = check.alternatives_field
        kept = list(getattr(check, field, None) or []) if field else []
        if field and not same(_normalise(kept, True), _normalise(others, True)):
            self._error(
                loaded,
                ("expect", name, field) if kept else loc,
                f"expect.{name}.{field}",
                f"oracle drift in case {case.id}: file lists alternatives {_short(kept)}, "
                f"oracle {oracle_name!r} now gives {_short(others)}",
            )
        elif others and not field:
            self._error(
                loaded,
                loc,
                f"expect.{name}",
                f"oracle {oracle_name!r} returned alternatives, which mode {check.mode!r} "
                "cannot hold (exact, number and outcome take `any_of`)",
            )

    def _error(self, loaded: LoadedCase, loc: tuple[str, ...], field: str, message: str) -> None:
        line, col = _position(loaded, loc)
        self.report.errors.append(
            Problem(loaded.path, line, col, field, message, case_id=loaded.case.id)
        )


def _position(loaded: LoadedCase, loc: tuple[str | int, ...]) -> tuple[int, int]:
    if loaded.path.suffix == ".jsonl":
        return loaded.line, 1
    return locate_in_yaml(loaded.path, loc)


class ValidationWatch(Protocol):
    """Who follows a validation as it goes (the web app's progress note). Either method may
    raise to stop it (the web app's, when nobody is looking any more)."""

    def seen(self, item: LoadedCase | None) -> None:
        """A case loaded, or (None) a case file that did not."""

    def phase(self, name: str) -> None:
        """The pass over the cases is done; ``name`` is what comes next."""


def validate_suite(
    suite_dir: str | Path,
    threshold: float | None = None,
    cache: bool = True,
    watch: ValidationWatch | None = None,
) -> ValidationReport:
    """Validate a suite; the report holds every error and warning found. ``cache=False``
    recomputes every oracle instead of reusing the answers of an unchanged suite; ``watch``
    hears of each case as it is read, and of each later phase."""
    suite_dir = Path(suite_dir)
    require_suite_folder(suite_dir)  # a wrong path is a usage error, not an invalid suite
    try:
        config = load_config(suite_dir)
    except CaseforgeError as exc:
        report = ValidationReport(suite=suite_dir.name, suite_dir=suite_dir)
        report.errors.extend(exc.problems)
        return report
    report = ValidationReport(suite=config.name, suite_dir=suite_dir)
    if not (suite_dir / CASES_DIR).is_dir():
        report.errors.append(Problem(suite_dir / CASES_DIR, 0, 0, "", "no cases folder"))
        return report

    retired: set[str] = set()
    try:
        retired = retired_ids(suite_dir)
    except CaseforgeError as exc:
        report.errors.extend(exc.problems)

    try:
        model = case_model(suite_modes(suite_dir, config))
    except CaseforgeError as exc:
        report.errors.extend(
            exc.problems or [Problem(suite_dir / "caseforge.yaml", 0, 0, "checks", exc.text)]
        )
        return report
    oracles = _OracleChecker(suite_dir, config, report, cache)
    records: list[CaseRecord] = []
    first_seen: dict[str, CaseRecord] = {}
    dedup_fields = config.dedup.fields
    tags: set[str] = set()
    item_fields: set[str] = set()
    for item in iter_cases(suite_dir, model):
        if watch is not None:
            watch.seen(None if isinstance(item, Problem) else item)
        if isinstance(item, Problem):
            report.errors.append(item)
            continue
        case = item.case
        size = item.path.stat().st_size if item.path.suffix != ".jsonl" else 0
        if size > LARGE_CASE_BYTES:
            report.warnings.append(
                Problem(
                    item.path,
                    1,
                    1,
                    "",
                    f"{size / 1e6:.1f} MB in one case file: keep large data in fixtures or "
                    "the suite's data folder, so reviews and diffs stay readable",
                    severity="warning",
                    case_id=case.id,
                )
            )
        tags.update(case.tags)
        item_fields.update(case.item_fields())
        record = CaseRecord(
            id=case.id,
            path=item.path,
            line=item.line,
            category=case.category(),
            split=case.split,
            source=case.source,
            text=case_text(case, dedup_fields),
            group=case.group,
            conversation=case.conversation is not None,
        )
        line, col = (item.line, 1) if item.path.suffix == ".jsonl" else (1, 1)
        if case.id in first_seen:
            other = first_seen[case.id]
            report.errors.append(
                Problem(
                    item.path,
                    line,
                    col,
                    "id",
                    f"duplicate id {case.id!r}: also in {other.path}:{other.line}",
                    case_id=case.id,
                )
            )
            continue
        first_seen[case.id] = record
        if case.id in retired:
            report.errors.append(
                Problem(
                    item.path,
                    line,
                    col,
                    "id",
                    f"id {case.id!r} was retired (see {suite_dir / RETIRED_FILE}); "
                    "ids are never reused, pick a new one",
                    case_id=case.id,
                )
            )
        oracles.check(item)
        report.warnings.extend(_repeated_items(item))
        if config.outcome_probe is None:
            for key, check in case.expect.items():
                if getattr(check, "mode", None) == "outcome":
                    line, col = _position(item, ("expect", key))
                    report.errors.append(
                        Problem(
                            item.path,
                            line,
                            col,
                            f"expect.{key}",
                            "an outcome check needs `outcome_probe:` in caseforge.yaml "
                            "(the function that reads what the run left in its workspace)",
                            case_id=case.id,
                        )
                    )
        records.append(record)
        provenance = case.provenance
        if provenance.get("synth_run") and not (
            provenance.get("reviewed_by") and provenance.get("reviewed_on")
        ):
            report.warnings.append(
                Problem(
                    item.path,
                    line,
                    col,
                    "provenance.reviewed_by",
                    "synthesized case not re-read yet: a person reads it, then fills "
                    "provenance.reviewed_by and reviewed_on",
                    severity="warning",
                    case_id=case.id,
                )
            )

    if watch is not None:
        watch.phase("oracles")
    oracles.finish()
    if oracles.load_error is not None:  # broken even when no case names an oracle
        line, col = locate_in_yaml(suite_dir / "caseforge.yaml", ("oracles",))
        error = oracles.load_error
        report.errors.append(Problem(error.path, line, col, error.field, error.message))
    report.cases = len(records)
    case_failed = any(p.path.name != "caseforge.yaml" for p in report.errors)
    if records:  # with no case loaded, every tag would look unknown
        gate_problems = _gate_problems(suite_dir, config, tags, item_fields)
        if case_failed:  # the tag may be on the case that did not load: fix that first
            gate_problems = [p for p in gate_problems if not p.field.endswith(".tag")]
        report.errors.extend(gate_problems)
    elif not report.errors:
        report.errors.append(
            Problem(
                suite_dir / "cases",
                0,
                0,
                "",
                "the suite has no cases: add a case file (`caseforge init` shows one)",
            )
        )
    _distribution(report, records, config)
    if watch is not None:
        watch.phase("near-duplicates")
    _near_duplicates(report, records, config, threshold)
    report.errors.sort(key=lambda p: (str(p.path), p.line, p.col))
    return report


LARGE_CASE_BYTES = 1_000_000  # a case file above this gets a warning


def _repeated_items(loaded: LoadedCase) -> list[Problem]:
    """An ``exact_set`` whose ``values`` repeat an item compares sets, so ``[a, a]`` is
    ``[a]``: a warning, unless it keeps duplicates. Read under ``expect``, under each
    scripted message's ``expect``, and in the argument checks of tool-call matchers."""
    case = loaded.case
    places: list[tuple[tuple[str | int, ...], object]] = [
        (("expect", key), check) for key, check in case.expect.items()
    ]
    if case.conversation is not None:
        for index, step in enumerate(case.conversation.script):
            where = ("conversation", "script", index, "expect")
            places += [((*where, key), check) for key, check in step.expect.items()]
    found = []
    for loc, check in places:
        for at, inner in _exact_sets(loc, check):
            repeated = inner.repeated()
            if not repeated or inner.duplicates == "keep":
                continue
            line, col = _position(loaded, (*at, "values"))
            items = ", ".join(json.dumps(v, ensure_ascii=False, default=str) for v in repeated)
            found.append(
                Problem(
                    loaded.path,
                    line,
                    col,
                    ".".join(str(part) for part in (*at, "values")),
                    f"exact_set values repeat {items}: a set holds each item once, so the "
                    "repeat checks nothing; write each item once, or add `duplicates: keep` "
                    "to count repeats",
                    severity="warning",
                    case_id=case.id,
                )
            )
    return found


def _exact_sets(
    loc: tuple[str | int, ...], check: object
) -> list[tuple[tuple[str | int, ...], ExactSetCheck]]:
    """The ``exact_set`` checks in one check: itself, or its tool-call argument checks."""
    if isinstance(check, ExactSetCheck):
        return [(loc, check)]
    if not isinstance(check, ToolCallsCheck):
        return []
    found = []
    lists: list[tuple[tuple[str | int, ...], list[CallMatcher]]] = [
        (("must_call",), check.must_call),
        (("must_not_call",), check.must_not_call),
    ]
    several = len(check.chains) > 1
    lists += [
        (("order", n) if several else ("order",), chain) for n, chain in enumerate(check.chains)
    ]
    for path, matchers in lists:
        for index, matcher in enumerate(matchers):
            for arg, value in matcher.args.items():
                if isinstance(value, dict) and value.get("mode") == "exact_set":
                    inner = ExactSetCheck.model_validate(value)
                    found.append(((*loc, *path, index, "args", arg), inner))
    return found


def _gate_problems(
    suite_dir: Path, config: SuiteConfig, tags: set[str], item_fields: set[str]
) -> list[Problem]:
    """Gate rules that would pass whatever the run did: an unknown metric or tag."""
    path = suite_dir / "caseforge.yaml"
    metrics = gate_metrics(config.trials, item_fields)
    found = []
    for index, key, message in gate_rule_problems(config.gate.rules, metrics, tags):
        line, col = locate_in_yaml(path, ("gate", "rules", index, key))
        found.append(Problem(path, line, col, f"gate.rules.{index}.{key}", message))
    return found


def _distribution(report: ValidationReport, records: list[CaseRecord], config: SuiteConfig) -> None:
    table: dict[str, dict[str, int]] = defaultdict(lambda: {"dev": 0, "test": 0, "unassigned": 0})
    for r in records:
        table[r.category][r.split or "unassigned"] += 1
    report.distribution = {k: table[k] for k in sorted(table)}
    report.sources = dict(sorted(Counter(r.source for r in records).items()))
    suite_file = report.suite_dir / "caseforge.yaml"
    unassigned = sum(row["unassigned"] for row in table.values())
    if unassigned:
        report.warnings.append(
            Problem(
                suite_file,
                0,
                0,
                "split",
                f"{unassigned} case(s) have no split; run `caseforge split SUITE --write`",
                severity="warning",
            )
        )
    where = {r.id: r for r in records}
    for group, ids in split_groups([(r.id, r.group, r.split) for r in records]).items():
        first = where[ids[0]]
        report.warnings.append(
            Problem(
                first.path,
                first.line,
                1,
                "group",
                f"group {group!r} is split across dev and test ({', '.join(ids)}): a "
                "family on both sides leaks the test set; run `caseforge split SUITE "
                "--reassign --write`",
                severity="warning",
            )
        )
    dev_only = config.split.dev_only
    placed = [(r.category, r.group, r.split) for r in records if r.split]
    for category, row in report.distribution.items():
        total = row["dev"] + row["test"] + row["unassigned"]
        for split in SPLITS:
            if split == "test" and category in dev_only:
                continue  # accepted: the suite says so
            if total >= 2 and row[split] == 0 and row["unassigned"] == 0:
                grouped = all(r.group for r in records if r.category == category)
                message = (
                    _groups_to_move(category, split, placed)
                    if grouped
                    else f"category {category!r} has no case in {split}: give one of its cases "
                    f"without a group `split: {split}`"
                )
                if split == "test":
                    message += (
                        f", or accept it as dev-only (`split: {{dev_only: [{category}]}}` in "
                        "caseforge.yaml)"
                    )
                report.warnings.append(
                    Problem(suite_file, 0, 0, "split", message, severity="warning")
                )
    for index, category in enumerate(dev_only):
        counts = report.distribution.get(category)
        if counts is not None and not counts["test"]:
            continue
        line, col = locate_in_yaml(suite_file, ("split", "dev_only", index))
        why = (
            "no case has it"
            if counts is None
            else (
                f"{counts['test']} of its cases {'is' if counts['test'] == 1 else 'are'} in "
                f"test: move {'it' if counts['test'] == 1 else 'them'} to dev, or take it out of "
                "dev_only"
            )
        )
        report.warnings.append(
            Problem(
                suite_file,
                line,
                col,
                f"split.dev_only.{index}",
                f"dev-only category {category!r}: {why}",
                severity="warning",
            )
        )


def _groups_to_move(category: str, side: str, placed: list[tuple[str, str | None, str]]) -> str:
    """Why a category whose cases are all in groups lacks ``side``, and which groups to move
    there (at most three, those that leave no other category without a case first)."""
    other = "test" if side == "dev" else "dev"
    start = (
        f"category {category!r} has no case in {side}, and its cases are all in groups, which "
        "stay on one side"
    )
    moves = groups_to_move(placed, category, side)
    fine = [move for move in moves if not move.empties]
    if fine:
        named = " or ".join(
            f"group {m.group!r} ({m.cases} case{'s' if m.cases != 1 else ''}, {m.in_category} "
            f"in {category})"
            for m in fine[:GROUPS_NAMED]
        )
        more = f" (or one of {len(fine) - GROUPS_NAMED} more)" if len(fine) > GROUPS_NAMED else ""
        return (
            f"{start}: move {named}{more} to {side} (give one of its cases `split: {side}` and "
            "a `note` saying why, then run `caseforge split SUITE --write`)"
        )
    if not moves:
        return start
    named = "; ".join(
        f"moving group {m.group!r} to {side} would leave "
        f"{', '.join(repr(c) for c in m.empties)} with no case in {other}"
        for m in moves[:GROUPS_NAMED]
    )
    more = (
        f" (and {len(moves) - GROUPS_NAMED} more groups, each emptying another category)"
        if len(moves) > GROUPS_NAMED
        else ""
    )
    return f"{start}; {named}{more}"


GROUPS_NAMED = 3  # the groups a warning about a category without a side names


def _near_duplicates(
    report: ValidationReport,
    records: list[CaseRecord],
    config: SuiteConfig,
    threshold: float | None,
) -> None:
    limit = config.dedup.threshold if threshold is None else threshold
    pairs = near_duplicates(
        [r.text for r in records], limit, config.dedup.ngram, config.dedup.exact_max_cases
    )
    for pair in pairs:
        a, b = records[pair.a], records[pair.b]
        report.near_duplicates.append(DuplicatePair(a.id, b.id, pair.similarity))
        problem = Problem(
            b.path,
            b.line,
            1,
            "conversation" if b.conversation else "input",
            f"near-duplicate of {a.id} ({a.path}:{a.line}): "
            f"{config.dedup.ngram}-gram Jaccard {pair.similarity:.2f} >= {limit:.2f}",
            severity="warning",
            case_id=b.id,
        )
        report.warnings.append(problem)
        report.near_duplicate_warnings.append(problem)
