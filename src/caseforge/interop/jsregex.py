"""JavaScript regular expressions (promptfoo's ``regex`` assertion) as Python ones, and back.

promptfoo tests ``new RegExp(value).test(output)``: no flags, and not in Unicode mode. Where
Python's ``re`` reads the same text differently, :func:`to_python` writes what JavaScript
means:

- named groups ``(?<n>…)`` and ``\\k<n>`` become ``(?P<n>…)`` and ``(?P=n)``;
- ``$`` is the end of the text in JavaScript (Python's also matches before a last newline):
  ``\\Z``;
- ``.`` matches no line terminator (``\\n``, ``\\r``, U+2028, U+2029);
- ``\\d``, ``\\w`` and ``\\b`` are ASCII, ``\\s`` is JavaScript's own set of white space;
  ``[^]`` is any character, ``[]`` none;
- an escaped letter JavaScript has no escape for (``\\e``, ``\\a``, ``\\A``) is that letter;
  ``\\cX`` a control character; ``{`` that starts no quantifier is a literal.

What cannot be said the same way raises :class:`Untranslatable` with why: ``\\S`` inside a
character class, ``\\u{…}``, and anything Python's ``re`` then refuses (a lookbehind of
varying width, ``\\p{…}``). :func:`to_javascript` goes back, for the exporter, or says it
cannot (``None``).
"""

from __future__ import annotations

import re

from caseforge.errors import DatasetError

# JavaScript's \s: its white space and line terminators.
JS_SPACE = "\\t\\n\\x0b\\f\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_DOT = "[^\\n\\r\\u2028\\u2029]"
_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
    "s": f"[{JS_SPACE}]",
    "S": f"[^{JS_SPACE}]",
}
_INSIDE = {"d": "0-9", "w": "A-Za-z0-9_", "s": JS_SPACE}
_KEPT = set("fnrtv")  # the same escape in both
_QUANTIFIER = re.compile(r"\{\d+(,\d*)?\}")
_NAME = re.compile(r"[A-Za-z_$][\w$]*")


class Untranslatable(DatasetError):
    """A JavaScript pattern Python's ``re`` cannot read the same way; the message says why."""


def to_python(pattern: str) -> str:
    """``pattern`` as JavaScript reads it (no flags), written for Python's ``re``.

    Raises:
        Untranslatable: what cannot be said the same way, or what ``re`` then refuses.
    """
    out: list[str] = []
    ascii_word = False
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            text, i, word = _escape(pattern, i, inside=False)
            ascii_word = ascii_word or word
            out.append(text)
        elif char == "[":
            text, i, word = _class(pattern, i)
            ascii_word = ascii_word or word
            out.append(text)
        elif char == "(" and pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in "=!":
            name = _NAME.match(pattern, i + 3)
            if name is None or pattern[name.end() : name.end() + 1] != ">":
                raise Untranslatable(f"a malformed named group at {i}")
            out.append(f"(?P<{name.group(0)}>")
            i = name.end() + 1
        elif char == "$":
            out.append("\\Z")
            i += 1
        elif char == ".":
            out.append(_DOT)
            i += 1
        elif char == "{" and not _QUANTIFIER.match(pattern, i):
            out.append("\\{")
            i += 1
        elif char == "}" and not _closes_quantifier(pattern, i):
            out.append("\\}")
            i += 1
        else:
            out.append(char)
            i += 1
    translated = ("(?a)" if ascii_word else "") + "".join(out)
    try:
        re.compile(translated)
    except re.error as exc:
        raise Untranslatable(f"Python's re refuses it: {exc}") from None
    return translated


def _closes_quantifier(pattern: str, i: int) -> bool:
    start = pattern.rfind("{", 0, i)
    return start >= 0 and _QUANTIFIER.fullmatch(pattern, start, i + 1) is not None


def _escape(pattern: str, i: int, inside: bool) -> tuple[str, int, bool]:
    """The escape at ``i``: its Python text, where the pattern goes on, and whether it
    needs ASCII word semantics (``\\b``, or ``\\D``/``\\W`` in a class)."""
    if i + 1 >= len(pattern):
        raise Untranslatable("the pattern ends with a lone backslash")
    char = pattern[i + 1]
    end = i + 2
    if char in "dDwWsS":
        if not inside:
            return _OUTSIDE[char], end, False
        if char in _INSIDE:
            return _INSIDE[char], end, False
        if char == "S":
            raise Untranslatable("\\S inside a character class has no exact Python form")
        return "\\" + char, end, True  # \D, \W: ASCII under (?a)
    if char in "bB":
        if inside:  # [\b] is a backspace
            return "\\x08" if char == "b" else "B", end, False
        return "\\" + char, end, True
    if char in _KEPT or char.isdigit():
        if char == "0" and not pattern[end : end + 1].isdigit():
            return "\\x00", end, False
        return "\\" + char, end, False
    if char == "k" and pattern[end : end + 1] == "<":
        name = _NAME.match(pattern, end + 1)
        if name is None or pattern[name.end() : name.end() + 1] != ">":
            raise Untranslatable("a malformed \\k<name>")
        return f"(?P={name.group(0)})", name.end() + 1, False
    if char == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", pattern[end : end + 2]):
        return "\\x" + pattern[end : end + 2], end + 2, False
    if char == "u":
        if pattern[end : end + 1] == "{":
            raise Untranslatable("\\u{…} (a Unicode-mode escape, not read without the u flag)")
        if re.fullmatch(r"[0-9A-Fa-f]{4}", pattern[end : end + 4]):
            return "\\u" + pattern[end : end + 4], end + 4, False
        return "u", end, False
    if char == "c" and pattern[end : end + 1].isascii() and pattern[end : end + 1].isalpha():
        return f"\\x{ord(pattern[end]) % 32:02x}", end + 1, False
    if char in "pP" and pattern[end : end + 1] == "{":
        raise Untranslatable(f"\\{char}{{…}} (a Unicode property: Python's re has none)")
    # An identity escape: the character itself.
    return re.escape(char), end, False


def _class(pattern: str, i: int) -> tuple[str, int, bool]:
    """The character class at ``i`` (``[`` … ``]``), translated."""
    j = i + 1
    negated = pattern[j : j + 1] == "^"
    if negated:
        j += 1
    if pattern[j : j + 1] == "]":  # [] matches nothing, [^] anything
        return ("[\\s\\S]" if negated else "(?!)"), j + 1, False
    end = _class_end(pattern, i)
    inner = pattern[j : end - 1] if end is not None else ""
    for letter in "dsw":  # [\s\S], [\d\D], [\w\W]: every character
        if f"\\{letter}" in inner and f"\\{letter.upper()}" in inner:
            return ("(?!)" if negated else "[\\s\\S]"), end or len(pattern), False
    parts: list[str] = []
    ascii_word = False
    while j < len(pattern) and pattern[j] != "]":
        if pattern[j] == "\\":
            text, j, word = _escape(pattern, j, inside=True)
            ascii_word = ascii_word or word
            parts.append(text)
        elif pattern[j] == "[":
            parts.append("\\[")  # a literal in JavaScript; a nested set to a future Python
            j += 1
        else:
            parts.append(pattern[j])
            j += 1
    if j >= len(pattern):
        raise Untranslatable("an unterminated character class")
    return ("[^" if negated else "[") + "".join(parts) + "]", j + 1, ascii_word


def to_javascript(pattern: str) -> tuple[str, list[str]] | None:
    """A Python pattern as promptfoo's ``new RegExp(value)`` reads it, with notes on where
    the two still differ (``\\d`` is Unicode in Python, ASCII in JavaScript); ``None`` when
    it cannot be said (inline flags, conditionals, atomic groups: ``re``-only syntax)."""
    ascii_word = pattern.startswith("(?a)")
    text = pattern[4:] if ascii_word else pattern
    out: list[str] = []
    unicode: set[str] = set()
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "Z":
                out.append("$")
            elif nxt == "A":
                out.append("^")
            elif nxt == "a":
                out.append("\\x07")
            elif nxt in "dDwWsSbB" and not ascii_word:
                unicode.add(nxt.lower())
                out.append(text[i : i + 2])
            else:
                out.append(text[i : i + 2])
            i += 2
        elif char == "[":
            end = _class_end(text, i)
            if end is None:
                return None
            body = text[i:end]
            for letter in "dwsb":
                if not ascii_word and re.search(rf"\\\\[{letter}{letter.upper()}]", body):
                    unicode.add(letter)
            out.append(body)
            i = end
        elif text.startswith("(?P<", i):
            out.append("(?<")
            i += 4
        elif text.startswith("(?P=", i):
            close = text.find(")", i)
            out.append(f"\\k<{text[i + 4 : close]}>")
            i = close + 1
        elif text.startswith("(?", i) and not re.match(r"\(\?(:|=|!|<=|<!)", text[i:]):
            return None  # inline flags, comments, conditionals, atomic groups
        elif char == "$":
            out.append("(?=\\n?$)")  # Python's $: the end, or before a last newline
            i += 1
        elif char == ".":
            out.append("[^\\n]")
            i += 1
        elif char in "*+?}" and text[i + 1 : i + 2] == "+":
            return None  # a possessive quantifier
        else:
            out.append(char)
            i += 1
    names = {"d": "digits", "w": "word characters", "s": "white space", "b": "word boundaries"}
    notes = [
        (
            "\\s (white space) is Unicode in both, but Python's counts \\x1c-\\x1f and \\x85, "
            "JavaScript's U+FEFF: a text with those may match differently"
        )
        if k == "s"
        else f"\\{k} ({names[k]}) is Unicode in Python, ASCII in JavaScript: a text with "
        f"non-ASCII {names[k]} may match differently"
        for k in sorted(unicode)
    ]
    return "".join(out), notes


def _class_end(text: str, start: int) -> int | None:
    """Where the character class at ``start`` ends (after its ``]``)."""
    j = start + 1
    if text[j : j + 1] == "^":
        j += 1
    if text[j : j + 1] == "]":
        j += 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == "]":
            return j + 1
        else:
            j += 1
    return None
