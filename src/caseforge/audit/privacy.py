"""The privacy half of ``caseforge audit``: search the repository and its history for what
the private store knows, and lint the suite's data files.

What the store knows: its glossary entries; the originals recorded in mappings; and, for each
sensitive case it keeps, every identifier the scanner finds in it (with that case's
glossary) and its runs of text. No store at all means lint only, and the report says so. A
store that cannot be read is an environment error; a store that exists but holds no private
strings is an error too (an audit against nothing would pass anything). A shallow clone is
found before anything else, so ``--require-history`` fails whether or not a store exists.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.audit import sources
from caseforge.audit.leaks import Leak, Matcher, PrivateData, is_data_file, lint_text, search
from caseforge.case.load import load_case, load_suite
from caseforge.decoding import Text, Unreadable
from caseforge.errors import CaseforgeError, EnvError
from caseforge.privacy.overlap import Settings
from caseforge.privacy.private import PrivateStore
from caseforge.privacy.verify import case_day, content_fields
from caseforge.vcs import is_shallow


@dataclass
class PrivacyReport:
    """What the privacy audit found and what it read."""

    leaks: list[Leak] = field(default_factory=list)
    lint: list[Leak] = field(default_factory=list)
    not_audited: list[Unreadable] = field(default_factory=list)
    store: Path | None = None
    private_strings: int = 0
    short_terms_ignored: int = 0
    files: int = 0
    history_versions: int = 0
    commits: int = 0
    shallow: bool = False
    history_read: bool = False
    data_files: int = 0
    fictional: list[str] = field(default_factory=list)


def _fictional(suite_dir: Path) -> set[str]:
    """Ids of the cases marked ``provenance.fictional_original``."""
    return {
        loaded.case.id
        for loaded in load_suite(suite_dir).cases
        if loaded.case.provenance.get("fictional_original") is True
    }


def _made_up(suite_dir: Path) -> set[Path]:
    """Case files whose ids and numbers were made up: fictional originals and variants."""
    return {
        loaded.path.resolve()
        for loaded in load_suite(suite_dir).cases
        if loaded.case.provenance.get("fictional_original") is True
        or loaded.case.provenance.get("synth_run")
    }


def _private_case(path: Path) -> dict[str, object]:
    """A sensitive case of the store, as JSON; an invalid one is named without its values."""
    try:
        return load_case(path).model_dump(mode="json")
    except CaseforgeError as exc:
        where = exc.problems[0] if exc.problems else None
        at = f"{where.line}:{where.col}: {where.field}" if where else "?"
        raise EnvError(
            f"{path}:{at}: not a valid case (the values are not shown: the file is private); "
            "fix it in the private store"
        ) from None


def private_data(store: PrivateStore, fictional: set[str]) -> PrivateData:
    """What the store knows, minus what only fictional originals contribute."""
    from caseforge.privacy.identifiers import IdentifierDetector, load_glossary

    try:
        raw = store.private_terms()
        secret = store.secret()
    except OSError as exc:
        raise EnvError(f"{store.root}: cannot read the private store: {exc}") from None
    texts: list[str] = []
    clocks: list[dt.date | None] = []
    folder = store.root / "cases"
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        if path.stem in fictional:
            continue
        data = _private_case(path)
        fields = list(content_fields(data))
        texts.extend(t for _, t in fields)
        clocks.extend(case_day(data.get("clock")) for _ in fields)
        glossary_path = store.glossary_path(path.stem)
        glossary = load_glossary(glossary_path) if glossary_path.is_file() else None
        detector = IdentifierDetector(glossary)
        raw.extend((span.cls, span.text, path.stem) for _, t in fields for span in detector.scan(t))
    sources_of: dict[tuple[str, str], set[str]] = {}
    for cls, original, source in raw:
        sources_of.setdefault((cls, original), set()).add(source)
    terms = [key for key, found_in in sources_of.items() if not found_in <= fictional]
    return PrivateData(terms, texts, secret, clocks)


def audit_privacy(
    suite_dir: Path,
    store: PrivateStore,
    *,
    history: bool = True,
    require_history: bool = False,
    settings: Settings | None = None,
) -> PrivacyReport:
    """Search the repository holding ``suite_dir`` (and its history) for the store's private
    data, and lint the suite's data files."""
    suite_dir = suite_dir.resolve()
    report = PrivacyReport()
    fictional = _fictional(suite_dir)
    report.fictional = sorted(fictional)
    top, files = sources.repo_files(suite_dir)
    in_git = (top / ".git").exists()
    report.shallow = in_git and is_shallow(top)
    if require_history and not in_git:
        raise EnvError(
            f"{suite_dir}: not in a git repository, so there is no history to audit "
            "(--require-history)"
        )
    if report.shallow and require_history:
        raise EnvError(
            f"{top}: the clone is shallow: the audit cannot read the whole history; fetch it "
            "(git fetch --unshallow, or fetch-depth: 0 in CI)"
        )
    if store.exists():
        data = private_data(store, fictional)
        if not data.terms and not data.source_texts:
            raise CaseforgeError(
                f"{store.root}: the private store holds no private strings (no glossary entries, "
                "no recorded originals, no sensitive cases): an audit against it would pass "
                "anything; add glossaries, or remove the empty store to lint only"
            )
        report.store = store.root
        matcher = Matcher(data, settings)
        report.private_strings = len(data.terms) - matcher.short_terms
        report.short_terms_ignored = matcher.short_terms
        read: set[str] = set()
        work_tree = [
            item
            for path in files
            for item in sources.read_file(path, str(path.relative_to(top)), read)
        ]
        report.files = len(files)
        found, unreadable = search(work_tree, matcher)
        report.leaks.extend(found)
        report.not_audited.extend(unreadable)
        if history and in_git:
            past = sources.git_history(top, read)
            report.history_read = True
            report.commits = past.commits
            report.history_versions = sum(1 for t in past.texts if isinstance(t, Text) and t.blob)
            found, unreadable = search(past.texts, matcher)
            report.leaks.extend(_with_commits(found, past.texts, top))
            report.not_audited.extend(unreadable)
    made_up = _made_up(suite_dir)
    for path in files:
        relative = path.relative_to(suite_dir) if path.is_relative_to(suite_dir) else None
        if relative is None or not is_data_file(relative):
            continue
        report.data_files += 1
        shown = str(path.relative_to(top))
        for item in sources.read_file(path, shown):
            if isinstance(item, Unreadable):
                continue
            for leak in lint_text(shown, item.text):
                if path.resolve() in made_up and leak.kind.startswith("a "):
                    continue  # ids in a fictional or re-synthesised case were made up
                if leak not in report.lint:
                    report.lint.append(leak)
    return report


def _with_commits(leaks: list[Leak], texts: list[Text | Unreadable], top: Path) -> list[Leak]:
    """History findings named by the commit that brought the version in."""
    blobs = {t.origin: t.blob for t in texts if isinstance(t, Text) and t.blob}
    named: dict[str, str] = {}
    out = []
    for leak in leaks:
        blob = blobs.get(leak.origin)
        if blob is None:
            out.append(leak)
            continue
        if blob not in named:
            commit = sources.first_commit_with(top, blob)
            path = leak.origin.split(":", 2)[-1]
            named[blob] = f"history {commit or blob[:10]}:{path}"
        out.append(Leak(named[blob], leak.line, leak.col, leak.kind, leak.cls, leak.tag))
    return out
