"""Parsed case files are kept between commands: an unchanged file is not parsed again, an
edited one is, and a case that fails validation is still named by its line."""

from __future__ import annotations

import os

import pytest

from caseforge.case import load
from caseforge.case.load import LoadedCase, iter_case_file, load_suite
from caseforge.case.model import Case
from caseforge.case.parsed import ParsedCases
from caseforge.errors import Problem
from tests.conftest import SuiteFactory, good_case


def test_an_unchanged_file_is_not_parsed_again(
    make_suite: SuiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_suite({f"cases/c{i}.yaml": good_case(f"c{i}") for i in range(5)})
    parses: list[str] = []
    real = load._FAST.load

    def counted(text: str) -> object:
        parses.append(text)
        return real(text)

    monkeypatch.setattr(load._FAST, "load", counted)
    assert len(load_suite(root).cases) == 5 and len(parses) == 6  # the config and 5 cases
    parses.clear()
    assert len(load_suite(root).cases) == 5 and len(parses) == 1  # the config only
    edited = root / "cases" / "c3.yaml"
    edited.write_text(good_case("c3", category="billing"), encoding="utf-8")
    os.utime(edited, ns=(1, 1))  # a time the cache cannot have seen
    parses.clear()
    suite = load_suite(root)
    assert len(parses) == 2 and suite.case("c3").expect["category"].value == "billing"  # type: ignore[union-attr]


def test_a_cached_case_that_fails_validation_is_named_by_its_line(
    make_suite: SuiteFactory,
) -> None:
    """A cached parse validated by a model that now refuses it (a check mode of the suite's
    own removed, say) is read again from its text, so the error still has its position."""
    root = make_suite({"cases/a.yaml": good_case("a")})
    path = root / "cases" / "a.yaml"
    parsed = ParsedCases(None)
    parsed.put(path, {"id": "a", "input": {}, "expect": {"x": {"mode": "gone"}}})
    refused = next(iter(iter_case_file(path, Case, parsed)))
    assert isinstance(refused, LoadedCase)  # the text is right: the stale parse is not used
    text = path.read_text(encoding="utf-8").replace("mode: exact", "mode: exct")
    path.write_text(text, encoding="utf-8")
    parsed.put(path, {"id": "a", "input": {}, "expect": {"x": {"mode": "exct"}}})
    [problem] = list(iter_case_file(path, Case, parsed))
    assert isinstance(problem, Problem) and problem.line > 1
    assert problem.field == "expect.category.mode"
