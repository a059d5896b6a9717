"""Two-step synthesis, step two: one model call per tuple writes the ticket; the drafts go to
a review queue (``SUITE/synth/queue.jsonl``) with their provenance, near-duplicates flagged.

The prompt template is the suite's ``synth/prompt.md`` (placeholders ``{scenario}``,
``{persona}``, ``{shape}``, ``{facts}``), else a built-in one; the facts come from the
business data through the suite's ``synth.facts`` hook (``module:function(input) -> str``).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caseforge.agent.transports import configured_object
from caseforge.case.load import load_suite
from caseforge.case.neardup import jaccard, shingles
from caseforge.case.validate import case_text
from caseforge.errors import CaseforgeError
from caseforge.files import write_atomic
from caseforge.synth.tuples import load_dimensions

if TYPE_CHECKING:
    from caseforge.llm.client import ModelClient

SYNTH_DIR = "synth"
TUPLES_FILE = "tuples.jsonl"
QUEUE_FILE = "queue.jsonl"
PROMPT_FILE = "prompt.md"
NEAR_DUPLICATE = 0.8

DEFAULT_PROMPT = """You are writing one realistic customer support ticket for a test suite.
What the customer wants: {scenario}
Who the customer is: {persona}
How the ticket is written: {shape}
Facts you may use (use some, all or none; never invent ids or amounts not listed here):
{facts}
Write in the customer's own first-person voice, the way a real person types into a support
box. Do not write the support team's answer, a title, quotes or any explanation: only the
ticket text."""


@dataclass
class Draft:
    """A written ticket waiting for review."""

    draft_id: str
    tuple_id: str
    tuple: dict[str, str]
    input: dict[str, object]
    expect: dict[str, object]
    text: str
    model: str
    prompt_hash: str
    synth_run: str
    text_field: str = "ticket"
    near_duplicates: list[str] = field(default_factory=list)
    status: str = "pending"  # pending | accepted | edited | rejected
    reason: str = ""
    case_id: str | None = None
    reviewed_by: str = ""
    reviewed_on: str | None = None


def synth_dir(suite_dir: Path) -> Path:
    return suite_dir / SYNTH_DIR


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The objects of a JSONL file (none when it does not exist); a bad line is a one-line error."""
    if not path.is_file():
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise CaseforgeError(f"{path}:{number}:{exc.colno}: invalid JSON: {exc.msg}") from None
    return rows


def write_jsonl(path: Path, rows: Iterable[Mapping[str, object]]) -> None:
    write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def read_queue(suite_dir: Path) -> tuple[list[Draft], list[tuple[int, str]]]:
    """The review queue's drafts, and ``(line, problem)`` for each line that is not one (not
    JSON, not an object, or missing a draft's fields): the review screen shows those as
    error rows and the other drafts as usual."""
    path = synth_dir(suite_dir) / QUEUE_FILE
    if not path.is_file():
        return [], []
    drafts: list[Draft] = []
    broken: list[tuple[int, str]] = []
    names = {f.name for f in fields(Draft)}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            broken.append((number, f"{path}:{number}:{exc.colno}: invalid JSON: {exc.msg}"))
            continue
        problem = _draft_problem(row, names)
        if problem:
            broken.append((number, f"{path}:{number}: {problem}"))
            continue
        drafts.append(Draft(**row))
    return drafts, broken


def _draft_problem(row: object, names: set[str]) -> str | None:
    if not isinstance(row, dict):
        return f"a draft is a JSON object, not {type(row).__name__}"
    required = {
        f.name for f in fields(Draft) if f.default is MISSING and f.default_factory is MISSING
    }
    missing = sorted(required - set(row))
    if missing:
        return f"not a draft: no {', '.join(missing)}"
    unknown = sorted(set(row) - names)
    if unknown:
        return f"not a draft: unknown field {unknown[0]!r}"
    for name in ("draft_id", "text", "status"):
        if not isinstance(row.get(name), str):
            return f"{name}: must be a string"
    for name in ("tuple", "input", "expect"):
        if not isinstance(row.get(name), dict):
            return f"{name}: must be an object"
    return None


def load_queue(suite_dir: Path) -> list[Draft]:
    """The review queue's drafts; a line that is not one is a one-line error naming it."""
    drafts, broken = read_queue(suite_dir)
    if broken:
        raise CaseforgeError(broken[0][1])
    return drafts


def save_queue(suite_dir: Path, drafts: list[Draft]) -> None:
    write_jsonl(synth_dir(suite_dir) / QUEUE_FILE, [asdict(d) for d in drafts])


def prompt_template(suite_dir: Path) -> str:
    path = synth_dir(suite_dir) / PROMPT_FILE
    return path.read_text(encoding="utf-8") if path.is_file() else DEFAULT_PROMPT


def flag_near_duplicates(
    drafts: list[Draft], existing: dict[str, str], threshold: float = NEAR_DUPLICATE
) -> None:
    """Mark drafts whose text is a near-duplicate of a suite case or another draft."""
    grams = {d.draft_id: shingles(d.text) for d in drafts}
    suite_grams = {cid: shingles(text) for cid, text in existing.items()}
    for index, draft in enumerate(drafts):
        mine = grams[draft.draft_id]
        hits = [cid for cid, g in suite_grams.items() if jaccard(mine, g) >= threshold]
        hits += [
            f"draft {other.draft_id}"
            for other in drafts[:index]
            if jaccard(mine, grams[other.draft_id]) >= threshold
        ]
        draft.near_duplicates = hits


async def write_drafts(
    suite_dir: Path, client: ModelClient, limit: int | None = None
) -> list[Draft]:
    """Write a ticket for every tuple that has no draft yet; append them to the queue."""
    suite = load_suite(suite_dir)
    dims = load_dimensions(suite_dir)
    tuples = read_jsonl(synth_dir(suite_dir) / TUPLES_FILE)
    if not tuples:
        raise CaseforgeError(
            f"{synth_dir(suite_dir) / TUPLES_FILE}: no tuples; run `caseforge synth tuples` first"
        )
    queue = load_queue(suite_dir)
    done = {d.tuple_id for d in queue}
    todo = [t for t in tuples if t["tuple_id"] not in done][:limit]
    template = prompt_template(suite_dir)
    prompt_hash = hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]
    settings = suite.config.synth
    hook = getattr(settings, "facts", None) if settings else None
    facts_fn = configured_object(hook, suite.suite_dir, "synth", "facts") if hook else None
    run_id = "synth-" + secrets.token_hex(4)
    drafts: list[Draft] = []
    for row in todo:
        values = row["tuple"]
        facts = (
            facts_fn(dict(row["input"]))
            if facts_fn
            else json.dumps(row["input"], ensure_ascii=False)
        )
        prompt = template.format(
            scenario=dims.scenarios[values["scenario"]].description,
            persona=dims.personas[values["persona"]].description,
            shape=dims.shapes[values["shape"]].description,
            facts=facts,
        )
        result = await client.chat(
            [{"role": "user", "content": prompt}],
            temperature=0.9,
            seed=int(hashlib.sha256(row["tuple_id"].encode()).hexdigest()[:8], 16),
            scope={"tuple": row["tuple_id"]},
        )
        text = result.text.strip().strip('"「」“”')
        drafts.append(
            Draft(
                draft_id=f"{run_id}-{len(drafts) + 1:03d}",
                tuple_id=row["tuple_id"],
                tuple=values,
                input={**row["input"], dims.text_field: text},
                expect=row["expect"],
                text=text,
                model=client.model,
                prompt_hash=prompt_hash,
                synth_run=run_id,
                text_field=dims.text_field,
            )
        )
    existing = {c.case.id: case_text(c.case, suite.config.dedup.fields) for c in suite.cases}
    pending = [d for d in queue if d.status == "pending"]
    flag_near_duplicates(pending + drafts, existing, suite.config.dedup.threshold)
    save_queue(suite_dir, queue + drafts)
    return drafts
