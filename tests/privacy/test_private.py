"""The private store: keyed by the suite's identity, refusing to write inside an unignored
work tree, failing closed when git is missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from caseforge import vcs
from caseforge.errors import CaseforgeError
from caseforge.privacy.private import PrivateStore, suite_identity
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
    identity = suite_identity(clone / "suite", "support")
    assert identity.relative == "suite" and len(identity.root) == 40


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
