"""Reading bytes of unknown encoding as text: what ``scan`` and the audit read.

UTF-8 (with or without BOM), UTF-16/32 by BOM or by shape, then GB18030, Big5,
Windows-1258 (Vietnamese) and Latin-1 as fallbacks, the likeliest reading first; gzip and
zip read inside; JSON and YAML escapes (``\\u6797``, ``\\x41``, ``\\U0001F600``), HTML
entities and %-encoding decoded into a second view. Binary content is reported as
unreadable, never passed silently.
"""

from __future__ import annotations

import gzip
import html
import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

MAX_BYTES = 64 * 1024 * 1024  # a file, or a member of an archive, read at most this far
_BINARY_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"PAR1", "Parquet file"),
    (b"\x7fELF", "executable"),
    (b"RIFF", "media file"),
    (b"\x00\x00\x01\x00", "icon"),
    (b"wOFF", "font"),
    (b"wOF2", "font"),
    (b"\x1a\x45\xdf\xa3", "media file"),
)
_FALLBACKS = ("gb18030", "big5", "cp1258", "latin-1")


@dataclass(frozen=True)
class Text:
    """One readable text: where it came from, its content, and how it was decoded."""

    origin: str  # a path, ``path::member``, ``history:<blob>:<path>`` or ``commit:<sha>``
    text: str
    encoding: str = "utf-8"
    blob: str | None = None  # the full object id, for a version found in the history


@dataclass(frozen=True)
class Unreadable:
    """A file the audit could not read as text."""

    origin: str
    why: str


def escapes(text: str) -> str:
    """``text`` with JSON/YAML/Python escapes, HTML entities and %-encoding decoded, line by
    line so that line numbers still match (an escaped line break is white space, not a new
    line)."""
    if not re.search(r"\\[uUxNnrt]|&#|&[a-z]+;|%[0-9A-Fa-f]{2}", text):
        return text

    def pair(match: re.Match[str]) -> str:
        high, low = int(match.group(1), 16), int(match.group(2), 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))

    out = []
    for line in text.split("\n"):
        line = re.sub(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", pair, line, flags=re.I)
        line = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), line)
        line = re.sub(
            r"\\U([0-9a-fA-F]{8})",
            lambda m: chr(int(m.group(1), 16)) if int(m.group(1), 16) <= 0x10FFFF else m.group(),
            line,
        )
        line = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), line)
        line = re.sub(r"\\[N_]", " ", line)
        # a string's \n, \r, \t are white space: two spaces, so columns stay where they were
        # ("…line\n96,000" is not the word n96)
        line = re.sub(r"(?<!\\)\\[nrt]", "  ", line)
        line = html.unescape(line)
        if "%" in line:
            line = unquote(line, errors="replace")
        out.append(line)
    return "\n".join(out)


def _common_han(ch: str, codec: str) -> bool:
    """A character of the everyday set of its script: GB2312 level 1 (3,755 characters) for
    GB18030 text, Big5's frequent characters for Big5 text."""
    try:
        code = ch.encode("gb2312" if codec == "gb18030" else "big5")
    except UnicodeEncodeError:
        return False
    return 0xB0 <= code[0] <= 0xD7 if codec == "gb18030" else 0xA4 <= code[0] <= 0xC6


def _plausible(codec: str, text: str) -> float:
    """How much a decoding reads like real text: wrong guesses give rare characters."""
    sample = [ch for ch in text[:20000] if not ch.isascii()]
    if not sample:
        return 1.0
    if codec in ("gb18030", "big5"):
        return sum(_common_han(ch, codec) for ch in sample) / len(sample)
    if codec == "cp1258":
        return 0.5 * sum(ch.isalpha() for ch in sample) / len(sample)
    return 0.1  # latin-1 reads anything


def _utf16(data: bytes) -> str | None:
    for bom, codec in (
        (b"\xff\xfe\x00\x00", "utf-32-le"),
        (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
    ):
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(codec)
            except UnicodeDecodeError:
                return None
    sample = data[:4096]
    if len(sample) >= 4:
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        half = len(sample) // 2
        for codec, zeros in (("utf-16-le", odd), ("utf-16-be", even)):
            if zeros > half * 0.3:
                try:
                    return data.decode(codec)
                except UnicodeDecodeError:
                    continue
    return None


def decode(origin: str, data: bytes) -> Iterator[Text | Unreadable]:
    """Every readable text in ``data`` (one file or blob), or why it is unreadable."""
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
                inner = handle.read(MAX_BYTES)
        except (OSError, EOFError) as exc:
            yield Unreadable(origin, f"corrupt gzip: {exc}")
            return
        yield from decode(origin + "::gunzip", inner)
        return
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for info in archive.infolist():
                    if info.is_dir():
                        continue
                    with archive.open(info) as member:
                        yield from decode(f"{origin}::{info.filename}", member.read(MAX_BYTES))
        except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
            yield Unreadable(origin, f"unreadable zip: {exc}")
        return
    for magic, what in _BINARY_MAGIC:
        if data.startswith(magic):
            yield Unreadable(origin, what)
            return
    text: str | None = None
    encoding = "utf-8"
    others: list[tuple[str, str]] = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = None
    if text is not None and "\x00" in text and text.count("\x00") <= max(8, len(text) // 100):
        # valid UTF-8 with a few NUL bytes (a paste, a log cut mid-write) is text, not binary
        text = text.replace("\x00", " ")
    if text is None or "\x00" in text:
        wide = _utf16(data)
        if wide is not None and "\x00" not in wide:
            text, encoding = wide, "utf-16/32"
        elif b"\x00" in data[:8192]:
            yield Unreadable(origin, "binary content")
            return
    if text is None:
        candidates = []
        for codec in _FALLBACKS:
            try:
                candidates.append((codec, data.decode(codec)))
            except UnicodeDecodeError:
                continue
        # the likeliest first; the others too, since a leak in any reading counts
        candidates.sort(key=lambda c: -_plausible(*c))
        encoding, text = candidates[0]
        others = candidates[1:]
    yield Text(origin, text, encoding)
    decoded = escapes(text)
    if decoded != text:
        yield Text(origin, decoded, encoding + ", escapes decoded")
    for codec, other in others:
        yield Text(origin, other, codec)
