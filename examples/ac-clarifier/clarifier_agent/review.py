"""Flagging ACs: the checklist review and the holistic review (with its known blind spot)."""

from __future__ import annotations

from dataclasses import dataclass, field

from clarifier_agent.card import Card
from clarifier_agent.rules import (
    DIMENSIONS,
    description_stance,
    retention_mismatch,
    same_subject,
    threshold_mismatch,
    vague_words,
)

KIND_ORDER = {"conflict": 0, "mismatch": 1, "unverifiable": 2}


@dataclass(frozen=True)
class Flag:
    """One flag on one AC, with the reviewer's note."""

    number: int
    kind: str
    why: str

    @property
    def label(self) -> str:
        return f"{self.number}:{self.kind}"


@dataclass
class Review:
    """The flags and the notes of one review pass."""

    flags: list[Flag] = field(default_factory=list)
    notes: list[dict[str, object]] = field(default_factory=list)

    def add(self, number: int, kind: str, why: str) -> None:
        if not self.has(number, kind):
            self.flags.append(Flag(number, kind, why))

    def has(self, number: int, kind: str) -> bool:
        return any(f.number == number and f.kind == kind for f in self.flags)

    def drop(self, flag: Flag) -> None:
        self.flags.remove(flag)

    def labels(self) -> list[str]:
        ordered = sorted(self.flags, key=lambda f: (f.number, KIND_ORDER.get(f.kind, 9)))
        return [f.label for f in ordered]


def _unverifiable(card: Card, review: Review) -> None:
    for ac in card.acs:
        words = vague_words(ac.text)
        if words:
            review.add(ac.number, "unverifiable", f"no measurable criterion for {'/'.join(words)}")


def _conflicts(card: Card, review: Review) -> None:
    """Pairs of ACs with opposite stances on the same subject, charged by the flag rule.

    When the description takes one side's stance, only the other side is flagged
    (``conflict``; its ``mismatch`` comes from the description check). When it takes
    neither, both sides are flagged ``conflict``.
    """
    for dimension in DIMENSIONS:
        stances = {ac.number: dimension.stance(ac.text) for ac in card.acs}
        backed = description_stance(dimension, card.description)
        for i, a in enumerate(card.acs):
            for b in card.acs[i + 1 :]:
                sa, sb = stances[a.number], stances[b.number]
                if sa is None or sb is None or sa[0] == sb[0]:
                    continue
                if not same_subject(a.text, b.text, sa[1], sb[1]):
                    continue
                pair = f"AC{a.number} ({sa[0]}) vs AC{b.number} ({sb[0]}) on {dimension.name}"
                if backed is not None and backed[0] == sa[0]:
                    charged = [b.number]
                elif backed is not None and backed[0] == sb[0]:
                    charged = [a.number]
                else:
                    charged = [a.number, b.number]
                for number in charged:
                    review.add(number, "conflict", pair)
                review.notes.append(
                    {
                        "step": "pair",
                        "pair": pair,
                        "charged": charged,
                        "description": backed[1] if backed else None,
                    }
                )


def _mismatches(card: Card, review: Review, *, skip_conflicting: bool) -> None:
    """Each AC against the description; the holistic pass skips ACs already in a conflict."""
    for ac in card.acs:
        if skip_conflicting and review.has(ac.number, "conflict"):
            review.notes.append(
                {"step": "skip-description-check", "ac": ac.number, "why": "already a conflict"}
            )
            continue
        for dimension in DIMENSIONS:
            mine = dimension.stance(ac.text)
            backed = description_stance(dimension, card.description)
            if mine and backed and mine[0] != backed[0]:
                review.add(
                    ac.number,
                    "mismatch",
                    f"{dimension.name}: AC says {mine[0]}, the description says {backed[0]}"
                    f" ({backed[1]})",
                )
        for check in (retention_mismatch, threshold_mismatch):
            why = check(ac.text, card.description)
            if why:
                review.add(ac.number, "mismatch", why)


def review_card(card: Card, mode: str) -> Review:
    """Flag the card's ACs. ``checklist``: every AC gets every check. ``holistic``: the
    conflict is seen first, and an AC already in a conflict is not read against the
    description again."""
    review = Review()
    _unverifiable(card, review)
    _conflicts(card, review)
    _mismatches(card, review, skip_conflicting=mode == "holistic")
    return review
