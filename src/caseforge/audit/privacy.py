"""The privacy half of ``caseforge audit``: search the repository and its history for what
the private store knows, and lint the suite's data files.

No store at all means lint only, and the report says so. A store that cannot be read is an
environment error; a store that exists but holds no private strings is an error too (an
audit against nothing would pass anything).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.audit import sources
from caseforge.audit.leaks import Leak, Matcher, PrivateData, is_data_file, lint_text, search
from caseforge.audit.sources import Text, Unreadable
from caseforge.case.load import load_case, load_suite
from caseforge.errors import CaseforgeError
from caseforge.synth.overlap import Settings
from caseforge.synth.private import PrivateStore
from caseforge.synth.verify import content_fields


@dataclass
class PrivacyReport:
    """What the privacy audit found and what it read."""

    leaks: list[Leak] = field(default_factory=list)
    lint: list[Leak] = field(default_factory=list)
    not_audited: list[Unreadable] = field(default_factory=list)
    store: Path | None = None
    private_strings: int = 0
    files: int = 0
    history_versions: int = 0
    commits: int = 0
    shallow: bool = False
    history_read: bool = False
    data_files: int = 0
    fictional: list[str] = field(default_factory=list)


def _fictional(suite_dir: Path) -> tuple[set[str], set[Path]]:
    """Ids and files of cases marked ``provenance.fictional_original``."""
    ids: set[str] = set()
    paths: set[Path] = set()
    for loaded in load_suite(suite_dir).cases:
        if loaded.case.provenance.get("fictional_original") is True:
            ids.add(loaded.case.id)
            paths.add(loaded.path.resolve())
    return ids, paths


def _resynthesised(suite_dir: Path) -> set[Path]:
    return {
        loaded.path.resolve()
        for loaded in load_suite(suite_dir).cases
        if loaded.case.provenance.get("synth_run")
    }


def private_data(store: PrivateStore, fictional: set[str]) -> PrivateData:
    """What the store knows, minus what only fictional originals contribute."""
    try:
        raw = store.private_terms()
        secret = store.secret()
    except CaseforgeError:
        raise
    except OSError as exc:
        raise CaseforgeError(
            f"{store.root}: cannot read the private store: {exc}", exit_code=5
        ) from None
    real_sources: dict[tuple[str, str], set[str]] = {}
    for cls, original, source in raw:
        real_sources.setdefault((cls, original), set()).add(source)
    terms = [key for key, found_in in real_sources.items() if not found_in <= fictional]
    texts: list[str] = []
    folder = store.root / "cases"
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        if path.stem in fictional:
            continue
        texts.extend(t for _, t in content_fields(load_case(path).model_dump(mode="json")))
    return PrivateData(terms, texts, secret)


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
    fictional_ids, fictional_paths = _fictional(suite_dir)
    report.fictional = sorted(fictional_ids)
    top, files = sources.repo_files(suite_dir)
    if store.exists():
        data = private_data(store, fictional_ids)
        if not data.terms and not data.source_texts:
            raise CaseforgeError(
                f"{store.root}: the private store holds no private strings (no glossary entries, "
                "no recorded originals, no sensitive cases): an audit against it would pass "
                "anything; add glossaries, or remove the empty store to lint only"
            )
        report.store = store.root
        report.private_strings = len(data.terms)
        matcher = Matcher(data, settings)
        work_tree = [
            item
            for path in files
            if path.resolve() not in fictional_paths
            for item in sources.read_file(path, str(path.relative_to(top)))
        ]
        report.files = len(files) - len(fictional_paths & {p.resolve() for p in files})
        found, unreadable = search(work_tree, matcher)
        report.leaks.extend(found)
        report.not_audited.extend(unreadable)
        if history and (top / ".git").exists():
            past = sources.history(top, sources.current_blobs(top))
            report.history_read = True
            report.shallow = past.shallow
            report.commits = past.commits
            report.history_versions = sum(1 for t in past.texts if isinstance(t, Text) and t.blob)
            if past.shallow and require_history:
                raise CaseforgeError(
                    f"{top}: the clone is shallow ({past.commits} commits): the audit cannot read "
                    "the whole history; fetch it (git fetch --unshallow, or fetch-depth: 0 in CI)",
                    exit_code=5,
                )
            found, unreadable = search(
                _outside_fictional(past.texts, fictional_paths, top), matcher
            )
            report.leaks.extend(_with_commits(found, past.texts, top))
            report.not_audited.extend(unreadable)
    exempt = fictional_paths | _resynthesised(suite_dir)
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
                if path.resolve() in exempt and leak.kind.startswith("a "):
                    continue  # ids in a fictional or re-synthesised case were made up
                if leak not in report.lint:
                    report.lint.append(leak)
    return report


def _outside_fictional(
    texts: list[Text | Unreadable], fictional: set[Path], top: Path
) -> Iterator[Text | Unreadable]:
    skip = {str(p.relative_to(top)) for p in fictional if p.is_relative_to(top)}
    for item in texts:
        path = item.origin.split(":", 2)[-1] if item.origin.startswith("history:") else None
        if path is not None and path in skip:
            continue
        yield item


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
