"""caseforge.testing: the helpers a suite's own tests use."""

from __future__ import annotations

import pytest

from caseforge.testing import assert_valid, check_of, expected_of, load_case, load_suite
from tests.conftest import SuiteFactory, good_case


def test_load_case_and_check_of(make_suite: SuiteFactory) -> None:
    root = make_suite({"cases/a.yaml": good_case("a")})
    case = load_case(root / "cases/a.yaml")
    assert check_of(case, "wording").mode == "ignore"
    assert expected_of(case, "amount") == 20.0
    with pytest.raises(AssertionError, match=r"has no expect\.flags"):
        check_of(case, "flags")


def test_assert_valid_lists_problems(make_suite: SuiteFactory) -> None:
    root = make_suite({"cases/a.yaml": good_case("a").replace("value: 20.0", "value: 3")})
    with pytest.raises(AssertionError, match="oracle drift"):
        assert_valid(root)
    fine = make_suite({"cases/a.yaml": good_case("a")})
    assert assert_valid(fine).cases == 1


def test_a_suite_names_its_folder_suite_dir_and_root_still_answers(
    make_suite: SuiteFactory,
) -> None:
    folder = make_suite({"cases/a.yaml": good_case("a")})
    suite = load_suite(folder)
    assert suite.suite_dir == folder
    with pytest.warns(DeprecationWarning, match=r"Suite\.root is now Suite\.suite_dir"):
        assert suite.root == folder
