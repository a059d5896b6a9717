"""Secrets the scanner names (issue 24, 9): a pasted password, API key, token or coupon code
after its word in four languages, by a vendor's prefix, or as a long random token. All of
them fictional."""

from __future__ import annotations

import pytest

from caseforge.privacy.identifiers import IdentifierDetector
from caseforge.privacy.surrogates import SurrogateMaker


def secrets(text: str) -> list[str]:
    return [s.text for s in IdentifierDetector().scan(text) if s.cls == "secret"]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("DB password: TgPay#2611db, đổi ngay", "TgPay#2611db"),
        ("mật khẩu HoaSen@2026 nhé", "HoaSen@2026"),
        ("wifi 密碼是 cafe8899zz", "cafe8899zz"),
        ("给 SORRY300 那张就好", None),  # no word before it: a code, not named a secret
        ("優惠碼 SORRY300 不要再開新的", "SORRY300"),
        ("coupon: EARLY26 gives 10% off", "EARLY26"),
        ("key pk_prod_94hXf2LwQ8bNvT6s was in the .env", "pk_prod_94hXf2LwQ8bNvT6s"),
        ("the token AKIAIOSFODNN7EXAMPLE leaked", "AKIAIOSFODNN7EXAMPLE"),
        ("pasted 9fQ2xLmZ7rT4kWp8Yb3nVc6H in the channel", "9fQ2xLmZ7rT4kWp8Yb3nVc6H"),
        ("user: ops_ivy / pw: Pz7!rW4q#Lm2 then delete", "Pz7!rW4q#Lm2"),
        ("creds are admin / Wint3r!Otter#41 for now", "Wint3r!Otter#41"),  # its shape alone
        ("會員結帳輸入 AUTUMN88 可以折", "AUTUMN88"),
    ],
)
def test_a_pasted_secret_is_named(text: str, secret: str | None) -> None:
    found = secrets(text)
    assert found == ([secret] if secret else []), found


@pytest.mark.parametrize(
    "text",
    [
        "password: reset it tomorrow",  # a word, not a secret
        "code 404 on the checkout page",
        "commit 3f9a2c1d4e5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f fixed it",  # hex: a SHA
        "see docs/how-to/sensitive-ticket.md",  # a path
        "mã đơn hàng của chị là gì ạ",  # words after mã
        "the key point is the refund",
        "version 3.2.1 and build 5.4",
        "mail Ana.Costa2026@example.com today",  # an e-mail address
        "C# and F# both work; TODO: fix #123",
    ],
)
def test_ordinary_text_is_not_a_secret(text: str) -> None:
    assert secrets(text) == []


def test_a_secret_gets_a_surrogate_of_the_same_shape() -> None:
    surrogates = SurrogateMaker(b"k" * 32, case_key="c", locale="en")
    new = surrogates.value("secret", "TgPay#2611db")
    assert new != "TgPay#2611db" and len(new) == len("TgPay#2611db") and new[5] == "#"
    assert new == surrogates.value("secret", "TgPay#2611db")  # the same every time
