"""``caseforge scan``, ``caseforge resynth`` and ``caseforge audit``."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from caseforge.case.load import load_config
from caseforge.errors import CaseforgeError, UsageError

if TYPE_CHECKING:
    from caseforge.privacy.identifiers import Span

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def _check_lang(lang: str | None) -> None:
    from caseforge.privacy.policy import language

    if lang is not None:
        try:
            language(lang)
        except ValueError as exc:
            raise UsageError(f"--lang {lang!r}: {exc}") from None


def scan(
    file: Annotated[Path, typer.Argument(help="A text, YAML or JSON file (a ticket, a case).")],
    glossary: Annotated[
        Path | None, typer.Option(help="YAML {class: [strings]}: names only you know.")
    ] = None,
    lang: Annotated[str | None, typer.Option(help="zh-TW, zh-CN, vi or en.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Print every identifier span found, with its class and character offsets.

    A case file (YAML or JSON) is scanned field by field, its escapes decoded; other files
    as text, decoded from UTF-8, UTF-16 or a legacy encoding (Big5, GB18030, …).
    """
    from caseforge.privacy.identifiers import IdentifierDetector, load_glossary
    from caseforge.privacy.scan import read_for_scan, text_blocks

    _check_lang(lang)
    detector = IdentifierDetector(load_glossary(glossary) if glossary else None)
    blocks = text_blocks(file)
    if blocks is not None:  # a text file: each span printed as it is found
        _scan_stream(detector.scan_stream(blocks, lang), file, as_json)
        return
    fields, note = read_for_scan(file)
    found = [(path, span) for path, text in fields for span in detector.scan(text, lang)]
    if as_json:
        print(
            json.dumps(
                [
                    {"field": path, **span.to_json()} if path else span.to_json()
                    for path, span in found
                ],
                ensure_ascii=False,
                indent=1,
            )
        )
        return
    for path, span in found:
        where = f"{path}:" if path else ""
        out.print(f"{where}{span.start}-{span.end}\t{span.cls}\t{span.text}", markup=False)
    out.print(f"{len(found)} identifier span(s) in {file}{note}", markup=False)


def _scan_stream(spans: Iterator[Span], file: Path, as_json: bool) -> None:
    """Print each span as it comes: the output, like the memory, does not wait for the file."""
    count = 0
    if as_json:
        sys.stdout.write("[")
    for span in spans:
        if as_json:
            sys.stdout.write(
                ("," if count else "") + "\n " + json.dumps(span.to_json(), ensure_ascii=False)
            )
        else:  # plain writes: a dump can hold a hundred thousand spans
            sys.stdout.write(
                f"{span.start}-{span.end}\t{span.cls}\t{span.text}".expandtabs(8) + "\n"
            )
        count += 1
    if as_json:
        sys.stdout.write("\n]\n")
        return
    out.print(f"{count} identifier span(s) in {file}", markup=False)


def resynth(
    suite: Annotated[Path, typer.Argument(help="The suite folder.")],
    case_id: Annotated[
        str, typer.Argument(metavar="CASE", help="The failed case (suite or private store).")
    ],
    domain: Annotated[str, typer.Option(help="The target domain, e.g. 課程上架.")],
    reproduce: Annotated[
        str | None, typer.Option(help="The configuration that failed, re-run to confirm the miss.")
    ] = None,
    trials: Annotated[int, typer.Option(help="Trials for the reproduction.")] = 3,
    new_id: Annotated[str | None, typer.Option("--id", help="The new case's id.")] = None,
    glossary: Annotated[
        Path | None, typer.Option(help="Glossary file (default: private store).")
    ] = None,
    lang: Annotated[str | None, typer.Option(help="zh-TW, zh-CN, vi or en.")] = None,
    reviewer: Annotated[str, typer.Option(help="Who re-read the variant.")] = "",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the exact request and send nothing.")
    ] = False,
    miss: Annotated[
        str | None,
        typer.Option(
            help="Flags the failing configuration missed on the original (e.g. 3:mismatch), "
            "instead of re-running the agent on the original."
        ),
    ] = None,
) -> None:
    """Re-synthesise a sensitive failed case into a new domain, keeping what made it fail."""
    from caseforge.privacy.private import PrivateStore
    from caseforge.synth.client import synth_client
    from caseforge.synth.resynth import resynth as run_resynth

    if not domain.strip():
        err.print(
            "--domain: give the domain to rewrite the case into (e.g. 課程上架)", markup=False
        )
        raise typer.Exit(2)
    _check_lang(lang)
    config = load_config(suite)
    private = PrivateStore.for_suite(suite, config.name)
    try:
        client = synth_client(suite, "resynth", cache=False)
    except CaseforgeError:
        if not dry_run:
            raise
        client = None
    result = asyncio.run(
        run_resynth(
            suite,
            case_id,
            domain,
            client,
            private,
            reproduce,
            trials,
            new_id,
            glossary,
            lang,
            reviewer,
            dry_run=dry_run,
            original_miss=[m.strip() for m in miss.split(",")] if miss else None,
        )
    )
    if dry_run and result.payload is not None:
        print(result.payload.render())
        out.print(f"private store: {private.root}", markup=False)
    for check in result.checks:
        mark = "pass" if check.passed else "FAIL"
        out.print(f"[{mark}] {check.name}: {check.detail}", markup=False)
    out.print(f"payload kept in {result.payload_path}", markup=False)
    if not result.passed:
        failed = ", ".join(c.name for c in result.failed())
        if not result.sent:
            err.print(f"the request was blocked ({failed} failed): nothing was sent", markup=False)
        else:
            err.print(
                f"the variant stays out of the suite: {failed} failed "
                f"(kept in {private.root}/rejected/)",
                markup=False,
            )
        raise typer.Exit(1)
    if dry_run:
        out.print("dry run: nothing was sent", markup=False)
        return
    out.print(
        f"wrote {suite / 'cases' / (str(result.case_id) + '.yaml')}; the original ↔ variant "
        f"mapping is in {private.root / 'mappings'} (never commit it)"
        + ("" if reviewer else "; re-read it and fill provenance.reviewed_by/reviewed_on"),
        markup=False,
    )


def verify(
    original: Annotated[Path, typer.Argument(help="The original case file (private).")],
    variant: Annotated[Path, typer.Argument(help="The rewritten case file.")],
    suite: Annotated[
        Path | None,
        typer.Option(help="The suite: its other cases are public boilerplate, its settings apply."),
    ] = None,
    glossary: Annotated[
        Path | None,
        typer.Option(
            help="Glossary of the original (default: the private store's, found next to the "
            "original or through --suite)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Check a rewritten case against its original, whatever its goal state: no shared run,
    number, date, name or identifier in any fold, and no redaction mark. Exit 1 on a finding;
    the original is never printed."""
    from caseforge.case.load import load_case, load_suite
    from caseforge.privacy.identifiers import load_glossary
    from caseforge.privacy.overlap import Settings
    from caseforge.privacy.private import PrivateStore
    from caseforge.privacy.verify import content_fields, know_original, verify_variant

    for given in (original, variant):
        if not given.exists():
            raise UsageError(f"{given}: no such file; give the original and the variant case files")
    source = load_case(original)
    rewritten = load_case(variant)
    safe: list[str] = []
    settings = Settings()
    fixtures: list[str] = []
    beside = original.resolve().parent.parent / "glossaries" / f"{source.id}.yaml"
    if glossary is None and original.resolve().parent.name == "cases" and beside.is_file():
        glossary = beside  # the original sits in a private store, its glossary next to it
    if suite is not None:
        loaded = load_suite(suite)
        store = PrivateStore.for_suite(suite, loaded.config.name, lookup=True)
        if glossary is None and store.glossary_path(source.id).is_file():
            glossary = store.glossary_path(source.id)
        for folder in (suite / "fixtures", store.root / "fixtures"):
            for path in sorted(folder.glob(f"{source.id}*")) if folder.is_dir() else []:
                if path.is_file():
                    fixtures.append(path.read_text(encoding="utf-8", errors="replace"))
        settings = Settings(
            cjk_run=loaded.config.privacy.cjk_run, word_run=loaded.config.privacy.word_run
        )
        for other in loaded.cases:
            if other.case.id not in (source.id, rewritten.id):
                safe.extend(t for _, t in content_fields(other.case.model_dump(mode="json")))
    known = know_original(
        source.model_dump(mode="json"),
        load_glossary(glossary) if glossary else None,
        fixtures=fixtures,
        safe=safe,
        settings=settings,
    )
    if glossary is None:
        out.print(
            "note: no glossary for the original: names are found by their frequency and shape "
            "only (a glossary is surer)",
            markup=False,
        )
    checks = verify_variant(known.original, rewritten.model_dump(mode="json"))
    if as_json:
        print(
            json.dumps(
                [{"name": c.name, **c.to_json(), "findings": c.findings} for c in checks],
                ensure_ascii=False,
                indent=1,
            )
        )
    else:
        for check in checks:
            mark = "pass" if check.passed else "FAIL"
            out.print(f"[{mark}] {check.name}: {check.detail}", markup=False)
            for finding in check.findings[5:]:
                out.print(f"       {finding}", markup=False)
    if not all(c.passed for c in checks):
        raise typer.Exit(1)


def audit(
    suite: Annotated[Path, typer.Argument(help="The suite folder.")],
    since: Annotated[str | None, typer.Option(help="Only commits after this one.")] = None,
    private_dir: Annotated[
        Path | None, typer.Option("--private", help="The private store root (default: the usual).")
    ] = None,
    require_history: Annotated[
        bool,
        typer.Option(
            "--require-history", help="Fail (exit 5) on a shallow clone instead of reading less."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Fail on loosened criteria without a Criteria-change reason, and on private data leaks."""
    from caseforge.audit.criteria import loosenings
    from caseforge.audit.privacy import audit_privacy
    from caseforge.privacy.overlap import Settings
    from caseforge.privacy.private import PrivateStore
    from caseforge.vcs import work_tree

    config = load_config(suite)
    if private_dir is not None and not private_dir.is_dir():
        err.print(
            f"--private {private_dir}: "
            + ("is a file, not a folder" if private_dir.exists() else "no such folder")
            + " (give the folder that holds the stores, or a store itself)",
            markup=False,
        )
        raise typer.Exit(2)
    in_git = work_tree(suite) is not None
    found = loosenings(suite, since) if in_git else []
    problems = [x for x in found if not x.excused]
    store = PrivateStore.for_suite(suite, config.name, private_dir, lookup=True)
    privacy = config.privacy
    report = audit_privacy(
        suite,
        store,
        require_history=require_history,
        settings=Settings(cjk_run=privacy.cjk_run, word_run=privacy.word_run),
    )
    leaks = report.leaks + report.lint
    if as_json:
        print(
            json.dumps(
                {
                    "loosenings": [x.__dict__ for x in found],
                    "unexcused": len(problems),
                    "leaks": [leak.to_json() for leak in report.leaks],
                    "lint": [leak.to_json() for leak in report.lint],
                    "not_audited": [u.__dict__ for u in report.not_audited],
                    "private_store": str(report.store) if report.store else None,
                    "private_strings": report.private_strings,
                    "history": {
                        "read": report.history_read,
                        "commits": report.commits,
                        "versions": report.history_versions,
                        "shallow": report.shallow,
                    },
                    "fictional_originals": report.fictional,
                },
                ensure_ascii=False,
                indent=1,
                default=str,
            )
        )
    else:
        for x in problems:
            out.print(
                f"{x.path}: commit {x.short} loosened {x.case_id}.{x.field} ({x.kind}): "
                f"{json.dumps(x.before, ensure_ascii=False, default=str)} → "
                f"{json.dumps(x.after, ensure_ascii=False, default=str)} "
                "without a Criteria-change trailer",
                markup=False,
            )
        for leak in leaks:
            out.print(leak.format(), markup=False)
        for unread in report.not_audited:
            out.print(f"not audited: {unread.origin} ({unread.why})", markup=False)
        if report.shallow:
            out.print(
                f"history: this clone is shallow ({report.commits} commits read); fetch the "
                "whole history (fetch-depth: 0) or pass --require-history to fail on it",
                markup=False,
            )
        if report.store is None:
            how = (
                f"no private store at {store.root}: linted {report.data_files} data files only "
                "(redaction marks, 40-hex SHAs, real e-mail domains, ids and phones in "
                "hand-written cases)"
            )
        else:
            how = (
                f"{report.private_strings} private strings from {report.store} searched in "
                f"{report.files} files"
                + (
                    f", {report.history_versions} older versions and {report.commits} commit "
                    "messages"
                    if report.history_read
                    else ""
                )
                + f"; {report.data_files} data files linted"
                + (
                    f"; {report.short_terms_ignored} one-character glossary entries ignored"
                    if report.short_terms_ignored
                    else ""
                )
            )
        excused = len(found) - len(problems)
        out.print(
            (
                f"criteria: {len(problems)} loosening(s) without a Criteria-change reason"
                if in_git
                else "criteria: not audited (the suite is not in a git work tree)"
            )
            + (f", {excused} with one" if excused else "")
            + f"; leaks: {len(leaks)} ({how})",
            markup=False,
        )
    if problems or leaks:
        raise typer.Exit(1)
