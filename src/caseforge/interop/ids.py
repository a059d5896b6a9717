"""Case ids for imported items: slugified, deduplicated, stable across re-imports.

A source's ids (``7``, ``Q_12``, ``"Refund: yearly"``) become valid caseforge ids
(``[a-z0-9-]+``): lower case, every other run of characters one ``-``. Two items whose
slugs collide, or a slug an existing case or a retired one already has, get ``-2``,
``-3``…; the original id is kept in the case's ``provenance``.
"""

from __future__ import annotations

import re
import unicodedata

_OTHER = re.compile(r"[^a-z0-9]+")
MAX_LENGTH = 80


def slugify(text: object, fallback: str = "case") -> str:
    """``text`` as a caseforge id: ASCII letters and digits, ``-`` between runs of them."""
    folded = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    slug = _OTHER.sub("-", folded.lower()).strip("-")[:MAX_LENGTH].strip("-")
    return slug or fallback


def join(*parts: str) -> str:
    """Slug parts joined with ``-``, empty ones left out."""
    return "-".join(p for p in parts if p)


class IdAllocator:
    """Hands out ids no other case has: ``taken`` (every existing and retired id that is
    not this import's own) and those already handed out."""

    def __init__(self, taken: set[str]) -> None:
        self._taken = set(taken)

    def claim(self, wanted: str) -> str:
        """``wanted``, or ``wanted-2``, ``wanted-3``… whichever is free first; now taken."""
        candidate, number = wanted, 1
        while candidate in self._taken:
            number += 1
            candidate = f"{wanted}-{number}"
        self._taken.add(candidate)
        return candidate

    def reserve(self, case_id: str) -> None:
        """Take ``case_id`` as it is (a case this import made before keeps its id)."""
        self._taken.add(case_id)
