"""The private store: keyed by the suite's folder and repository, refusing to write inside an
unignored work tree, failing closed when git is missing; stores written before the key was
renamed from ``SuiteIdentity`` read as they did."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from caseforge import vcs
from caseforge.errors import CaseforgeError
from caseforge.privacy.private import PrivateStore, PrivateStoreKey, private_store_key
from tests.gitrepo import git


def make_repo(path: Path, suites: list[str]) -> Path:
    for name in suites:
        (path / name).mkdir(parents=True)
        (path / name / "caseforge.yaml").write_text("name: support\n")
    git(path, "init", "-q")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "start")
    return path


def test_two_suites_with_one_name_never_share_a_store(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["a", "b"])
    base = tmp_path / "private"
    first = PrivateStore.for_suite(repo / "a", "support", base)
    second = PrivateStore.for_suite(repo / "b", "support", base)
    assert first.root != second.root
    first.write("glossaries/c.yaml", "person: [林佩萱]\n")
    assert first.secret() != second.secret()
    assert not (second.root / "glossaries").exists()
    assert (first.root / "identity.json").is_file()


def test_a_clone_at_another_path_finds_the_same_store(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["suite"])
    clone = tmp_path / "elsewhere" / "checkout"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True)
    base = tmp_path / "private"
    here = PrivateStore.for_suite(repo / "suite", "support", base)
    there = PrivateStore.for_suite(clone / "suite", "support", base)
    assert here.root == there.root
    key = private_store_key(clone / "suite", "support")
    assert key.relative == "suite" and len(key.root) == 40


def test_refuses_an_unignored_work_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["suite"])
    inside = PrivateStore(repo / "private" / "support")
    with pytest.raises(CaseforgeError, match="inside the git work tree"):
        inside.write("glossaries/a.yaml", "person: [林佩萱]\n")
    assert not (repo / "private").exists()
    (repo / ".gitignore").write_text("private/\n")
    assert inside.write("glossaries/a.yaml", "person: [林佩萱]\n").is_file()  # ignored: fine
    outside = PrivateStore(tmp_path / "elsewhere" / "support")
    secret = outside.secret()
    assert len(secret) == 32 and outside.secret() == secret
    assert (outside.root / "secret.key").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (None, "git is not on PATH"),
        (
            subprocess.CompletedProcess(
                [], 128, "", "fatal: detected dubious ownership in repository"
            ),
            "dubious ownership",
        ),
    ],
)
def test_fails_closed_when_git_cannot_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: object, why: str
) -> None:
    repo = make_repo(tmp_path / "repo", ["suite"])
    (repo / ".gitignore").write_text("private/\n")
    monkeypatch.setattr(vcs, "git", lambda args, cwd: answer)
    ignored = PrivateStore(repo / "private" / "support")
    with pytest.raises(CaseforgeError, match=why) as raised:
        ignored.write("glossaries/a.yaml", "person: [林佩萱]\n")  # cannot tell: refuse
    assert raised.value.exit_code == 5 and not (repo / "private").exists()
    with pytest.raises(CaseforgeError, match=why):
        PrivateStore.for_suite(repo / "suite", "support", tmp_path / "private")
    outside = PrivateStore(tmp_path / "nowhere-near-git" / "support")
    assert outside.write("glossaries/a.yaml", "person: [林佩萱]\n").is_file()


def test_an_old_name_keyed_store_is_pointed_at(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["suite"])
    base = tmp_path / "private"
    (base / "support").mkdir(parents=True)
    (base / "support" / "secret.key").write_text("00" * 32)
    with pytest.raises(CaseforgeError, match=r"keyed by the suite's name alone.*mv "):
        PrivateStore.for_suite(repo / "suite", "support", base)
    shutil.rmtree(base / "support")
    assert PrivateStore.for_suite(repo / "suite", "support", base).root.name.startswith("support-")


def _root_commit(repo: Path) -> str:
    out = subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"], cwd=repo, capture_output=True, text=True
    )
    return out.stdout.split()[0]


def _old_store(base: Path, root: str) -> Path:
    """A store as caseforge 0.1.0 wrote it (``SuiteIdentity`` in synth/private.py), by hand:
    its folder ``<slug>-<sha256(root NUL relative)[:12]>`` and its ``identity.json``."""
    digest = hashlib.sha256(f"{root}\0suite".encode()).hexdigest()[:12]
    store = base / f"support-{digest}"
    (store / "glossaries").mkdir(parents=True)
    (store / "identity.json").write_text(
        '{\n "name": "support",\n "relative": "suite",\n "root": "' + root + '"\n}\n',
        encoding="utf-8",
    )
    (store / "secret.key").write_text("ab" * 32 + "\n")
    (store / "glossaries" / "c-1.yaml").write_text("person: [林佩萱]\n", encoding="utf-8")
    return store


def test_a_store_written_before_the_key_was_renamed_still_reads(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["suite"])
    base = tmp_path / "private"
    old = _old_store(base, _root_commit(repo))
    before = (old / "identity.json").read_bytes()
    store = PrivateStore.for_suite(repo / "suite", "support", base)
    assert store.root == old
    assert store.secret() == bytes.fromhex("ab" * 32)
    assert ("person", "林佩萱", "c-1") in store.private_terms()
    store.write("shapes/c-1.txt", "one flag on the item that carries two\n")
    assert (old / "identity.json").read_bytes() == before  # never rewritten


def test_a_shallow_clone_finds_an_old_store_by_its_identity_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["suite"])
    (repo / "suite" / "notes.md").write_text("second commit\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "second")
    clone = tmp_path / "ci" / "checkout"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", repo.as_uri(), str(clone)],
        check=True,
        capture_output=True,
    )
    base = tmp_path / "private"
    old = _old_store(base, _root_commit(repo))
    assert private_store_key(clone / "suite", "support").root == "shallow"
    assert PrivateStore.for_suite(clone / "suite", "support", base).root == old


def test_a_new_store_writes_the_identity_file_old_caseforge_wrote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["suite"])
    root = _root_commit(repo)
    store = PrivateStore.for_suite(repo / "suite", "support", tmp_path / "private")
    store.write("glossaries/c-1.yaml", "person: [林佩萱]\n")
    assert store.key == PrivateStoreKey("support", "suite", root)
    digest = hashlib.sha256(f"{root}\0suite".encode()).hexdigest()[:12]
    assert store.root.name == f"support-{digest}"
    written = (store.root / "identity.json").read_text(encoding="utf-8")
    assert written == '{\n "name": "support",\n "relative": "suite",\n "root": "' + root + '"\n}\n'
    assert json.loads(written) == {"name": "support", "relative": "suite", "root": root}
