"""A word-by-word diff of two texts, for the compare screen: Latin-script words with their
spaces, and Han, kana and Hangul character by character (they have no spaces between
words), so a changed amount or a changed phrase of a Chinese reply stands out alone."""

from __future__ import annotations

import difflib
import re

from caseforge.serve.views import DiffPart

# A run of CJK characters is split into single characters; anything else into words and
# the spaces between them.
_TOKENS = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|\s+|[^\s\u3040-\u30ff"
    r"\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
)
MAX_TOKENS = 20_000  # past this, the texts are shown whole as removed and added


def tokens(text: str) -> list[str]:
    return _TOKENS.findall(text)


def word_diff(a: str, b: str) -> list[DiffPart]:
    """The parts of ``a`` and ``b``: shared, only in A (``del``) and only in B (``add``),
    neighbouring parts of one kind merged."""
    left, right = tokens(a), tokens(b)
    if len(left) + len(right) > MAX_TOKENS:
        return _merged([("del", a), ("add", b)])
    found: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            found.append(("same", "".join(left[i1:i2])))
            continue
        if i2 > i1:
            found.append(("del", "".join(left[i1:i2])))
        if j2 > j1:
            found.append(("add", "".join(right[j1:j2])))
    return _merged(found)


def _merged(parts: list[tuple[str, str]]) -> list[DiffPart]:
    out: list[DiffPart] = []
    for op, text in parts:
        if not text:
            continue
        if out and out[-1].op == op:
            out[-1].text += text
        else:
            out.append(DiffPart.model_validate({"op": op, "text": text}))
    return out
