"""Addresses (privacy/patterns/addresses.py): the scanner's class in each language, the parts
verify compares alone, and surrogates of the same shape (issue 24, item 9)."""

from __future__ import annotations

import pytest

from caseforge.privacy.identifiers import IdentifierDetector
from caseforge.privacy.overlap import Original
from caseforge.privacy.patterns.addresses import address_parts
from caseforge.privacy.surrogates import SurrogateMaker


def addresses(text: str) -> list[str]:
    return [s.text for s in IdentifierDetector().scan(text) if s.cls == "address"]


@pytest.mark.parametrize(
    ("text", "address"),
    [
        (
            "地址 深圳市南山区 桃园路 9 号 蔚蓝公寓 B 座 2207。",
            "深圳市南山区 桃园路 9 号 蔚蓝公寓 B 座 2207",
        ),
        ("寄到文三路478号就好", "文三路478号"),  # the sentence's 寄到 is no part of the road
        ("新地址：台中市西屯區福科路188巷6號3樓，麻煩改", "台中市西屯區福科路188巷6號3樓"),
        (
            "my address is 7 Orchard Close, Harrogate HG2 8PL and",
            "7 Orchard Close, Harrogate HG2 8PL",
        ),
        ("Flat 3, 41 Cavendish Road, Leeds LS6 1QA.", "Flat 3, 41 Cavendish Road, Leeds LS6 1QA"),
        (
            "ship to 4417 Alder Creek Rd, Boise ID 83706 today",
            "4417 Alder Creek Rd, Boise ID 83706",
        ),
        ("gửi tới 28 ngõ 112 Trần Duy Hưng, Cầu Giấy nha", "28 ngõ 112 Trần Duy Hưng, Cầu Giấy"),
        ("112/7 Nguyễn Trãi, P. Bến Thành, Q.1 nha", "112/7 Nguyễn Trãi, P. Bến Thành, Q.1"),
        ("giao tới 1 Hoàng Văn Thụ giúp em", "1 Hoàng Văn Thụ"),
        ("會議在 B棟7樓", "B棟7樓"),
    ],
)
def test_an_address_is_found_whole(text: str, address: str) -> None:
    assert addresses(text) == [address]


@pytest.mark.parametrize(
    "text",
    [
        "có 3 Nguyễn Văn An đến họp",  # three people named so, not a street
        "version 3 Release Notes are out",
        "住在三樓的住戶請注意",
        "在 3 楼会议室开会",
        "We moved to Suite 400 of the building",
    ],
)
def test_what_only_looks_like_an_address_is_not_one(text: str) -> None:
    assert addresses(text) == []


def test_the_parts_of_an_address_a_rewrite_may_keep_alone_are_caught() -> None:
    assert {"玉林北路", "玉林北路 17 号"} <= set(
        address_parts("成都市武侯区玉林北路 17 号 2 单元 601")
    )
    assert {"HG2 8PL", "Harrogate", "Orchard Close"} <= set(
        address_parts("7 Orchard Close, Harrogate HG2 8PL")
    )
    original = Original(
        [("c", "地址 成都市武侯区玉林北路 17 号 2 单元 601")],
        [("address", "成都市武侯区玉林北路 17 号 2 单元 601")],
    )
    assert original.findings([("t", "送到玉林北路17号")])
    assert not original.findings([("t", "送到春熙路 88 号")])
    town = Original([("c", "x")], [("address", "2210 Larkspur Ave, Boulder")])
    assert town.findings([("t", "a clay supplier near Boulder")])
    assert not town.findings([("t", "a new bouldering wall")])  # the town as a word of its own


@pytest.mark.parametrize(
    "address",
    [
        "成都市武侯区玉林北路 17 号 2 单元 601",
        "7 Orchard Close, Harrogate HG2 8PL",
        "28 ngõ 112 Trần Duy Hưng, Cầu Giấy",
        "B棟7樓",
    ],
)
def test_an_address_surrogate_keeps_the_shape_and_changes_every_name_and_number(
    address: str,
) -> None:
    new = SurrogateMaker(b"k", "case-1").value("address", address)
    assert new != address and new == SurrogateMaker(b"k", "case-1").value("address", address)
    assert [c.isdigit() for c in new if c.isdigit()] == [True] * sum(c.isdigit() for c in address)
    for kept in ("路", "号", "单元", "Close", "ngõ", "棟", "樓"):
        assert (kept in address) == (kept in new)
    for word in ("玉林北", "Orchard", "Harrogate", "HG2 8PL", "Trần Duy", "Cầu Giấy"):
        assert word not in new
