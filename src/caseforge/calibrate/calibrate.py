"""``caseforge calibrate``: how far the LLM judge can be trusted, measured against people.

For every labeled output in ``SUITE/labels/`` the judge judges the same facts; the report
gives raw agreement, Cohen's κ and the confusion matrix, overall and per fact, and lists
the disagreements to read. Two bias probes:

- verbosity: the same output padded with irrelevant text must get the same verdict;
- position: for two outputs of one case, asking "which is better" in both orders must
  name the same output; a flip means the judge prefers a position.

The judge's HTTP exchanges are recorded in ``SUITE/labels/judge-recordings/`` (with
``--record``) and replayed offline, so the calibration can be re-checked in CI.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from caseforge.agent.fixtures import FixtureMode, FixtureStore, FixtureTransport
from caseforge.calibrate.agreement import Agreement, cohen_kappa
from caseforge.calibrate.labels import VERDICTS, LabeledOutput, labels_dir, load_labels
from caseforge.case.load import load_suite
from caseforge.checks import JudgeCheck
from caseforge.errors import CaseforgeError
from caseforge.grade.judge import Judge, make_judge
from caseforge.llm.cache import LLMCache
from caseforge.llm.client import ModelClient, ModelError
from caseforge.paths import suite_paths

RECORDINGS = "judge-recordings"
REPLAY_BASE_URL = "http://judge-recordings.invalid/v1"
PADDING = (
    "\n\n(Unrelated notes: our office moved to the third floor last spring, the cafeteria "
    "now opens at eight, and the quarterly newsletter will cover the new parking rules. "
    "以下内容与本问题无关：公司年会定在十二月，停车场将重新划线，茶水间增加了咖啡机。)"
)


@dataclass
class Disagreement:
    case: str
    fact: str
    human: str
    judge: str
    reason: str
    output: str


@dataclass
class CalibrationResult:
    judge: dict[str, object]
    mode: str
    outputs: int
    overall: Agreement
    per_fact: dict[str, Agreement]
    disagreements: list[Disagreement]
    not_judged: list[str]
    verbosity: dict[str, float | None] = field(default_factory=dict)  # probes, flips, flip_rate
    position: dict[str, float | None] = field(default_factory=dict)  # pairs, flips, flip_rate

    def to_json(self) -> dict[str, object]:
        def agreement(a: Agreement) -> dict[str, object]:
            return {
                "n": a.n,
                "agreement": a.agreement,
                "kappa": a.kappa,
                "labels": list(a.labels),
                "confusion": a.confusion,
            }

        return {
            "judge": self.judge,
            "mode": self.mode,
            "outputs": self.outputs,
            "overall": agreement(self.overall),
            "per_fact": {k: agreement(v) for k, v in self.per_fact.items()},
            "disagreements": [d.__dict__ for d in self.disagreements],
            "not_judged": self.not_judged,
            "verbosity": self.verbosity,
            "position": self.position,
        }


def _mode(record: bool, live: bool, folder: Path) -> FixtureMode | None:
    if record:
        return FixtureMode.RECORD
    if live:
        return None
    if folder.is_dir() and any(folder.glob("*.json")):
        return FixtureMode.REPLAY
    return None


def judge_factory(
    suite_dir: Path, record: bool = False, live: bool = False
) -> tuple[str, Callable[[str], Judge]]:
    """How the judge is reached: (mode name, a function case_id -> Judge)."""
    suite = load_suite(suite_dir)
    settings = suite.config.judge
    folder = labels_dir(suite_dir) / RECORDINGS
    mode = _mode(record, live, folder)
    # Recording means asking the endpoint: only --live may answer from the cache.
    cache = LLMCache(suite_paths(suite_dir).llm_cache) if mode is None else None
    store = (
        FixtureStore(suite_dir, mode, folder, "run `caseforge calibrate --record` to record them")
        if mode is not None
        else None
    )

    def make(case_id: str) -> Judge:
        http = (
            httpx.AsyncClient(transport=FixtureTransport(store.session(case_id)))
            if store is not None
            else None
        )
        replay: ModelClient | None = None
        if mode is FixtureMode.REPLAY:
            if settings is None:
                raise CaseforgeError(f"{suite_dir / 'caseforge.yaml'}: no judge.model to replay")
            replay = ModelClient(
                model=settings.model, base_url=REPLAY_BASE_URL, http_client=http, max_attempts=1
            )
        judge = make_judge(settings, suite.config.prices, client=replay, http_client=http)
        if judge is None:
            raise CaseforgeError(
                "no judge to calibrate: set judge.model in caseforge.yaml and OPENAI_API_KEY "
                f"(or OPENAI_BASE_URL), or ship recordings in {folder}"
            )
        if replay is None:
            judge.client.cache = cache
        return judge

    make.store = store  # type: ignore[attr-defined]
    make.cache = cache  # type: ignore[attr-defined]
    return (mode.value if mode else "live"), make


async def calibrate(
    suite_dir: Path, record: bool = False, live: bool = False, probes: bool = True
) -> CalibrationResult:
    """Judge every labeled output and measure agreement with the people who labeled it."""
    suite = load_suite(suite_dir)
    cases = {c.case.id: c.case for c in suite.cases}
    labeled = load_labels(suite_dir)
    if not labeled:
        raise CaseforgeError(
            f"no labels in {labels_dir(suite_dir)}: label outputs with `caseforge label RUN`"
        )
    mode, make = judge_factory(suite_dir, record, live)
    humans: list[str] = []
    judged: list[str] = []
    by_fact: dict[str, tuple[list[str], list[str]]] = {}
    disagreements: list[Disagreement] = []
    not_judged: list[str] = []
    verbosity_flips = verbosity_total = 0
    position_flips = position_total = 0
    description: dict[str, object] = {}
    outputs = 0
    for case_labels in labeled:
        case = cases.get(case_labels.case)
        if case is None:
            not_judged.append(f"{case_labels.case}: no such case in the suite")
            continue
        judge = make(case.id)
        description = dict(judge.description)
        verdicts_by_item: list[tuple[LabeledOutput, bool]] = []
        rubric_facts: list[str] = []
        for item in case_labels.items:
            check = case.expect.get(item.check)
            if not isinstance(check, JudgeCheck) or not check.values:
                not_judged.append(f"{case.id}: expect.{item.check} is not a facts judge check")
                continue
            unknown = [f for f in item.labels if f not in check.values]
            if unknown:
                not_judged.append(f"{case.id}: labels name facts the case lacks: {unknown}")
                continue
            try:
                verdict = await judge.judge(check, item.output, case.input)
            except ModelError as exc:
                not_judged.append(f"{case.id} [{item.digest()}]: {exc}")
                continue
            outputs += 1
            rubric_facts = list(check.values)
            assert verdict.facts is not None
            for fact in verdict.facts:
                if fact.fact not in item.labels:
                    continue
                human = item.labels[fact.fact]
                humans.append(human)
                judged.append(fact.verdict)
                pair = by_fact.setdefault(fact.fact, ([], []))
                pair[0].append(human)
                pair[1].append(fact.verdict)
                if human != fact.verdict:
                    disagreements.append(
                        Disagreement(
                            case.id, fact.fact, human, fact.verdict, fact.reason, item.output
                        )
                    )
            verdicts_by_item.append((item, verdict.passed))
            if probes:
                try:
                    padded = await judge.judge(check, item.output + PADDING, case.input)
                    verbosity_total += 1
                    verbosity_flips += padded.passed != verdict.passed
                except ModelError as exc:
                    not_judged.append(f"{case.id} [{item.digest()}] verbosity probe: {exc}")
        if probes:
            rubric = "conveys these facts correctly and completely: " + "; ".join(rubric_facts)
            for (a, _), (b, _) in itertools.combinations(verdicts_by_item, 2):
                if a.output == b.output:
                    continue
                try:
                    ab = await judge.pairwise(rubric, a.output, b.output, case.input)
                    ba = await judge.pairwise(rubric, b.output, a.output, case.input)
                except ModelError as exc:
                    not_judged.append(f"{case.id} position probe: {exc}")
                    continue
                position_total += 1
                position_flips += ab == ba  # the same position won both times
        await judge.client.aclose()
    store = getattr(make, "store", None)
    if store is not None:
        store.flush()
    cache = getattr(make, "cache", None)
    if cache is not None:
        cache.close()
    return CalibrationResult(
        judge=description,
        mode=mode,
        outputs=outputs,
        overall=cohen_kappa(humans, judged, VERDICTS),
        per_fact={f: cohen_kappa(h, j, VERDICTS) for f, (h, j) in sorted(by_fact.items())},
        disagreements=disagreements,
        not_judged=not_judged,
        verbosity={
            "probes": verbosity_total,
            "flips": verbosity_flips,
            "flip_rate": verbosity_flips / verbosity_total if verbosity_total else None,
        },
        position={
            "pairs": position_total,
            "flips": position_flips,
            "flip_rate": position_flips / position_total if position_total else None,
        },
    )


def calibration_text(result: CalibrationResult) -> str:
    o = result.overall
    judge = result.judge
    lines = [
        f"calibration of the judge {judge.get('model')} ({judge.get('prompt_version')} "
        f"{judge.get('prompt_hash')}, {result.mode}) on {result.outputs} labeled outputs, "
        f"{o.n} fact labels",
    ]
    if o.n:
        lines.append(f"agreement {o.agreement:.1%} · Cohen's κ {o.kappa:.3f}")
        width = max(len(v) for v in o.labels) + 2
        lines.append("confusion (rows: people, columns: judge):")
        lines.append(" " * (width + 2) + "".join(v.rjust(width) for v in o.labels))
        for label, row in zip(o.labels, o.confusion, strict=True):
            lines.append("  " + label.ljust(width) + "".join(str(x).rjust(width) for x in row))
        lines.append("per fact:")
        for fact, a in result.per_fact.items():
            kappa = f"κ {a.kappa:.2f}" if a.kappa is not None else "κ n/a"
            lines.append(f"  {fact}: {a.agreement:.0%} of {a.n} ({kappa})")
    if result.disagreements:
        lines.append(f"disagreements to read ({len(result.disagreements)}):")
        for d in result.disagreements:
            lines.append(f"  {d.case} · {d.fact}: people {d.human}, judge {d.judge} — {d.reason}")
    v, p = result.verbosity, result.position
    if v.get("probes"):
        lines.append(
            f"verbosity probe: {v['flips']} of {v['probes']} verdicts changed when the output "
            f"was padded ({v['flip_rate']:.1%})"
        )
    if p.get("pairs"):
        lines.append(
            f"position probe: {p['flips']} of {p['pairs']} pairs flipped with the order "
            f"({p['flip_rate']:.1%})"
        )
    for reason in result.not_judged:
        lines.append(f"not judged: {reason}")
    return "\n".join(lines)
