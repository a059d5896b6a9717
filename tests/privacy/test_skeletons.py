"""Ids the scanner has no class for, or misses, still leak by their skeleton (issue 24, 2):
cut short, with dashes removed, added or spaced, in another case."""

from __future__ import annotations

import pytest

from caseforge.privacy.overlap import Original
from caseforge.privacy.skeletons import leaks, skeleton, skeletons


def test_a_skeleton_is_the_id_without_its_separators() -> None:
    assert skeleton("HT-2024-SZ-0318") == "ht2024sz0318"
    assert skeletons("đơn HT-2024-SZ-0318 và PO 77-4410, mã 7734 2210 9981") == {
        "ht2024sz0318",
        "774410",
        "773422109981",
    }


@pytest.mark.parametrize(
    "text", ["2.300.000 đồng", "on 2026-09-03", "v2.3.1 shipped", "AC3 passed", "3 items"]
)
def test_numbers_dates_versions_and_short_codes_are_not_ids(text: str) -> None:
    assert skeletons(text) == set()


@pytest.mark.parametrize(
    "variant",
    [
        "order HT2024SZ0318 is late",  # dashes removed
        "order ht 2024 sz 0318 is late",  # spaced, lower case
        "the HT-2024 batch",  # cut short
        "ref SZ-0318 again",  # its other half
        "PO 77-4410 copied as is",
    ],
)
def test_an_id_in_any_shape_leaks(variant: str) -> None:
    original = skeletons("單號 HT-2024-SZ-0318，採購單 PO 77-4410")
    assert leaks(original, variant)


@pytest.mark.parametrize(
    "variant", ["order HK-3391-LX-7720 is late", "meeting on 2026-09-03", "we paid 2.300.000 đồng"]
)
def test_another_id_a_date_or_an_amount_does_not(variant: str) -> None:
    original = skeletons("單號 HT-2024-SZ-0318，2026-09-03 付了 2.300.000 đồng")
    assert not leaks(original, variant)


def test_verify_reports_an_id_the_scanner_does_not_know() -> None:
    findings = Original([("input.log", "bên em giao theo mã WH7-QX-55012 nhé")]).findings(
        [("input.log", "the pallet WH7QX55012 left today")]
    )
    assert "identifier" in {f.cls for f in findings}
