"""Where a promptfoo config's tests come from: inline, and CSV, JSONL, JSON and YAML files
(with globs), read as promptfoo reads them.

``tests`` is a list of tests and references, or one reference. A reference is a path
(``file://`` or not): ``.csv`` (one test a row), ``.jsonl`` (a line), ``.json`` (an array),
``.yaml``/``.yml`` (a list, or one test); a glob (``file://tests/*.yaml``) names every file
it matches. What the importer cannot read becomes a :class:`SkippedSource` with its reason,
never nothing: a ``huggingface://`` dataset, a URL (Google Sheets), a generator
(``file://gen.py:make``, ``.js``, ``.ts``, or ``{path: …, config: …}``), an Excel file, a
file or glob that finds nothing.

A CSV row is read as promptfoo's ``testCaseFromCsvRow`` reads it (column names trimmed):

- ``__expected``, ``__expected1`` …: one assertion each, from text such as ``contains: Paris``,
  ``not-icontains: sorry``, ``contains-any: a,b``, ``similar(0.8): …``, ``javascript: …``,
  ``grade: …``, ``python: …``, ``file://check.py``; text without a known type is ``equals``;
- ``__description``, ``__prefix`` and ``__suffix`` (``options``), ``__metric`` (every
  assertion's), ``__threshold``, ``__providerOutput``, ``__metadata:KEY`` (``KEY[]``: a list
  split at commas, ``\\,`` kept), ``__config:__expectedN:threshold``;
- every other column is a var.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.errors import DatasetError
from caseforge.interop.promptfoo_config import (
    FUNCTION_SUFFIXES,
    expand,
    failure,
    file_ref,
    load_file,
)
from caseforge.interop.records import read_records

# promptfoo's assertion types (BaseAssertionTypesSchema), which a CSV's `type:` prefix names.
BASE_TYPES = (
    "answer-relevance",
    "bleu",
    "classifier",
    "contains",
    "contains-all",
    "contains-any",
    "contains-html",
    "contains-json",
    "contains-sql",
    "contains-xml",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "conversation-relevance",
    "cost",
    "equals",
    "factuality",
    "finish-reason",
    "g-eval",
    "gleu",
    "guardrails",
    "icontains",
    "icontains-all",
    "icontains-any",
    "is-html",
    "is-json",
    "is-refusal",
    "is-sql",
    "is-valid-function-call",
    "is-valid-openai-function-call",
    "is-valid-openai-tools-call",
    "is-xml",
    "javascript",
    "latency",
    "levenshtein",
    "llm-rubric",
    "pi",
    "meteor",
    "model-graded-closedqa",
    "model-graded-factuality",
    "moderation",
    "perplexity",
    "perplexity-score",
    "python",
    "regex",
    "rouge-n",
    "ruby",
    "similar",
    "similar:cosine",
    "similar:dot",
    "similar:euclidean",
    "starts-with",
    "tool-call-f1",
    "skill-used",
    "trajectory:goal-success",
    "trajectory:tool-args-match",
    "trajectory:step-count",
    "trajectory:tool-sequence",
    "trajectory:tool-used",
    "trace-error-spans",
    "trace-span-count",
    "trace-span-duration",
    "search-rubric",
    "webhook",
    "word-count",
)
_TYPED = re.compile(
    r"^(not-)?("
    + "|".join(re.escape(t) for t in sorted(BASE_TYPES, key=len, reverse=True))
    + r")(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$"
)
_LISTS = {"contains-all", "contains-any", "icontains-all", "icontains-any"}
_THRESHOLDED = {
    "answer-relevance",
    "classifier",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "cost",
    "latency",
    "levenshtein",
    "perplexity-score",
    "perplexity",
    "rouge-n",
    "similar",
    "starts-with",
}
_JS_PREFIXES = ("javascript:", "fn:", "eval:")
TEST_SUFFIXES = {".csv", ".jsonl", ".json", ".yaml", ".yml"}


@dataclass
class SourceTest:
    """One promptfoo test as its source wrote it, where it is (for the report, and as the
    key a re-import finds its case by), and its file and path in it (for errors)."""

    where: str
    test: dict[str, object]
    file: Path
    parts: list[str | int] = field(default_factory=list)


@dataclass(frozen=True)
class SkippedSource:
    """A source of tests the importer cannot read: where, why, and the reason's kind."""

    where: str
    reason: str
    kind: str


Entry = SourceTest | SkippedSource


def assertion_from_string(expected: str) -> dict[str, object]:
    """An ``__expected`` cell as the assertion promptfoo reads it (its ``assertionFromString``)."""
    if expected.startswith(_JS_PREFIXES) or (
        expected.startswith("file://") and re.search(r"\.(c|m)?(js|ts)(:[\w.]+)?$", expected)
    ):
        prefix = next((p for p in _JS_PREFIXES if expected.startswith(p)), "")
        return {"type": "javascript", "value": expected[len(prefix) :].strip()}
    if expected.startswith(("grade:", "llm-rubric:")):
        return {"type": "llm-rubric", "value": expected.split(":", 1)[1]}
    if expected.startswith("python:") or (
        expected.startswith("file://") and (expected.endswith(".py") or ".py:" in expected)
    ):
        cut = len("python:") if expected.startswith("python:") else 0
        return {"type": "python", "value": expected[cut:].strip()}
    match = _TYPED.match(expected)
    if match is None:
        return {"type": "equals", "value": expected}
    negated, kind, threshold, value = match.groups()
    full = f"not-{kind}" if negated else kind
    if kind in _LISTS:
        return {"type": full, "value": [v.strip() for v in value.split(",")] if value else value}
    if kind in ("contains-json", "is-json"):
        return {"type": full} if value is None else {"type": full, "value": value}
    assertion: dict[str, object] = {"type": full}
    if value is not None:
        assertion["value"] = value.strip()
    if kind in _THRESHOLDED:
        default = 0.8 if kind == "similar" else 0.75
        assertion["threshold"] = float(threshold) if threshold else default
    return assertion


def test_from_row(fields: dict[str, object], path: Path, line: int) -> dict[str, object]:
    """A CSV row as the test promptfoo makes of it (see the module)."""
    variables: dict[str, object] = {}
    asserts: list[dict[str, object]] = []
    options: dict[str, object] = {}
    metadata: dict[str, object] = {}
    configs: dict[int, dict[str, object]] = {}
    test: dict[str, object] = {}
    metric: str | None = None
    for raw_key, raw_value in fields.items():
        key, value = raw_key.strip(), "" if raw_value is None else str(raw_value)
        if key.startswith("__expected"):
            if value.strip():
                asserts.append(assertion_from_string(value.strip()))
        elif key in ("__prefix", "__suffix"):
            options[key[2:]] = value
        elif key == "__description":
            if value:
                test["description"] = value
        elif key == "__providerOutput":
            if value:
                test["providerOutput"] = value
        elif key == "__metric":
            metric = value
        elif key == "__threshold":
            threshold = _number(value)
            if threshold:
                test["threshold"] = threshold
        elif key.startswith("__metadata:"):
            _metadata(key.removeprefix("__metadata:"), value, metadata)
        elif key == "__metadata":
            continue  # promptfoo ignores it too (with a warning): a key is needed
        elif key.startswith("__config:"):
            index, name, number = _config_column(key, value, path, line)
            configs.setdefault(index, {})[name] = number
        else:
            variables[key] = value
    for index, assertion in enumerate(asserts):
        if metric:
            assertion["metric"] = metric
        for name, setting in configs.get(index, {}).items():
            assertion[name] = setting
            metadata[name] = setting
    test = {"vars": variables, "assert": asserts, "options": options, **test}
    if metadata:
        test["metadata"] = metadata
    return test


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _metadata(key: str, value: str, metadata: dict[str, object]) -> None:
    if not value.strip():
        return
    if key.endswith("[]"):
        metadata[key[:-2]] = [v.strip().replace("\\,", ",") for v in re.split(r"(?<!\\),", value)]
    else:
        metadata[key] = value


def _config_column(key: str, value: str, path: Path, line: int) -> tuple[int, str, float]:
    """``__config:__expected2:threshold`` → (1, ``threshold``, the number)."""
    parts = key.removeprefix("__config:").split(":")
    target = parts[0]
    if target == "__expected":
        index = 0
    elif re.fullmatch(r"__expected\d+", target):
        index = int(target.removeprefix("__expected")) - 1
    else:
        index = -1
    if len(parts) != 2 or index < 0:
        raise DatasetError(
            f"{path}:{line}: {key}: a __config column is __config:__expected:threshold or "
            "__config:__expectedN:threshold"
        )
    if parts[1] != "threshold":
        raise DatasetError(f"{path}:{line}: {key}: the only __config key is threshold")
    number = _number(value)
    if number is None:
        raise DatasetError(f"{path}:{line}: {key}: {value!r} is not a number")
    return index, parts[1], number


def read_tests(value: object, base: Path, config: Path) -> list[Entry]:
    """Every test of the config's ``tests`` (or a skipped source, in its place)."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    entries: list[Entry] = []
    for index, item in enumerate(items):
        where = f"test {index + 1}" if isinstance(value, list) else "tests"
        if isinstance(item, str):
            entries += _reference(item, base)
        elif isinstance(item, dict) and "path" in item and not ({"vars", "assert"} & set(item)):
            entries.append(
                SkippedSource(
                    where,
                    f"a test generator ({item['path']}): caseforge does not run it",
                    "generator",
                )
            )
        elif isinstance(item, dict):
            entries.append(SourceTest(where, item, config, ["tests", index]))
        elif isinstance(value, list):
            raise failure(
                config, ["tests", index], "a test is a mapping (vars, assert…) or a file:// path"
            )
        else:
            raise failure(
                config, ["tests"], "tests is a list of tests, a file:// path or a mapping"
            )
    return entries


def _reference(text: str, base: Path) -> list[Entry]:
    if text.startswith("huggingface://"):
        return [
            SkippedSource(
                text,
                "a Hugging Face dataset: caseforge reads no remote "
                "dataset (`caseforge import table` reads one saved to disk)",
                "huggingface",
            )
        ]
    if text.startswith(("http://", "https://")):
        return [
            SkippedSource(
                text,
                "a remote source (a URL, such as Google Sheets): save it as CSV beside the config",
                "remote",
            )
        ]
    ref = file_ref(text if text.startswith("file://") else f"file://{text}", base)
    if ref.suffix in FUNCTION_SUFFIXES:
        return [SkippedSource(text, "a test generator: caseforge does not run it", "generator")]
    if ref.suffix in (".xlsx", ".xls"):
        return [SkippedSource(text, "an Excel file: save it as CSV", "excel")]
    files = expand(ref)
    if not files:
        return [SkippedSource(text, "no such file (nor files matching it)", "missing file")]
    entries: list[Entry] = []
    for file in files:
        name = file.relative_to(base).as_posix() if file.is_relative_to(base) else str(file)
        suffix = file.suffix.lower()
        if suffix not in TEST_SUFFIXES:
            entries.append(
                SkippedSource(
                    name,
                    f"tests in a {suffix or 'suffix-less'} file: "
                    "caseforge reads CSV, JSONL, JSON and YAML ones",
                    "unreadable file",
                )
            )
        elif suffix == ".csv":
            for record in read_records(file, "csv"):
                line = int(record.where.removeprefix("line "))
                entries.append(
                    SourceTest(
                        f"{name} {record.where}", test_from_row(record.fields, file, line), file
                    )
                )
        elif suffix in (".jsonl", ".json"):
            for record in read_records(file, suffix[1:]):
                entries.append(SourceTest(f"{name} {record.where}", record.fields, file))
        else:
            entries += _yaml_tests(file, name)
    return entries


def _yaml_tests(file: Path, name: str) -> list[Entry]:
    data = load_file(file)
    items = data if isinstance(data, list) else [data] if isinstance(data, dict) else None
    if items is None:
        raise failure(file, [], "a YAML file of tests holds a list of tests")
    entries: list[Entry] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise failure(file, [index], "a test is a mapping (vars, assert…)")
        entries.append(SourceTest(f"{name} test {index + 1}", item, file, [index]))
    return entries
