"""promptfoo's own example configs through `caseforge import promptfoo`: five of them kept in
tests/interop/data/promptfoo/examples/ (MIT, promptfoo's LICENSE beside them), and, when the
snapshot of promptfoo's whole examples/ is there, every one of its configs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from ruamel.yaml import YAML

from caseforge.interop.promptfoo import PromptfooImport, import_promptfoo
from caseforge.interop.report import ItemStatus
from tests.interop.helpers import DATA

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = DATA / "promptfoo" / "examples"
yaml = YAML(typ="safe")


def benchmark() -> ModuleType:
    """benchmarks/promptfoo_examples.py (a script, not a package), loaded as a module."""
    path = REPO / "benchmarks" / "promptfoo_examples.py"
    spec = importlib.util.spec_from_file_location("promptfoo_examples", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def cases(suite: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: yaml.load(p.read_text(encoding="utf-8")) for p in (suite / "cases").iterdir()}


def test_the_examples_kept_here_carry_promptfoos_licence() -> None:
    licence = (EXAMPLES / "LICENSE").read_text(encoding="utf-8")
    assert "Copyright (c) Promptfoo" in licence and "Permission is hereby granted" in licence
    assert sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()) == [
        "external-defaulttest", "javascript-assert-external", "json-output", "self-grading",
        "tests-per-prompt",
    ]  # fmt: skip


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
def test_each_kept_example_imports_every_assertion_mapped(name: str, tmp_path: Path) -> None:
    report = import_promptfoo(PromptfooImport(EXAMPLES / name, tmp_path / "suite"))
    assert report.assertions and all(o.mapped for o in report.assertions), report.lines()
    assert report.error() is None
    assert report.validation.startswith("caseforge validate: valid"), report.validation


def test_what_the_kept_examples_become(tmp_path: Path) -> None:
    import_promptfoo(PromptfooImport(EXAMPLES / "json-output", tmp_path / "json"))
    fruit = next(iter(cases(tmp_path / "json").values()))["expect"]
    # Its options.transform (JSON.parse) runs before the javascript and contains-any checks;
    # is-json needs none, and keeps its schema.
    assert fruit["is_json"]["mode"] == "json" and fruit["is_json"]["schema"]["required"]
    assert fruit["javascript"]["mode"] == "javascript"
    assert "JSON.parse(output)" in fruit["javascript"]["code"]
    import_promptfoo(PromptfooImport(EXAMPLES / "javascript-assert-external", tmp_path / "js"))
    assert (tmp_path / "js" / "asserts" / "assert.js").is_file()
    import_promptfoo(PromptfooImport(EXAMPLES / "external-defaulttest", tmp_path / "default"))
    for case in cases(tmp_path / "default").values():  # defaultTest from its own file, first
        assert list(case["expect"])[:3] == ["not_equals", "response_length_check", "cost"]
    import_promptfoo(PromptfooImport(EXAMPLES / "self-grading", tmp_path / "csv"))
    prompts = yaml.load((tmp_path / "csv" / "caseforge.yaml").read_text(encoding="utf-8"))
    # prompts.txt holds two prompts (split at ---): a configuration for each.
    assert list(prompts["configs"]) == ["openai-chat-gpt-5-2-p1", "openai-chat-gpt-5-2-p2"]
    assert "{{question}}" in prompts["configs"]["openai-chat-gpt-5-2-p2"]["prompt"]
    graded = cases(tmp_path / "csv")
    assert len(graded) == 2  # its two inline tests, defaultTest's rubric and score in each
    assert all(list(c["expect"]) == ["llm_rubric", "javascript"] for c in graded.values())
    report = import_promptfoo(PromptfooImport(EXAMPLES / "tests-per-prompt", tmp_path / "many"))
    configs = yaml.load((tmp_path / "many" / "caseforge.yaml").read_text(encoding="utf-8"))
    assert len(configs["configs"]) == 3  # 1 provider × 3 prompts
    assert any("runs only with these prompts" in "\n".join(i.notes) for i in report.items)


def examples_folder() -> Path:
    return benchmark().examples_folder()  # type: ignore[no-any-return]


@pytest.mark.skipif(
    not examples_folder().is_dir(),
    reason="promptfoo's examples are not here (../shared/promptfoo-examples, or "
    "$CASEFORGE_PROMPTFOO_EXAMPLES)",
)
def test_every_config_of_promptfoos_examples(tmp_path: Path) -> None:
    bench = benchmark()
    result = bench.survey(examples_folder(), tmp_path)
    assert result.configs >= 300
    assert result.tracebacks == []
    assert result.errors == []  # promptfoo reads them all; so does the importer
    for name, report in result.reports.items():
        invalid = [i for i in report.items if i.status is ItemStatus.INVALID]
        if report.empty:  # every test source skipped, each with its reason
            assert all(i.status is ItemStatus.SKIPPED and i.reason for i in report.items), name
            continue
        if invalid:  # the report names the case and why, and the import fails
            assert report.error() is not None, name
            text = "\n".join(report.lines())
            assert all(i.path in text and i.reason in text for i in invalid), name
        else:
            assert report.validation.startswith("caseforge validate: valid"), (name, report)
        lines = report.lines()
        for outcome in report.assertions:  # nothing lost without a line in the report
            if not outcome.mapped:
                start = next(n for n, line in enumerate(lines) if line.startswith(
                    f"  {outcome.where} "))  # fmt: skip
                block = []
                for line in lines[start + 1 :]:
                    if not line.startswith("    "):
                        break
                    block.append(line)
                assert any(f": {outcome.type}: " in line for line in block), (name, outcome)
    # A floor under the share that imports with every assertion mapped (RESULTS.md has it).
    assert result.share >= 0.75, result.not_all_mapped


def test_the_survey_with_a_judge_reimports_into_the_suite_it_made(tmp_path: Path) -> None:
    """--with-judge: `similar` is reported on the first import and a judge check once the
    suite it made configures `judge:`, as a user who adds one and imports again sees."""
    folder = tmp_path / "examples" / "meaning"
    folder.mkdir(parents=True)
    (folder / "promptfooconfig.yaml").write_text(
        "prompts: ['Name the capital of {{country}}']\nproviders: [openai:gpt-4.1-mini]\n"
        "tests:\n  - vars: {country: Freedonia}\n"
        "    assert:\n      - {type: similar, value: 'Fredville is the capital', threshold: 0.8}\n",
        encoding="utf-8",
    )
    bench = benchmark()
    plain = bench.survey(tmp_path / "examples", tmp_path / "plain")
    assert (plain.with_assertions, plain.all_mapped) == (1, 0)
    assert plain.unmapped_by_reason == {"needs an embedding model": 1}
    judged = bench.survey(tmp_path / "examples", tmp_path / "judged", with_judge=True)
    assert (judged.with_assertions, judged.all_mapped, judged.valid_suites) == (1, 1, 1)
    suite = tmp_path / "judged" / "suite-0"
    check = next(iter(cases(suite).values()))["expect"]["similar"]
    assert check["mode"] == "judge" and "Fredville is the capital" in check["rubric"]
