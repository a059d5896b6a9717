"""Oracle modules: registered by decorator, loaded by path, kept apart per suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from caseforge.oracle import OracleError, load_oracles, oracle, oracles_in


def test_decorator_registers_by_name() -> None:
    @oracle("double")
    def double(input: dict[str, int]) -> int:
        return input["x"] * 2

    assert oracles_in({"double": double, "other": len}) == {"double": double}
    assert double({"x": 4}) == 8


def test_two_suites_with_same_oracle_name_do_not_clash(tmp_path: Path) -> None:
    for name, value in (("a", 1), ("b", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "oracles.py").write_text(
            "from caseforge.oracle import oracle\n"
            f"@oracle('answer')\ndef answer(input):\n    return {value}\n"
        )
    first = load_oracles(tmp_path / "a" / "oracles.py")
    second = load_oracles(tmp_path / "b" / "oracles.py")
    assert first["answer"]({}) == 1 and second["answer"]({}) == 2


def test_oracle_module_can_import_its_neighbours(tmp_path: Path) -> None:
    (tmp_path / "policy_table_x1.py").write_text("RATE = 3\n")
    (tmp_path / "oracles.py").write_text(
        "from caseforge.oracle import oracle\nimport policy_table_x1\n"
        "@oracle('rate')\ndef rate(input):\n    return policy_table_x1.RATE\n"
    )
    assert load_oracles(tmp_path / "oracles.py")["rate"]({}) == 3


def test_broken_or_missing_module_is_an_oracle_error(tmp_path: Path) -> None:
    with pytest.raises(OracleError, match="not found"):
        load_oracles(tmp_path / "nope.py")
    (tmp_path / "oracles.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(OracleError, match="boom"):
        load_oracles(tmp_path / "oracles.py")
