"""``caseforge import inspect``: an Inspect AI sample dataset (JSON, JSONL or CSV) as cases.

Each ``Sample`` becomes one case, read as Inspect's default field spec reads it:

- ``input``: a string becomes ``input.message``. Chat messages: the system messages become
  ``input.system``; one user message is ``input.message``; several user messages make a
  conversation case whose scripted user says each in turn (the dataset's own assistant and
  tool messages between them are not replayed: the agent writes its own turns; the report
  says so, and ``provenance.messages`` keeps them).
- ``target``: what the reply is checked against, by ``--scorer`` (a dataset does not say how
  it is scored: that is the task's code). A list means any one of them.

  - ``includes`` (the default) → ``must_include``, case-insensitive as Inspect's
    ``includes()``; a list → ``match: any``.
  - ``match`` → ``regex``: the target at the end of the reply, any case, punctuation and
    spaces at the ends ignored, as Inspect's ``match()`` with its defaults (location
    ``end``, ``ignore_case``; not ``numeric``).
  - ``exact`` → ``exact`` with ``case_sensitive: false`` and ``normalize: true``; a list →
    ``any_of``.
  - ``judge`` → ``judge`` with a rubric naming the target.

  A sample without a target gets an ``ignore`` check saying so.
- ``choices`` → ``input.choices``; ``id`` → the case id (slugified, with the file's name
  before it; ``--prefix``), the original in ``provenance``; ``metadata`` →
  ``provenance.metadata``; ``description`` → the case's ``note``.
- ``files``, ``setup`` and ``sandbox`` cannot be held by a case: each is reported and kept
  in ``provenance``. Other fields, which Inspect's default field spec does not read either,
  are kept in ``provenance.fields`` and reported.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from caseforge.errors import DatasetError, UsageError
from caseforge.interop.ids import join, slugify
from caseforge.interop.records import Record, file_format, read_records
from caseforge.interop.report import ImportReport, Item
from caseforge.interop.suite import SuiteWriter, source_name

Scorer = Literal["includes", "match", "exact", "judge"]
SCORERS: tuple[Scorer, ...] = ("includes", "match", "exact", "judge")
FORMAT = "inspect"
CHECK_FIELD = "reply"  # Inspect scores the model's completion: the agent's reply
KNOWN = {"input", "target", "choices", "id", "metadata", "description", "files", "setup",
         "sandbox"}  # fmt: skip
NOT_HELD = ("files", "setup", "sandbox")
# The ends Inspect's match() strips before comparing (whitespace and ASCII punctuation).
_ENDS = "[" + re.escape(string.whitespace + string.punctuation) + "]*"

SCORER_NOTES: dict[str, str] = {
    "includes": "scorer includes: each target is a `must_include` on the reply, "
    "case-insensitive as Inspect's includes() is by default.",
    "match": "scorer match: each target is a `regex` on the reply: the target at its end, any "
    "case, whitespace and punctuation at the ends ignored, as Inspect's match() does with its "
    "defaults (location end, ignore_case). Its numeric=True and other locations are not "
    "expressed.",
    "exact": "scorer exact: each target is an `exact` check on the reply with case_sensitive: "
    "false and normalize: true. Inspect's exact() also drops punctuation and the articles "
    "(a, an, the) and reads numbers as numbers: a reply that differs from the target only "
    "there passes in Inspect and fails here.",
    "judge": "scorer judge: each target becomes the rubric of a `judge` check. Inspect's "
    "model_graded_qa() prompt and grading scale differ from caseforge's judge; configure "
    "`judge:` in caseforge.yaml to grade them.",
}


@dataclass(frozen=True)
class InspectImport:
    """What ``caseforge import inspect`` was asked for."""

    dataset: Path
    suite: Path
    scorer: Scorer = "includes"
    prefix: str | None = None  # default: the dataset file's name, slugified


def import_inspect(request: InspectImport, dry_run: bool = False) -> ImportReport:
    """Read the dataset, write the suite (unless ``dry_run``), return the report.

    Raises:
        UsageError: an unknown scorer, a dataset that is not there or not JSON/JSONL/CSV.
        DatasetError: a sample Inspect would not read either (file, line and field named),
            or an imported case that does not validate.
    """
    if request.scorer not in SCORERS:
        raise UsageError(f"--scorer must be one of {', '.join(SCORERS)}, not {request.scorer!r}")
    path = request.dataset
    fmt = file_format(path, ("json", "jsonl", "csv"))
    records = read_records(path, fmt)
    source = source_name(path, request.suite)
    report = ImportReport(FORMAT, str(path), str(request.suite))
    report.notes.append(SCORER_NOTES[request.scorer])
    writer = SuiteWriter(
        request.suite,
        FORMAT,
        source,
        report,
        config={"description": f"Imported from the Inspect AI dataset {path.name}."},
    )
    prefix = slugify(path.stem) if request.prefix is None else slugify(request.prefix, "")
    with_choices = 0
    for record in records:
        item = report.item(record.where, record.fields.get("id"))
        data = _case(record, path, fmt, request.scorer, item)
        with_choices += "choices" in record.fields and bool(record.fields["choices"])
        original = record.fields.get("id")
        wanted = join(prefix, slugify(original) if original is not None else str(record.number))
        writer.add(item, wanted or "sample", data, original)
    if with_choices:
        report.notes.append(
            f"choices ({with_choices} samples): handed to the agent as input.choices. Inspect's "
            "multiple_choice() solver writes them into the prompt and asks for `ANSWER: X`; a "
            "target that is one letter of the choices is checked that way (a regex for "
            "`ANSWER: X` in the reply), any other target by --scorer."
        )
    return writer.write(dry_run)


def _fail(path: Path, record: Record, field: str, message: str) -> DatasetError:
    """``data.jsonl:4: target: …`` (a line), or ``data.json: record 2: target: …``."""
    line = record.where.removeprefix("line ")
    where = f"{path}:{line}" if line.isdigit() else f"{path}: {record.where}"
    return DatasetError(f"{where}: {field}: {message}")


def _case(record: Record, path: Path, fmt: str, scorer: Scorer, item: Item) -> dict[str, object]:
    fields = record.fields
    case: dict[str, object] = {}
    provenance: dict[str, object] = {}
    raw_input = fields.get("input")
    if raw_input is None or raw_input == "" or raw_input == []:
        raise _fail(path, record, "input", "no input (Inspect reads no sample without one)")
    if isinstance(raw_input, str):
        case["input"] = {"message": raw_input}
    elif isinstance(raw_input, list):
        case.update(_messages(raw_input, path, record, item, provenance))
    else:
        raise _fail(path, record, "input", "a string or a list of chat messages")
    choices = _choices(fields.get("choices"))
    if choices:
        inputs = case["input"]
        assert isinstance(inputs, dict)
        inputs["choices"] = choices
        item.map(f"choices: {len(choices)} -> input.choices")
    targets = _targets(fields.get("target"))
    letter = _answer_letter(targets, choices) if scorer != "judge" else None
    if letter is not None:
        item.map(
            f"target: the letter {letter} of {len(choices)} choices -> regex `ANSWER: {letter}`, "
            "as Inspect's multiple_choice() solver asks for it and choice() reads it"
        )
        check: dict[str, object] = {
            "mode": "regex",
            "value": f"ANSWER\\s*:[\\s*$(]*{letter}(?![A-Za-z0-9])",
            "case_sensitive": False,
        }
        case["expect"] = {CHECK_FIELD: check}
    else:
        case["expect"] = {CHECK_FIELD: _check(targets, scorer, item)}
    description = fields.get("description")
    if isinstance(description, str) and description.strip():
        case["note"] = description.strip()
    metadata = fields.get("metadata")
    if metadata not in (None, "", {}):
        if isinstance(metadata, str):
            try:
                metadata = json.loads(metadata)
            except json.JSONDecodeError:
                item.note("metadata: not a JSON object; kept as text in provenance.metadata")
        provenance["metadata"] = metadata
        item.map("metadata -> provenance.metadata")
    for name in NOT_HELD:
        value = fields.get(name)
        if value not in (None, "", {}, []):
            provenance[name] = value
            item.note(f"{name}: {_why_not_held(name)}; kept in provenance.{name}")
    others = {k: v for k, v in fields.items() if k not in KNOWN}
    if others:
        provenance["fields"] = others
        item.note(
            f"{', '.join(sorted(others))}: not a Sample field (Inspect's default field spec "
            "does not read it either); kept in provenance.fields"
        )
    case["provenance"] = provenance
    if fmt == "csv":
        item.map("read from CSV: target is one string, choices split at commas")
    return case


def _why_not_held(name: str) -> str:
    return {
        "files": "files copied into Inspect's sandbox; a caseforge case has no per-case "
        "sandbox files (a suite's workspace_setup can create them)",
        "setup": "a script Inspect runs in the sandbox before the sample; caseforge runs no "
        "per-case script (a suite's workspace_setup can)",
        "sandbox": "Inspect's sandbox environment; caseforge runs the agent as the suite says",
    }[name]


def _text(content: object) -> tuple[str, int]:
    """A message's text, and how many of its parts are not text (images, audio…)."""
    if isinstance(content, str):
        return content, 0
    if isinstance(content, list):
        texts, other = [], 0
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                texts.append(part)
            else:
                other += 1
        return "\n".join(texts), other
    return str(content), 0


def _messages(
    messages: list[object], path: Path, record: Record, item: Item, provenance: dict[str, object]
) -> dict[str, object]:
    system: list[str] = []
    users: list[str] = []
    dropped: list[str] = []
    non_text = 0
    for index, message in enumerate(messages):
        where = f"input.{index}"
        if not isinstance(message, dict):
            raise _fail(path, record, where, "a chat message is an object with role and content")
        role, content = message.get("role"), message.get("content")
        if content is None:
            raise _fail(path, record, f"{where}.content", "a chat message needs content")
        text, parts = _text(content)
        non_text += parts
        if role == "system":
            system.append(text)
        elif role == "user":
            users.append(text)
        elif role in ("assistant", "tool"):
            dropped.append(f"{role} (message {index + 1})")
        else:
            raise _fail(path, record, f"{where}.role", "system, user, assistant or tool")
    if not users:
        raise _fail(path, record, "input", "chat messages with no user message")
    inputs: dict[str, object] = {}
    if system:
        inputs["system"] = "\n\n".join(system)
        item.map("system message -> input.system")
    out: dict[str, object] = {"input": inputs}
    if len(users) == 1:
        inputs["message"] = users[0]
        item.map("chat input: one user message -> input.message")
    else:
        out["conversation"] = {
            "max_turns": len(users),
            "script": [{"say": text or "(empty)"} for text in users],
        }
        item.map(
            f"chat input: {len(users)} user messages -> a conversation case, the scripted "
            "user saying each in turn; the checks read the last agent turn"
        )
    if dropped or non_text:
        provenance["messages"] = messages
    if dropped:
        item.note(
            f"{', '.join(dropped)}: the dataset's own turns are not replayed (the agent writes "
            "its own); kept in provenance.messages"
        )
    if non_text:
        item.note(f"{non_text} content part(s) that are not text (images, audio…); kept in "
                  "provenance.messages")  # fmt: skip
    return out


def _choices(value: object) -> list[str]:
    """Choices as Inspect reads them: a list, or text split at commas (else spaces)."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [str(c) for c in value if str(c).strip()]
    if isinstance(value, str):
        parts = value.split(",")
        if len(parts) == 1:
            parts = value.split()
        return [c.strip() for c in parts if c.strip()]
    return [str(value)]


def _answer_letter(targets: Sequence[str], choices: Sequence[str]) -> str | None:
    """The target of a multiple-choice sample, when it is one answer letter (``B``) among its
    choices: a letter alone would match any reply holding that letter anywhere."""
    if len(targets) != 1 or not choices:
        return None
    letter = targets[0].strip().upper()
    letters = string.ascii_uppercase[: len(choices)]
    return letter if len(letter) == 1 and letter in letters else None


def _targets(value: object) -> list[str]:
    """The target as Inspect reads it: a list of strings, or one string; empty ones out."""
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [str(v) for v in values if str(v) != ""]


def _check(targets: Sequence[str], scorer: Scorer, item: Item) -> dict[str, object]:
    if not targets:
        item.map("target: none -> an ignore check")
        return {"mode": "ignore", "reason": "the Inspect sample has no target"}
    several = len(targets) > 1
    what = f"a list of {len(targets)}, any one of them" if several else "one string"
    if scorer == "includes":
        item.map(f"target: {what} -> must_include" + (", match: any" if several else ""))
        check: dict[str, object] = {"mode": "must_include", "values": list(targets)}
        if several:
            check["match"] = "any"
        check["case_sensitive"] = False
        return check
    if scorer == "match":
        item.map(f"target: {what} -> regex at the end of the reply")
        return {"mode": "regex", "value": match_pattern(targets), "case_sensitive": False}
    if scorer == "exact":
        item.map(f"target: {what} -> exact" + (", any_of" if several else ""))
        check = {"mode": "exact", "value": targets[0]}
        if several:
            check["any_of"] = list(targets[1:])
        check.update(case_sensitive=False, normalize=True)
        return check
    item.map(f"target: {what} -> judge rubric")
    if several:
        listed = "; ".join(f'"{t}"' for t in targets)
        rubric = f"The reply gives the right answer, which is any one of: {listed}."
    else:
        rubric = f'The reply gives the right answer: "{targets[0]}".'
    return {"mode": "judge", "rubric": rubric}


def match_pattern(targets: Sequence[str]) -> str:
    """The regular expression Inspect's ``match()`` (location end) amounts to: a target,
    stripped of whitespace and punctuation at its ends, at the end of the reply, after which
    only whitespace and punctuation may follow."""
    stripped = [t.strip(string.whitespace + string.punctuation) for t in targets]
    alternatives = "|".join(re.escape(t) for t in stripped)
    body = f"(?:{alternatives})" if len(stripped) > 1 else alternatives
    return f"{body}{_ENDS}\\Z"
