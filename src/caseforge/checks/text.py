"""Text options of the string checks (``must_include``, ``must_not_include``, ``exact``,
``regex``): ``case_sensitive``, ``normalize`` and ``word``. The defaults keep today's
verdicts: literal, case-sensitive, substring."""

from __future__ import annotations

import re
import unicodedata
from functools import cached_property, lru_cache

from pydantic import BaseModel, Field

# Quotes, dashes and CJK punctuation NFKC leaves alone, to their plain forms.
_PUNCTUATION = str.maketrans(
    {
        "‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"',
        "「": '"', "」": '"', "『": '"', "』": '"',
        "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
        "。": ".", "、": ",", "…": "...",
    }
)  # fmt: skip
# A separator between digit groups of three: 1,093.34 / 1 093 / 1_000 / 1'000.
_THOUSANDS = re.compile(r"(?<=\d)[,_' \u00a0\u2009\u202f](?=\d{3}(?!\d))")


def normalize_text(text: str) -> str:
    """NFKC, plain punctuation, no thousands separators, and single spaces."""
    folded = unicodedata.normalize("NFKC", text).translate(_PUNCTUATION)
    return " ".join(_THOUSANDS.sub("", folded).split())


class TextOptions(BaseModel):
    """How a string check compares text."""

    case_sensitive: bool = Field(True, description="false: `Camera` matches `camera`.")
    normalize: bool = Field(
        False,
        description="Compare after NFKC, plain punctuation, single spaces, and without "
        "thousands separators (`1,093.34` matches `1093.34`).",
    )
    word: bool = Field(
        False,
        description="Match whole words only: `full` is not in `successfully` (letters and "
        "digits of ASCII words; CJK text has no word boundary).",
    )

    @cached_property
    def literal(self) -> bool:
        """The defaults: the comparison is today's literal one (read on every grade)."""
        return self.case_sensitive and not self.normalize and not self.word

    def prepared(self, text: str) -> str:
        if self.normalize:
            text = normalize_text(text)
        return text if self.case_sensitive else text.casefold()

    def text_contains(self, haystack: str, needle: str) -> bool:
        """``needle`` in ``haystack`` under these options."""
        haystack, needle = self.prepared(haystack), self.prepared(needle)
        if not self.word:
            return needle in haystack
        return _whole(needle).search(haystack) is not None

    def options_text(self) -> str:
        """``(normalized, any case, whole words)`` for a check's one-line rendering."""
        named = [
            name
            for name, on in (
                ("normalized", self.normalize),
                ("any case", not self.case_sensitive),
                ("whole words", self.word),
            )
            if on
        ]
        return f" ({', '.join(named)})" if named else ""


@lru_cache(maxsize=4096)
def _whole(needle: str) -> re.Pattern[str]:
    return re.compile(r"(?<![0-9A-Za-z_])" + re.escape(needle) + r"(?![0-9A-Za-z_])")


def word_pattern(pattern: str) -> str:
    """A regular expression matched only as whole words."""
    return r"(?<![0-9A-Za-z_])(?:" + pattern + r")(?![0-9A-Za-z_])"
