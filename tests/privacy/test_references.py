"""References (privacy/patterns/references.py): order, tracking, account and other numbers
named by the word before them, which have no shape of their own (issue 24)."""

from __future__ import annotations

import pytest

from caseforge.privacy.identifiers import IdentifierDetector
from caseforge.privacy.surrogates import SurrogateMaker


def references(text: str) -> list[str]:
    return [s.text for s in IdentifierDetector().scan(text) if s.cls == "reference"]


@pytest.mark.parametrize(
    ("text", "reference"),
    [
        ("訂單號 TW-20261102-0087 請查", "TW-20261102-0087"),
        ("mã vận đơn GHN8823011 nha", "GHN8823011"),
        ("账号 6222 0210 0110 2234，麻烦核对", "6222 0210 0110 2234"),
        ("the tracking number is 1Z999AA10123456784, thanks", "1Z999AA10123456784"),
    ],
)
def test_a_number_named_by_its_word_is_a_reference(text: str, reference: str) -> None:
    assert references(text) == [reference]


@pytest.mark.parametrize(
    "text",
    ["order 12 shipped", "account admin reset", "invoice 2026-11-02 is due", "訂單 3 筆"],
)
def test_a_small_number_a_word_or_a_date_after_the_word_is_not_one(text: str) -> None:
    assert references(text) == []


def test_an_id_with_a_shape_of_its_own_keeps_its_class() -> None:
    spans = IdentifierDetector().scan("Order #A77-41920 never arrived")
    assert [(s.cls, s.text) for s in spans] == [("ticket_key", "A77-41920")]


def test_a_reference_surrogate_keeps_its_shape() -> None:
    new = SurrogateMaker(b"k", "case-1").value("reference", "TW-20261102-0087")
    assert new != "TW-20261102-0087" and len(new) == len("TW-20261102-0087")
    assert [c.isdigit() for c in new] == [c.isdigit() for c in "TW-20261102-0087"]
