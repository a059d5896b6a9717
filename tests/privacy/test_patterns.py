"""The pattern table put together from its kinds (``privacy/patterns/``): the order of its
classes, which ``identifiers.CLASSES`` and the tie-break between overlapping matches follow,
one kind per class, and unique names."""

from __future__ import annotations

from collections import Counter

from caseforge.privacy import patterns as pat
from caseforge.privacy.identifiers import CLASSES, NAME_CLASSES
from caseforge.privacy.patterns import (
    addresses,
    codes,
    contact,
    dates,
    hosts,
    ids,
    money,
    references,
    secrets,
)

KINDS = {
    "codes": codes.TABLE + codes.PROJECT_CODES,
    "money": money.TABLE,
    "dates": dates.TABLE,
    "hosts": hosts.TABLE,
    "contact": contact.CHATS + contact.PHONES,
    "ids": ids.TABLE,
    "secrets": secrets.TABLE,
    "addresses": addresses.TABLE,
    "references": references.TABLE,
}


def test_the_classes_keep_the_order_of_the_table_before_it_was_split() -> None:
    assert pat.CLASSES_FOUND == (
        "commit_sha",
        "branch",
        "error_code",
        "ticket_key",
        "money",
        "date",
        "email",
        "url",
        "hostname",
        "ip",
        "messaging_id",
        "handle",
        "channel",
        "national_id",
        "business_id",
        "project_code",
        "phone",
        "secret",  # added after the split (issue 24): last, so no older tie-break changes
        "address",  # and after it
        "reference",
    )
    assert (*NAME_CLASSES, *pat.CLASSES_FOUND) == CLASSES


def test_every_row_of_every_kind_is_in_the_table_once_and_each_class_has_one_kind() -> None:
    rows = [row for table in KINDS.values() for row in table]
    assert sorted(row[1] for row in rows) == sorted(p.name for p in pat.patterns())
    names = Counter(p.name for p in pat.patterns())
    assert [name for name, n in names.items() if n > 1] == []
    kinds_of: dict[str, set[str]] = {}
    for kind, table in KINDS.items():
        for row in table:
            kinds_of.setdefault(row[0], set()).add(kind)
    assert {cls: kinds for cls, kinds in kinds_of.items() if len(kinds) != 1} == {}


def test_check_goes_to_the_kind_of_the_pattern() -> None:
    by_name = {p.name: p for p in pat.patterns()}
    text = "see PR #12 and HTTP-2"
    assert pat.check(by_name["hash_number"], text, 7, 10) == 0.7  # codes: next to "PR"
    assert pat.check(by_name["key"], text, 15, 21) is None  # codes: HTTP is a standard
    assert pat.check(by_name["tw_id"], "A123456789", 0, 10) == 0.9  # ids: checksum holds
    assert pat.check(by_name["tw_id"], "A123456788", 0, 10) is None
    assert pat.check(by_name["date_iso"], "2026-02-30", 0, 10) is None  # dates: no such day
    assert pat.check(by_name["email"], "a@b.example", 1, 11) == by_name["email"].score
