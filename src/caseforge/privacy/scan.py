"""Reading a file for ``caseforge scan``: a case field by field, anything else as text.

Never a traceback: a folder, a missing file or a binary file is a one-line error; text in
UTF-16 or a legacy encoding is decoded (``caseforge.decoding``) and the encoding named. A
UTF-8 text file is read and decoded block by block (``text_blocks``), so scanning it takes
memory for a block, not for the file.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from pathlib import Path

from caseforge.errors import CaseforgeError, EnvError
from caseforge.privacy.overlap import fields_of
from caseforge.privacy.verify import content_fields

MAX_BYTES = 256 * 1024 * 1024
BLOCK = 1024 * 1024  # bytes read at a time from a UTF-8 text file
HEAD = 64 * 1024  # bytes read to tell the kind of file


def text_blocks(path: Path) -> Iterator[str] | None:
    """A plain UTF-8 text file (not a case, not compressed, not another encoding) decoded
    block by block, or None when it needs reading whole (``read_for_scan``)."""
    from caseforge.decoding import Text, decode

    if path.suffix.lower() in (".yaml", ".yml", ".json") or path.is_dir():
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD)
    except OSError:
        return None  # read_for_scan says why
    first = next(iter(decode(str(path), head)), None)
    if not isinstance(first, Text) or first.encoding != "utf-8" or head.startswith(b"\xef\xbb\xbf"):
        return None
    return _blocks(path)


def _blocks(path: Path) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:
        with path.open("rb") as handle:
            while True:
                data = handle.read(BLOCK)
                text = decoder.decode(data, final=not data)
                if text:
                    yield text.replace("\x00", " ") if "\x00" in text else text
                if not data:
                    return
    except OSError as exc:  # gone or unreadable since its first block was looked at
        raise EnvError(f"{path}: cannot read: {exc.strerror or exc}") from None


def read_for_scan(path: Path) -> tuple[list[tuple[str, str]], str]:
    """``([(field path or "", text)], note)`` for ``path``; ``CaseforgeError`` when it is not
    a readable text file."""
    from caseforge.decoding import Text, decode

    if path.is_dir():
        raise CaseforgeError(f"{path}: is a folder; scan one file (a ticket or a case file)")
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES)
    except FileNotFoundError:
        raise CaseforgeError(f"{path}: file not found") from None
    except OSError as exc:
        raise EnvError(f"{path}: cannot read: {exc.strerror or exc}") from None
    texts = [t for t in decode(str(path), data) if isinstance(t, Text)]
    if not texts:
        why = next((getattr(t, "why", "") for t in decode(str(path), data)), "binary content")
        raise CaseforgeError(f"{path}: not a text file ({why}); scan a text, YAML or JSON file")
    text = texts[0]
    note = "" if text.encoding == "utf-8" else f" (read as {text.encoding})"
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        data_tree = _parse(path, text.text)
        if isinstance(data_tree, dict) and "input" in data_tree and "expect" in data_tree:
            return list(content_fields(data_tree)), note + " (a case, field by field)"
        if isinstance(data_tree, dict | list):
            return list(fields_of(data_tree)), note + " (field by field)"
    return [("", text.text)], note


def _parse(path: Path, text: str) -> object:
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except ValueError:
            return None
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="safe", pure=True).load(text)
    except (YAMLError, ValueError):  # not YAML, or a date that does not exist: scan it as text
        return None
