"""`caseforge import promptfoo` over promptfoo's own example configs: how many import with
every assertion mapped (issue 25's target: at least 90 % of the configs that have
assertions), what the rest report, by reason, and whether every imported suite validates.

Each `promptfooconfig*.yaml` under EXAMPLES (default: the snapshot in
../shared/promptfoo-examples, or $CASEFORGE_PROMPTFOO_EXAMPLES) is imported into a suite
of its own in a temporary folder, written and validated as `caseforge import` does. An
assertion counts as mapped when it became a check; one the report names instead (an
`ignore` check saying why) does not.

With ``--with-judge`` each config is imported as a user who configures a judge would: once,
then again into the suite it made, after ``judge:`` was added to its ``caseforge.yaml`` (a
re-import maps ``similar`` to a judge check when the suite has a judge).

    python benchmarks/promptfoo_examples.py [EXAMPLES] [--json] [--with-judge]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.errors import CaseforgeError
from caseforge.interop.promptfoo import PromptfooImport, PromptfooReport, import_promptfoo
from caseforge.interop.report import ItemStatus

REPO = Path(__file__).resolve().parents[1]
DEFAULT = REPO.parent / "shared" / "promptfoo-examples"


@dataclass
class Survey:
    """What importing every config gave."""

    configs: int = 0
    with_assertions: int = 0
    all_mapped: int = 0
    assertions: int = 0
    mapped: int = 0
    tracebacks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # a one-line error instead of a suite
    invalid: list[str] = field(default_factory=list)  # a case that does not validate, and why
    empty: list[str] = field(default_factory=list)  # no test became a case: nothing written
    valid_suites: int = 0
    by_reason: Counter[str] = field(default_factory=Counter)  # configs reporting each reason
    unmapped_by_reason: Counter[str] = field(default_factory=Counter)  # assertions, by reason
    not_all_mapped: list[str] = field(default_factory=list)
    reports: dict[str, PromptfooReport] = field(default_factory=dict)

    @property
    def share(self) -> float:
        return self.all_mapped / self.with_assertions if self.with_assertions else 0.0


def examples_folder(given: str | None = None) -> Path:
    """The examples: ``given``, else $CASEFORGE_PROMPTFOO_EXAMPLES, else the shared snapshot
    beside the repository."""
    chosen = given or os.environ.get("CASEFORGE_PROMPTFOO_EXAMPLES")
    folder = Path(chosen) if chosen else DEFAULT
    return folder / "examples" if (folder / "examples").is_dir() else folder


def configs(folder: Path) -> list[Path]:
    """Every promptfoo config under ``folder``, in a stable order."""
    return sorted(folder.rglob("promptfooconfig*.y*ml"))


JUDGE = "\njudge: {model: gpt-4.1-mini}  # added by the survey before the re-import\n"


def survey(folder: Path, out: Path, with_judge: bool = False) -> Survey:
    """Import every config of ``folder`` into a suite of its own under ``out`` (with a judge:
    import, add ``judge:`` to the suite's configuration, import again)."""
    result = Survey()
    for number, config in enumerate(configs(folder)):
        name = config.relative_to(folder).as_posix()
        result.configs += 1
        suite = out / f"suite-{number}"
        try:
            report = import_promptfoo(PromptfooImport(config, suite))
            if with_judge and (suite / "caseforge.yaml").is_file():
                with (suite / "caseforge.yaml").open("a", encoding="utf-8") as written:
                    written.write(JUDGE)
                report = import_promptfoo(PromptfooImport(config, suite))
        except CaseforgeError as exc:
            report = None
            result.errors.append(f"{name}: {exc}")
        except Exception:  # what the survey is for: a traceback is a bug
            result.tracebacks.append(f"{name}:\n{traceback.format_exc()}")
            continue
        if report is None:
            continue
        result.reports[name] = report
        _count(result, name, report)
    return result


def _count(result: Survey, name: str, report: PromptfooReport) -> None:
    outcomes = report.assertions
    reasons = set(report.reasons) | {o.kind for o in outcomes if not o.mapped}
    for reason in reasons:
        result.by_reason[reason] += 1
    for outcome in outcomes:
        if not outcome.mapped:
            result.unmapped_by_reason[outcome.kind] += 1
    result.assertions += len(outcomes)
    result.mapped += sum(1 for o in outcomes if o.mapped)
    if outcomes:
        result.with_assertions += 1
        if all(o.mapped for o in outcomes):
            result.all_mapped += 1
        else:
            kinds = sorted({o.kind for o in outcomes if not o.mapped})
            result.not_all_mapped.append(f"{name}: {', '.join(kinds)}")
    if report.empty:
        skipped = sorted({i.reason.split(":")[0] for i in report.items} or {"no tests"})
        result.empty.append(f"{name}: {'; '.join(skipped)}")
        return
    invalid = [i for i in report.items if i.status is ItemStatus.INVALID]
    for item in invalid:
        result.invalid.append(f"{name}: {item.path}: {item.reason}")
    if not invalid and report.validation.startswith("caseforge validate: valid"):
        result.valid_suites += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("examples", nargs="?", help="promptfoo's examples/ (or a copy)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--with-judge",
        action="store_true",
        help="re-import each config into its suite once judge: is configured there",
    )
    args = parser.parse_args()
    folder = examples_folder(args.examples)
    if not folder.is_dir():
        print(f"{folder}: not found; give promptfoo's examples/ folder", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        result = survey(folder, Path(tmp), args.with_judge)
    figures = {
        "configs read": result.configs,
        "configs with assertions": result.with_assertions,
        "with every assertion mapped": result.all_mapped,
        "share": round(result.share, 4),
        "assertions": result.assertions,
        "assertions mapped": result.mapped,
        "tracebacks": len(result.tracebacks),
        "import errors": len(result.errors),
        "imported suites": len(result.reports) - len(result.empty),
        "nothing to import (every test skipped)": len(result.empty),
        "suites that validate": result.valid_suites,
        "cases that do not validate": len(result.invalid),
    }
    if args.json:
        print(
            json.dumps(
                {**figures, "configs reporting, by reason": dict(result.by_reason.most_common())},
                indent=2,
            )
        )
        return 0
    for key, value in figures.items():
        print(f"{key:40} {value}")
    print(
        f"\n{result.all_mapped}/{result.with_assertions} = {result.share:.1%} of the configs "
        "with assertions import with every assertion mapped (target: at least 90 %)"
    )
    print("\nconfigs reporting something, by reason (configs; assertions not mapped):")
    for reason, count in result.by_reason.most_common():
        unmapped = result.unmapped_by_reason.get(reason, 0)
        print(f"  {reason:32} {count:4}  {unmapped or ''}")
    for title, lines in (
        ("tracebacks", result.tracebacks),
        ("import errors", result.errors),
        ("cases that do not validate", result.invalid),
    ):
        if lines:
            print(f"\n{title}:")
            print("\n".join(f"  {line}" for line in lines))
    return 1 if result.tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
