"""``caseforge audit`` against a private store, on a real git repository with every planted
leak form: other folders, untracked files, JSON and YAML escapes, Big5, UTF-16 and gzip
files, content committed and then reverted, commit messages, and the disguises of the
overlap check. The original is never printed; binary files are listed as not audited."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from caseforge.privacy.private import PrivateStore
from tests.gitrepo import git

NAME = "林佩萱"
ORIGINAL = """id: tk-001
input:
  ticket: |
    客戶木棉市集的林佩萱回報：去年那批折價券被貼到比價論壇，一週內同一批帳號重複折抵了好幾百單。
    年約 NT$1,280,000，2026/3/5 前要處理完。
expect:
  flags: {mode: exact_set, values: ["3:conflict"]}
"""
CASE = "id: {id}\ninput: {{ticket: '{text}'}}\nexpect:\n  x: {{mode: exact, value: 1}}\n"


def audit(suite: Path, store: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "caseforge", "audit", str(suite), "--private", str(store), *extra],
        capture_output=True,
        text=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    suite = repo / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: leaky\n")
    (suite / "cases" / "ok.yaml").write_text(CASE.format(id="ok", text="課程上架流程"))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    return repo


@pytest.fixture
def store(tmp_path: Path, repo: Path) -> Path:
    base = tmp_path / "private"
    private = PrivateStore.for_suite(repo / "suite", "leaky", base)
    private.write("glossaries/tk-001.yaml", f"person: [{NAME}, 陳昱廷]\norganization: [木棉市集]\n")
    private.write("cases/tk-001.yaml", ORIGINAL)
    private.write(
        "mappings/v1.json",
        json.dumps(
            {
                "source_case": "tk-001",
                "originals": {"money": ["NT$1,280,000"], "date": ["2026/3/5"]},
            }
        ),
    )
    return base


def plant(repo: Path) -> None:
    suite = repo / "suite"
    (repo / "README.md").write_text(f"維護者：{NAME}\n", encoding="utf-8")  # outside the suite
    (repo / "notes.txt").write_text("問過陈昱廷了\n", encoding="utf-8")  # untracked, simplified
    (repo / "data.json").write_text(json.dumps({"who": NAME}), encoding="utf-8")  # \u escapes
    (repo / "esc.yaml").write_text('who: "\\u6797\\u4F69\\u8431"\n', encoding="utf-8")
    (repo / "legacy.txt").write_bytes(f"聯絡人 {NAME}".encode("big5"))
    (repo / "wide.txt").write_bytes(f"聯絡人 {NAME}".encode("utf-16"))
    (repo / "log.gz").write_bytes(gzip.compress(f"user={NAME}".encode()))
    (repo / "budget.md").write_text("預算大約 128萬\n", encoding="utf-8")  # the amount
    (repo / "dates.md").write_text("民國115年3月5日前\n", encoding="utf-8")  # the date
    (repo / "zw.md").write_text("林\u200b佩\u200d萱\n", encoding="utf-8")
    (suite / "cases" / "copy.yaml").write_text(  # a copied passage of the sensitive case
        CASE.format(id="copy", text="去年那批折價券被貼到比價論壇，一週內同一批帳號重複折抵"),
        encoding="utf-8",
    )
    # a short clause of ordinary words, as anyone might write it: common words never leak
    (repo / "ordinary.md").write_text("一週內同一批帳號重複折抵\n", encoding="utf-8")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (repo / ".gitignore").write_text("ignored.txt\n")
    (repo / "ignored.txt").write_text(NAME)  # ignored: git would never publish it
    git(repo, "add", "README.md", "data.json", "esc.yaml", "legacy.txt", "wide.txt", "log.gz")
    git(repo, "add", "budget.md", "dates.md", "zw.md", "suite", "logo.png", ".gitignore")
    git(repo, "commit", "-q", "-m", "plant")
    # a leak committed and reverted, and one in a commit message
    (repo / "old.md").write_text("contact: Lin Pei-Hsuan\n")
    git(repo, "add", "old.md")
    git(repo, "commit", "-q", "-m", "add contact")
    git(repo, "rm", "-q", "old.md")
    git(repo, "commit", "-q", "-m", f"remove the contact of {NAME}")


def test_every_planted_leak_form_is_reported_without_the_original(repo: Path, store: Path) -> None:
    plant(repo)
    result = audit(repo / "suite", store)
    assert result.returncode == 1, result.stderr
    report = result.stdout + result.stderr
    for original in (NAME, "木棉市集", "1,280,000", "陈昱廷", "陳昱廷", "Pei-Hsuan", "折抵"):
        assert original not in report
    where = {line.split(":", 1)[0] for line in result.stdout.splitlines()}
    for path in (
        "README.md",
        "notes.txt",
        "data.json",
        "esc.yaml",
        "legacy.txt",
        "wide.txt",
        "log.gz",
        "budget.md",
        "dates.md",
        "zw.md",
        "suite/cases/copy.yaml",
    ):
        assert path in where, (path, result.stdout)
    assert "ignored.txt" not in where and "ordinary.md" not in where
    lines = result.stdout.splitlines()
    assert any(line.startswith("history ") and ":old.md:" in line for line in lines), lines
    assert any(line.startswith("commit:") for line in lines), lines
    assert "private string (person #" in result.stdout
    assert "private value (money #" in result.stdout
    assert "private value (date #" in result.stdout
    assert "original content (run)" in result.stdout
    assert "not audited: logo.png (PNG image)" in result.stdout
    tags = {line.rsplit("#", 1)[-1] for line in result.stdout.splitlines() if "(person #" in line}
    assert len(tags) == 2 and all(len(t.rstrip(")")) == 8 for t in tags)  # two names, two tags


def test_the_tag_is_keyed_by_the_store_secret(repo: Path, store: Path, tmp_path: Path) -> None:
    (repo / "README.md").write_text(NAME)
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "readme")
    first = audit(repo / "suite", store).stdout
    other = tmp_path / "other"
    private = PrivateStore.for_suite(repo / "suite", "leaky", other)
    private.write("glossaries/tk-001.yaml", f"person: [{NAME}]\n")
    second = audit(repo / "suite", other).stdout
    tag = next(line for line in first.splitlines() if "README.md" in line).rsplit("#", 1)[1]
    assert tag not in second  # another secret, another tag: nothing to enumerate across stores


def test_a_clean_repository_passes_and_says_what_it_read(repo: Path, store: Path) -> None:
    result = audit(repo / "suite", store, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["leaks"] == [] and data["lint"] == []
    assert data["private_strings"] == 5 and data["history"]["read"] is True
    assert data["history"]["commits"] == 1 and data["history"]["shallow"] is False


def test_an_empty_store_is_an_error_and_no_store_means_lint_only(
    repo: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    PrivateStore.for_suite(repo / "suite", "leaky", empty).secret()
    result = audit(repo / "suite", empty)
    assert result.returncode == 1 and "holds no private strings" in result.stderr
    (tmp_path / "none").mkdir()
    none = audit(repo / "suite", tmp_path / "none")
    assert none.returncode == 0 and "no private store at" in none.stdout
    assert "data files only" in none.stdout


def test_lint_runs_with_or_without_a_store(repo: Path, store: Path, tmp_path: Path) -> None:
    cases = repo / "suite" / "cases"
    (cases / "masked.yaml").write_text(CASE.format(id="masked", text="客戶 王○明 來電"))
    (cases / "ssn.yaml").write_text(CASE.format(id="ssn", text="SSN 536-22-8410 on file"))
    (repo / "suite" / "templates").mkdir()
    (repo / "suite" / "templates" / "reply.txt").write_text("Dear {{customer_name}},")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "cases")
    (tmp_path / "none").mkdir()
    for where in (store, tmp_path / "none"):
        result = audit(repo / "suite", where)
        assert result.returncode == 1
        assert "masked.yaml:2:" in result.stdout and "(dot mask)" in result.stdout
        assert "ssn.yaml:2:" in result.stdout and "(national_id)" in result.stdout
        assert "reply.txt" not in result.stdout  # a template, not a data file


def test_a_fictional_original_is_exempt(repo: Path, tmp_path: Path) -> None:
    fictional = ORIGINAL + "provenance: {fictional_original: true}\n"
    (repo / "suite" / "cases" / "tk-001.yaml").write_text(fictional, encoding="utf-8")
    (repo / "README.md").write_text(f"the example names {NAME}\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the fictional example")
    base = tmp_path / "private"
    private = PrivateStore.for_suite(repo / "suite", "leaky", base)
    private.write("glossaries/tk-001.yaml", f"person: [{NAME}]\n")
    private.write("glossaries/real-002.yaml", "person: [周承翰]\n")
    result = audit(repo / "suite", base)
    assert result.returncode == 0, result.stdout
    (repo / "notes.md").write_text("周承翰 called\n", encoding="utf-8")
    leaked = audit(repo / "suite", base)
    assert leaked.returncode == 1 and "notes.md:1:1: private string (person #" in leaked.stdout


def test_a_shallow_clone_finds_the_store_and_is_said(
    repo: Path, store: Path, tmp_path: Path
) -> None:
    (repo / "README.md").write_text(f"maintainer: {NAME}\n", encoding="utf-8")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "two")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)],
        check=True,
        capture_output=True,
    )
    # the clone lacks the root commit that keys the store: found by the suite's name and folder
    result = audit(clone / "suite", store)
    assert result.returncode == 1 and "this clone is shallow" in result.stdout
    assert "README.md:1:13: private string (person #" in result.stdout
    strict = audit(clone / "suite", store, "--require-history")
    assert strict.returncode == 5 and "shallow" in strict.stderr
    (tmp_path / "empty-root").mkdir()
    nowhere = audit(clone / "suite", tmp_path / "empty-root", "--require-history")
    assert nowhere.returncode == 5  # fails closed with no store at all
    lint_only = audit(clone / "suite", tmp_path / "empty-root")
    assert lint_only.returncode == 0 and "no private store" in lint_only.stdout


def test_a_named_store_root_must_exist_and_may_be_the_store_itself(
    repo: Path, store: Path, tmp_path: Path
) -> None:
    (repo / "README.md").write_text(f"maintainer: {NAME}\n", encoding="utf-8")
    typo = audit(repo / "suite", tmp_path / "no-such-folder")
    assert typo.returncode == 2 and "no-such-folder" in typo.stderr
    folder = PrivateStore.for_suite(repo / "suite", "leaky", store).root
    direct = audit(repo / "suite", folder)
    assert direct.returncode == 1 and "README.md:1:13: private string" in direct.stdout


def test_an_unreadable_store_is_an_environment_error(repo: Path, store: Path) -> None:
    private = PrivateStore.for_suite(repo / "suite", "leaky", store)
    secret = private.root / "secret.key"
    secret.unlink(missing_ok=True)
    secret.mkdir()
    result = audit(repo / "suite", store)
    assert result.returncode == 5 and "secret.key: cannot" in result.stderr


def test_a_committed_leak_edited_away_unstaged_is_still_found(repo: Path, store: Path) -> None:
    notes = repo / "notes.md"
    notes.write_text(f"聯絡人 {NAME}\n", encoding="utf-8")
    git(repo, "add", "notes.md")
    git(repo, "commit", "-q", "-m", "notes")
    notes.write_text("聯絡人 (removed)\n", encoding="utf-8")  # edited, not staged
    edited = audit(repo / "suite", store)
    assert edited.returncode == 1 and ":notes.md:1:5: private string" in edited.stdout
    notes.unlink()  # deleted, not staged
    deleted = audit(repo / "suite", store)
    assert deleted.returncode == 1 and ":notes.md:1:5: private string" in deleted.stdout


def test_a_fictional_case_is_still_searched_for_other_cases_private_data(
    repo: Path, store: Path
) -> None:
    path = repo / "suite" / "cases" / "fic.yaml"
    real = CASE.format(id="fic", text=f"客戶 {NAME} 的單")
    path.write_text(real, encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "real content first")
    path.write_text(
        CASE.format(id="fic", text="課程上架") + "provenance: {fictional_original: true}\n",
        encoding="utf-8",
    )
    git(repo, "commit", "-q", "-am", "now marked fictional")
    result = audit(repo / "suite", store)
    assert result.returncode == 1
    assert ":suite/cases/fic.yaml:2:" in result.stdout  # the older version, in the history


def test_the_sensitive_cases_amounts_dates_and_name_parts_are_searched(
    repo: Path, store: Path
) -> None:
    (repo / "n.md").write_text("預算大約 128萬\n負責人：佩萱\n截止 2026-03-05\n", encoding="utf-8")
    result = audit(repo / "suite", store)
    assert result.returncode == 1
    for line in ("n.md:1:", "n.md:2:", "n.md:3:"):
        assert line in result.stdout, result.stdout


def test_an_invalid_private_case_is_named_without_its_values(repo: Path, store: Path) -> None:
    private = PrivateStore.for_suite(repo / "suite", "leaky", store)
    private.write(
        "cases/bad.yaml",
        f"id: bad\ninput: {{t: x}}\nexpect:\n  f: {{mode: exact_set, values: '{NAME}'}}\n",
    )
    result = audit(repo / "suite", store)
    assert result.returncode == 5 and "bad.yaml:4:" in result.stderr
    assert NAME not in result.stdout + result.stderr


def test_an_older_mapping_and_a_huge_file_do_not_pass_silently(repo: Path, store: Path) -> None:
    private = PrivateStore.for_suite(repo / "suite", "leaky", store)
    private.write(
        "mappings/old.json", json.dumps({"source_case": "x", "replacements": {"周承翰": "王大同"}})
    )
    (repo / "old.md").write_text("周承翰\n", encoding="utf-8")
    with (repo / "big.log").open("wb") as handle:
        handle.write(b"x" * (64 * 2**20 + 10))
    result = audit(repo / "suite", store)
    assert result.returncode == 1 and "old.md:1:1: private string (identifier #" in result.stdout
    assert "not audited: big.log (larger than 64 MB" in result.stdout


def test_the_audit_finds_amounts_dates_and_ids_in_any_notation(repo: Path, tmp_path: Path) -> None:
    """What the scanner did not name in the sensitive case is searched for all the same, as
    verify compares it: amounts and dates by value, ids by skeleton (issue 24, 3 and 2)."""
    base = tmp_path / "private2"
    private = PrivateStore.for_suite(repo / "suite", "leaky", base)
    chat = "老闆說二萬三千先付，尾款 2.300.000 đồng 三月十五日前，3月20号對帳，採購單 PO 77-4410"
    private.write(
        "cases/chat-001.yaml",
        f"id: chat-001\ninput:\n  log: '{chat}'\nexpect:\n  x: {{mode: exact, value: 1}}\n",
    )
    leaks = {
        "a.md": "deposit 23,000 first\n",
        "b.md": "balance 2,300,000 VND\n",
        "c.md": "due 3/15\n",
        "d.md": "對帳日 3月20号\n",
        "e.md": "see PO774410\n",
    }
    for name, text in leaks.items():
        (repo / name).write_text(text, encoding="utf-8")
    (repo / "clean.md").write_text("we paid 17,500 on 4/9, order PO 12-3456\n", encoding="utf-8")
    result = audit(repo / "suite", base)
    assert result.returncode == 1, result.stdout + result.stderr
    where = {line.split(":", 1)[0] for line in result.stdout.splitlines()}
    assert set(leaks) <= where, result.stdout
    assert "clean.md" not in where
    for original in ("23,000", "2.300.000", "77-4410", "二萬三千"):
        assert original not in result.stdout


@pytest.mark.parametrize(
    ("text", "leaked"),
    [
        ("tuần này bên em bận", False),  # week, not Tuấn
        ("lần sau nhắn riêng nhé", False),  # time, not Lan
        ("anh Tuấn gọi lại", True),
        ("anh Tuan goi lai", True),  # written without diacritics: the name
        ("chị Lan báo", True),
    ],
)
def test_a_common_vietnamese_word_is_not_flagged_as_the_name_it_looks_like(
    text: str, leaked: bool
) -> None:
    """The audit flagged an honest committed `tuần này` as the name Tuấn (issue 24, 4)."""
    from caseforge.audit.leaks import Matcher, PrivateData
    from caseforge.decoding import Text

    names = ["Nguyễn Minh Tuấn", "Trần Thị Lan", "Tuấn", "Lan"]
    matcher = Matcher(PrivateData([("person", name) for name in names], [], b"secret"))
    assert bool(matcher.find(Text("notes.md", text, "utf-8"))) is leaked


SOURCE = (
    "From: Đặng Quốc Vỹ <vy.dangquoc@mail.example.vn>\n"
    "To: Marcus Bell <mbell@tiller.example>, kendra.lowe@brightpath.example\n"
    "Lead: 后端 钟磊. Shoot starts Mon 20 July. Account 188-50-0336-4172, sđt 0977 485 120\n"
)


@pytest.mark.parametrize(
    ("text", "leaked"),
    [
        ("From: Đặng Quốc Vĩ", True),  # the other spelling of the given name
        ("To: Markus Belle", True),  # respelled
        ("后端 钟垒 负责联调", True),  # the same sound in another character
        ("write to kendra.lowe please", True),  # an e-mail user alone
        ("shoot 20/07/2026", True),  # a day named without a year, then with one
        ("account ending 4172", True),  # an account's last group alone
        ("số +84977485120", True),  # the phone with its country code
        ("To: Mark Twain; shoot 21/07/2026; account ending 4173", False),
    ],
)
def test_the_audit_finds_what_verify_finds_in_the_forms_of_the_second_corpus(
    text: str, leaked: bool
) -> None:
    from caseforge.audit.leaks import Matcher, PrivateData
    from caseforge.decoding import Text

    data = PrivateData(
        [("person", "Đặng Quốc Vỹ"), ("person", "Marcus Bell")], [SOURCE], b"secret", [None]
    )
    assert bool(Matcher(data).find(Text("notes.md", text, "utf-8"))) is leaked, text
