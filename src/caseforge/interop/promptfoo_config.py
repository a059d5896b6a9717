"""Reading a promptfoo config: its YAML (or JSON) files, ``file://`` references, prompts and
providers.

promptfoo is lenient about shapes; the importer is too, and reports what it cannot use.
What it cannot read at all (a file that is not YAML, a test that is not a mapping) is one
:class:`~caseforge.errors.DatasetError` naming the file, the line and the field
(``promptfooconfig.yaml:14:7: tests.2.assert.0: …``): the line is found by reading the file
again with its positions, only then.

- ``prompts``: a string, a list of strings or ``{id, label, raw}`` mappings, or a mapping of
  paths to labels. A ``file://`` prompt is read: ``.txt`` and other text split at lines of
  ``---``, ``.json``/``.yaml`` chat messages (kept as their JSON text, as promptfoo renders
  it), ``.jsonl`` one prompt a line; a prompt function (``.py``, ``.js``, ``.ts``) is not run:
  :class:`Prompt` says why it has no template.
- ``providers`` (or ``targets``): ids (``openai:gpt-4.1-mini``), ``{id, label, config}``
  mappings, the older ``{id: {config}}`` form, and ``file://`` files of them. A provider's
  ``config`` is kept without its secrets (keys, at any depth, with a word like ``key``, ``token``,
  ``password``).
"""

from __future__ import annotations

import datetime as dt
import glob
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.errors import DatasetError, Problem, UsageError

CONFIG_NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json")
FUNCTION_SUFFIXES = (".py", ".js", ".cjs", ".mjs", ".ts", ".mts", ".cts")
# The words of a config key that make it a secret (apiKey, api_key, accessToken, password…);
# a count of tokens (max_tokens, maxTokens) is not one.
_SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "credential", "credentials",
     "authorization", "bearer", "cookie"}
)  # fmt: skip
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_secret(key: str) -> bool:
    """Whether a provider config key names a secret, by its words (``apiKey``, ``api_key``,
    ``accessToken``, ``AWS_SECRET_ACCESS_KEY``; not ``max_tokens`` or ``keywords``)."""
    return any(word.lower() in _SECRET_WORDS for word in _WORD.findall(key))


def _without_secrets(config: dict[str, object]) -> tuple[dict[str, object], list[str]]:
    """``config`` without its secret keys, at any depth (``headers.Authorization``), and the
    dotted names of those left out."""
    kept: dict[str, object] = {}
    dropped: list[str] = []
    for key, value in config.items():
        if is_secret(str(key)):
            dropped.append(str(key))
        elif isinstance(value, dict):
            inner, gone = _without_secrets({str(k): v for k, v in value.items()})
            kept[key] = inner
            dropped += [f"{key}.{g}" for g in gone]
        else:
            kept[key] = value
    return kept, dropped


_KINDS = {
    "chat",
    "completion",
    "messages",
    "responses",
    "embedding",
    "embeddings",
    "image",
    "assistant",
    "realtime",
    "text",
    "converse",
}
_CUSTOM = (
    "file://",
    "python:",
    "exec:",
    "http:",
    "https:",
    "package:",
    "webhook:",
    "golang:",
    "ruby:",
    "echo",
    "sequence",
    "mcp",
    "browser",
    "websocket:",
)
Parts = Sequence[str | int]


def config_file(path: Path) -> Path:
    """The config itself: ``path``, or the ``promptfooconfig.yaml`` in the folder ``path``."""
    if path.is_dir():
        for name in CONFIG_NAMES:
            if (path / name).is_file():
                return path / name
        raise UsageError(f"{path}: a folder without a promptfooconfig.yaml; name the config")
    if not path.is_file():
        raise UsageError(f"{path}: not found; check the path")
    if path.suffix.lower() in FUNCTION_SUFFIXES:
        raise UsageError(
            f"{path}: a promptfoo config written as code; caseforge reads YAML and JSON "
            "configs: write it as promptfooconfig.yaml"
        )
    return path


def plain(value: object) -> object:
    """``value`` as JSON-like data: dates as ISO text, keys as text, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def load_file(path: Path) -> object:
    """A YAML or JSON file as plain data.

    Raises:
        DatasetError: not UTF-8, or not YAML/JSON (with its line and column).
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    text = read_text(path)
    if path.suffix.lower() == ".json":
        try:
            return plain(json.loads(text))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    try:
        return plain(YAML(typ="safe", pure=True).load(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise DatasetError(f"{where}: not YAML: {exc.problem}") from None
    except (YAMLError, RecursionError) as exc:
        raise DatasetError(f"{path}: not YAML: {exc}") from None


def read_text(path: Path) -> str:
    """A file's text (UTF-8, a BOM dropped)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read it: {exc.strerror or exc}") from None


def position(path: Path, parts: Parts) -> tuple[int, int]:
    """The 1-based line and column of the node at ``parts`` in a YAML file (``0, 0`` when
    it cannot be told), read again with ruamel's positions."""
    from ruamel.yaml import YAML

    try:
        node: object = YAML(typ="rt").load(read_text(path))
    except Exception:  # the file was read once already; a position is a nicety
        return 0, 0
    line, col = 0, 0
    for part in parts:
        lc = getattr(node, "lc", None)
        try:
            if isinstance(node, dict) and part in node:
                line, col = lc.key(part) if lc is not None else (line - 1, col - 1)
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                line, col = lc.item(part) if lc is not None else (line - 1, col - 1)
                node = node[part]
            else:
                break
        except (AttributeError, KeyError, TypeError):
            break
        line, col = line + 1, col + 1
    return line, col


def failure(path: Path, parts: Parts, message: str, line: int = 0) -> DatasetError:
    """``path:line:col: a.b.0: message``, the line found from ``parts`` (or given)."""
    col = 0
    if not line and path.suffix.lower() in (".yaml", ".yml"):
        line, col = position(path, parts)
    dotted = ".".join(str(p) for p in parts)
    return DatasetError(Problem(path, line, col, dotted, message).format())


@dataclass(frozen=True)
class FileRef:
    """A ``file://PATH[:FUNCTION]`` reference, resolved against the config's folder."""

    text: str
    path: Path
    function: str | None = None

    @property
    def suffix(self) -> str:
        return self.path.suffix.lower()


def file_ref(value: str, base: Path) -> FileRef:
    """``file://tests/a.py:make`` → ``base/tests/a.py`` and ``make`` (a function only after
    a script's suffix: ``file://C:/x.csv`` is a path)."""
    raw = value.removeprefix("file://")
    function = None
    match = re.match(r"^(.*\.(?:py|js|cjs|mjs|ts|mts|cts)):([\w.]+)$", raw)
    if match:
        raw, function = match.group(1), match.group(2)
    path = Path(raw).expanduser()
    return FileRef(value, path if path.is_absolute() else base / path, function)


def expand(ref: FileRef) -> list[Path]:
    """The files a reference names: itself, or what its glob matches (sorted)."""
    if glob.has_magic(str(ref.path)):
        return sorted(Path(p) for p in glob.glob(str(ref.path), recursive=True))
    return [ref.path] if ref.path.is_file() else []


@dataclass(frozen=True)
class Prompt:
    """One prompt: its template (``None`` when it cannot be read: ``reason`` says why), its
    label, and whether it is chat messages (their JSON text)."""

    label: str
    template: str | None
    chat: bool = False
    reason: str = ""


def read_prompts(value: object, base: Path, path: Path) -> list[Prompt]:
    """The config's ``prompts``, each read (see the module)."""
    if value is None:
        return []
    if isinstance(value, dict):  # {path or text: label}
        items: list[object] = [{"raw": k, "label": v} for k, v in value.items()]
    elif isinstance(value, list):
        items = list(value)
    else:
        items = [value]
    prompts: list[Prompt] = []
    for index, item in enumerate(items):
        raw: object = item
        label: object = None
        if isinstance(item, dict):
            raw = item.get("raw", item.get("content", item.get("id")))
            label = item.get("label") or item.get("id")
        if isinstance(raw, list):  # chat messages written in the config itself
            prompts.append(Prompt(str(label or f"prompt {index + 1}"), json.dumps(raw), True))
            continue
        if not isinstance(raw, str):
            raise failure(
                path, ["prompts", index], "a prompt is text, a file:// path or {raw, label}"
            )
        prompts += _prompt(raw, None if label is None else str(label), base)
    return prompts


def _prompt(raw: str, label: str | None, base: Path) -> list[Prompt]:
    if not raw.startswith("file://"):
        return [Prompt(label or raw, raw)]
    ref = file_ref(raw, base)
    shown = label or raw
    if ref.suffix in FUNCTION_SUFFIXES:
        return [
            Prompt(
                shown,
                None,
                reason=f"a prompt function ({raw}): caseforge does not run "
                "it, so the agent builds the prompt from the input",
            )
        ]
    files = expand(ref)
    if not files:
        return [Prompt(shown, None, reason=f"{raw}: no such file")]
    prompts: list[Prompt] = []
    for file in files:
        shown_path = file.relative_to(base).as_posix() if file.is_relative_to(base) else file
        name = label or f"file://{shown_path}"
        suffix = file.suffix.lower()
        if suffix == ".json":  # a template: rendered first, parsed after (so not parsed here)
            text = read_text(file)
            prompts.append(Prompt(name, text, text.lstrip().startswith("[")))
        elif suffix in (".yaml", ".yml"):
            try:
                data = load_file(file)
            except DatasetError:  # a template YAML only parses once rendered
                data = None
            if isinstance(data, list | dict):
                prompts.append(Prompt(name, json.dumps(data, ensure_ascii=False), True))
            else:
                prompts.append(Prompt(name, read_text(file)))
        elif suffix == ".jsonl":
            lines = [line for line in read_text(file).splitlines() if line.strip()]
            prompts += [Prompt(f"{name} #{n}", line, True) for n, line in enumerate(lines, 1)]
        else:
            parts = re.split(r"^---$", read_text(file), flags=re.M)
            texts = [p.strip() for p in parts if p.strip()]
            many = len(texts) > 1
            prompts += [Prompt(f"{name} #{n}" if many else name, t) for n, t in enumerate(texts, 1)]
    return prompts


@dataclass(frozen=True)
class Provider:
    """One provider: its id, label, the model it names (``None`` for a provider of the
    user's own: a script, a command, an HTTP endpoint), and its config without secrets."""

    id: str
    label: str | None = None
    model: str | None = None
    options: dict[str, object] = field(default_factory=dict)
    prompts: list[str] | None = None
    dropped: tuple[str, ...] = ()  # secret keys left out of options
    custom: bool = False


def model_of(provider_id: str) -> str | None:
    """The model a provider id names: ``openai:chat:gpt-4o`` → ``gpt-4o``; ``None`` for a
    custom provider (``file://…``, ``python:…``, ``https://…``, ``echo``)."""
    if provider_id.startswith(_CUSTOM):
        return None
    parts = provider_id.split(":")
    if len(parts) < 2:
        return None
    rest = parts[1:]
    if len(rest) > 1 and rest[0] in _KINDS:
        rest = rest[1:]
    return ":".join(rest) or None


def read_providers(value: object, base: Path, path: Path) -> tuple[list[Provider], list[str]]:
    """The config's providers, and what could not be read of them (for the report)."""
    items = value if isinstance(value, list) else [] if value is None else [value]
    providers: list[Provider] = []
    problems: list[str] = []
    for index, item in enumerate(items):
        if (
            isinstance(item, str)
            and item.startswith("file://")
            and item.endswith((".yaml", ".yml", ".json"))
        ):
            ref = file_ref(item, base)
            if not ref.path.is_file():
                problems.append(f"providers.{index}: {item}: no such file")
                continue
            loaded = load_file(ref.path)
            inner, more = read_providers(loaded, ref.path.parent, ref.path)
            providers += inner
            problems += more
        elif isinstance(item, str):
            providers.append(_provider(item, None, {}, None))
        elif isinstance(item, dict) and isinstance(item.get("id"), str):
            config = item.get("config")
            prompts = item.get("prompts")
            providers.append(
                _provider(
                    item["id"],
                    str(item["label"]) if item.get("label") else None,
                    config if isinstance(config, dict) else {},
                    [str(p) for p in prompts] if isinstance(prompts, list) else None,
                )
            )
        elif isinstance(item, dict) and len(item) == 1:  # {"openai:gpt-4": {config: …}}
            [(pid, body)] = item.items()
            body = body if isinstance(body, dict) else {}
            config = body.get("config", body)
            providers.append(
                _provider(
                    str(pid), body.get("label"), config if isinstance(config, dict) else {}, None
                )
            )
        else:
            problems.append(f"providers.{index}: not a provider id or {{id, config}}")
    return providers, problems


def _provider(
    pid: str, label: object, config: dict[str, object], prompts: list[str] | None
) -> Provider:
    kept, gone = _without_secrets(config)
    dropped = tuple(sorted(gone))
    return Provider(
        pid,
        None if label is None else str(label),
        model_of(pid),
        kept,
        prompts,
        dropped,
        model_of(pid) is None,
    )
