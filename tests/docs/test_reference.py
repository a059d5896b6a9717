"""The generated reference says what the code accepts: no option a mode refuses, item
metrics only where they are counted, and each command's usage line as the CLI parses it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from caseforge.checks import mode_table
from caseforge.reference import cli_reference, modes_reference


def _sections() -> dict[str, str]:
    return {part.split("`", 2)[1]: part for part in modes_reference().split("### ")[1:]}


def test_a_text_option_is_listed_only_where_the_mode_accepts_it() -> None:
    sections = _sections()
    for name, spec in mode_table().items():
        listed = "| `word` |" in sections[name]
        if not listed:
            continue
        accepted = dict(mode=name, word=True)
        fields = spec.model.model_fields
        if "value" in fields:
            accepted["value"] = "x"
        if "values" in fields:
            accepted["values"] = ["x"]
        spec.model.model_validate(accepted)  # a listed option is accepted
    assert "| `word` |" not in sections["exact"]
    with pytest.raises(ValidationError):
        mode_table()["exact"].model.model_validate({"mode": "exact", "value": "x", "word": True})


def test_item_metrics_are_named_only_for_the_modes_that_feed_them() -> None:
    sections = _sections()
    feeding = {name for name, spec in mode_table().items() if spec.feeds_items}
    assert feeding == {"exact_set"}
    for name, text in sections.items():
        assert ("item metrics over" in text) == (name in feeding), name


def test_a_variadic_argument_reads_as_one_name_with_dots() -> None:
    text = cli_reference()
    assert "caseforge serve [SUITE...] [OPTIONS]" in text
    assert "caseforge merge REPORT... [OPTIONS]" in text
    assert "]..." not in text.replace("[SUITE...]", "")
