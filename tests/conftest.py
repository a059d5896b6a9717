"""Shared fixtures: small suites written into a temporary folder."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

ORACLES = """
from caseforge.oracle import oracle

PRICES = {"C1": 10.0, "C2": 25.5}


@oracle("price")
def price(input, *, times=1):
    return PRICES.get(input["customer"], 0.0) * times
"""

GOOD_CASE = """\
id: {id}
input:
  ticket: {ticket}
  customer: C1
expect:
  category: {{mode: exact, value: {category}}}
  amount: {{mode: number, value: 20.0, tolerance: 0.01, oracle: price, args: {{times: 2}}}}
  reply: {{must_include: ["20"], must_not_include: [全额]}}
  tool_calls: {{must_call: [lookup], must_not_call: []}}
  wording: {{mode: ignore, reason: wording varies}}
tags: [t]
source: manual
"""

SuiteFactory = Callable[..., Path]


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture
def make_suite(tmp_path: Path) -> SuiteFactory:
    """Write a suite: ``make_suite({"a.yaml": "..."}, config="...")`` returns its folder."""

    def make(
        files: dict[str, str] | None = None,
        config: str = "name: demo\noracles: oracles.py\n",
        oracles: str = ORACLES,
    ) -> Path:
        root = tmp_path / "suite"
        (root / "cases").mkdir(parents=True, exist_ok=True)
        (root / "caseforge.yaml").write_text(config, encoding="utf-8")
        (root / "oracles.py").write_text(oracles, encoding="utf-8")
        for name, text in (files or {}).items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return root

    return make


def good_case(case_id: str, ticket: str = "我想问一下退款", category: str = "refund") -> str:
    """A valid case file whose oracle-backed amount is right."""
    return GOOD_CASE.format(id=case_id, ticket=ticket, category=category)
