"""Verification of variants, the private store's refusal, and the leak audit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.audit.leaks import lint, private_string_leaks
from caseforge.cli import app
from caseforge.errors import CaseforgeError
from caseforge.synth.private import PrivateStore
from caseforge.synth.verify import check_leaks, check_redaction, check_structure

FLAGS = ["3:conflict", "3:mismatch", "4:unverifiable", "7:unverifiable"]
ORIGINAL = (
    "【需求】結帳頁支援優惠碼，提出：林佩萱，commit 3f9a2c1d4e5b 修過 ERR_PAY_4012。"
    "所以這次的碼務必設使用次數限制，不能再讓人鑽漏洞一直折。"
)
IDENTIFIERS = ["林佩萱", "3f9a2c1d4e5b", "ERR_PAY_4012"]
CLEAN = "【需求】課程上架流程，提出：周承翰，修正 ERR_CRS_7731 之後再上線。講師送審後需主管核准。"
runner = CliRunner()


def test_a_faithful_variant_passes_every_check() -> None:
    assert check_structure(
        FLAGS, ["8:conflict", "8:mismatch", "3:unverifiable", "11:unverifiable"], 12
    ).passed
    assert check_leaks(ORIGINAL, IDENTIFIERS, CLEAN).passed
    assert check_redaction(CLEAN).passed


@pytest.mark.parametrize(
    ("variant", "reason"),
    [
        (CLEAN + " 參考提交 3f9a2c1", "7+ characters of commit"),  # a short SHA leaks
        (CLEAN.replace("周承翰", "林 佩萱"), "appears with other separators"),  # a name, spaced
        (CLEAN.replace("ERR_CRS_7731", "err-pay-4012"), "appears with other separators"),
        (CLEAN + "這次的碼務必設使用次數限制", "CJK 8-gram"),  # a copied Chinese clause
    ],
)
def test_leaks_are_rejected_with_the_right_reason(variant: str, reason: str) -> None:
    result = check_leaks(ORIGINAL, IDENTIFIERS, variant)
    assert not result.passed and reason in result.detail


def test_copied_latin_clauses_are_caught() -> None:
    original = "Two customers press Book on seat C4 at the very same moment and both succeed"
    variant = "New card: two customers press book on seat C4 at the very same moment, sadly"
    result = check_leaks(original, [], variant)
    assert not result.passed and "word 8-gram" in result.detail


@pytest.mark.parametrize("mark", ["█████", "■■", "[REDACTED]", "***", "<PERSON>"])
def test_redaction_marks_are_rejected(mark: str) -> None:
    result = check_redaction(f"客戶 {mark} 反映結帳失敗")
    assert not result.passed and "redaction marks" in result.detail


def test_dropping_the_double_flag_is_rejected() -> None:
    dropped = ["8:conflict", "5:mismatch", "3:unverifiable", "11:unverifiable"]
    result = check_structure(FLAGS, dropped, 12)
    assert not result.passed and "multi-flagged items" in result.detail
    assert "4 flags became 3" in check_structure(FLAGS, FLAGS[:3], 12).detail
    assert (
        "lacks"
        in check_structure(
            FLAGS, ["13:conflict", "13:mismatch", "3:unverifiable", "11:unverifiable"], 12
        ).detail
    )


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_private_store_refuses_an_unignored_work_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    inside = PrivateStore("suite", repo / "private")
    with pytest.raises(CaseforgeError, match="inside the git work tree"):
        inside.write("glossaries/a.yaml", "person: [林佩萱]\n")
    assert not (repo / "private").exists()
    (repo / ".gitignore").write_text("private/\n")
    assert inside.write("glossaries/a.yaml", "person: [林佩萱]\n").is_file()  # ignored: fine
    outside = PrivateStore("suite", tmp_path / "elsewhere")
    secret = outside.secret()
    assert len(secret) == 32 and outside.secret() == secret
    assert (outside.root / "secret.key").stat().st_mode & 0o777 == 0o600


def test_audit_finds_private_strings_and_lints_without_the_store(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: leaky\n")
    (suite / "cases" / "a.yaml").write_text(
        "id: a\ninput: {ticket: '請聯絡 林佩萱 bob@acme-corp.com 或 ann@example.com'}\n"
        "expect: {x: {mode: exact, value: 1}}\n"
        "note: 'commit 3f9a2c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c ***'\n"
    )
    leaks = private_string_leaks(suite, {"林佩萱", "Contoso"})
    assert [(leak.line, leak.kind) for leak in leaks] == [(2, "private string")]
    kinds = sorted(leak.kind for leak in lint(suite))
    assert kinds == ["commit SHA", "e-mail domain", "redaction mark"]

    store = tmp_path / "private"
    (store / "leaky" / "glossaries").mkdir(parents=True)
    (store / "leaky" / "glossaries" / "a.yaml").write_text("person: [林佩萱]\n")
    with_store = runner.invoke(app, ["audit", str(suite), "--private", str(store)])
    assert with_store.exit_code == 1 and "private string" in with_store.output
    without = runner.invoke(app, ["audit", str(suite), "--private", str(tmp_path / "none")])
    assert without.exit_code == 1 and "e-mail domain: acme-corp.com" in without.output


def test_scan_cli_prints_classes_and_offsets(tmp_path: Path) -> None:
    ticket = tmp_path / "t.txt"
    ticket.write_text(
        "請看 commit 3f9a2c1，林雅婷 在 2024年3月5日 回報 ERR_PAY_4012。\n", encoding="utf-8"
    )
    glossary = tmp_path / "g.yaml"
    glossary.write_text("person: [林雅婷]\n", encoding="utf-8")
    result = runner.invoke(app, ["scan", str(ticket), "--glossary", str(glossary), "--json"])
    assert result.exit_code == 0, result.output
    import json

    spans = {s["class"]: (s["start"], s["end"], s["text"]) for s in json.loads(result.stdout)}
    text = ticket.read_text(encoding="utf-8")
    for cls in ("commit_sha", "person", "date", "error_code"):
        start, end, found = spans[cls]
        assert text[start:end] == found
    assert spans["person"][2] == "林雅婷" and spans["date"][2] == "2024年3月5日"
    bad = tmp_path / "bad.yaml"
    bad.write_text("person: [unclosed\n", encoding="utf-8")
    failed = runner.invoke(app, ["scan", str(ticket), "--glossary", str(bad)])
    assert failed.exit_code == 1
