"""``caseforge scan``: classes and offsets, a case field by field, and every kind of bad file
as a one-line error or a decoded read, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.cli import app

runner = CliRunner()
TICKET = "請看 commit 3f9a2c1，林雅婷 在 2024年3月5日 回報 ERR_PAY_4012，電話 0912-345-678。\n"


def scan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "caseforge", "scan", *args], capture_output=True, text=True
    )


def test_prints_classes_and_offsets(tmp_path: Path) -> None:
    ticket = tmp_path / "t.txt"
    ticket.write_text(TICKET, encoding="utf-8")
    glossary = tmp_path / "g.yaml"
    glossary.write_text("person: [林雅婷]\n", encoding="utf-8")
    result = runner.invoke(app, ["scan", str(ticket), "--glossary", str(glossary), "--json"])
    assert result.exit_code == 0, result.output
    spans = {s["class"]: (s["start"], s["end"], s["text"]) for s in json.loads(result.stdout)}
    for cls in ("commit_sha", "person", "date", "error_code", "phone"):
        start, end, found = spans[cls]
        assert TICKET[start:end] == found
    assert spans["person"][2] == "林雅婷" and spans["date"][2] == "2024年3月5日"
    bad = tmp_path / "bad.yaml"
    bad.write_text("person: [unclosed\n", encoding="utf-8")
    failed = runner.invoke(app, ["scan", str(ticket), "--glossary", str(bad)])
    assert failed.exit_code == 1


def test_a_case_is_scanned_field_by_field_with_escapes_decoded(tmp_path: Path) -> None:
    case = tmp_path / "case.yaml"
    case.write_text(
        'id: c1\ninput:\n  ticket: "\\u8acb\\u806f\\u7d61 0912-345-678"\n'
        "  email: ann@acme-corp.com\n"
        "expect: {x: {mode: exact, value: 1}}\n",
        encoding="utf-8",
    )
    result = scan(str(case), "--json")
    assert result.returncode == 0, result.stderr
    found = {(s["field"], s["class"], s["text"]) for s in json.loads(result.stdout)}
    assert ("input.ticket", "phone", "0912-345-678") in found
    assert ("input.email", "email", "ann@acme-corp.com") in found


@pytest.mark.parametrize(
    ("name", "data", "expect"),
    [
        ("big5.txt", TICKET.encode("big5"), "(read as big5)"),
        ("gb.txt", TICKET.encode("gb18030"), "0912-345-678"),
        ("wide.txt", TICKET.encode("utf-16"), "(read as utf-16/32)"),
    ],
)
def test_other_encodings_are_decoded(tmp_path: Path, name: str, data: bytes, expect: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    result = scan(str(path))
    assert result.returncode == 0, result.stderr
    assert expect in result.stdout
    assert any(line.split()[1:] == ["phone", "0912-345-678"] for line in result.stdout.splitlines())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64)), "not a text file (PNG image)"),
        (lambda p: p.write_bytes(bytes(range(256)) * 4), "not a text file (binary content)"),
        (lambda p: None, "file not found"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, make: object, message: str) -> None:
    path = tmp_path / "input"
    make(path)  # type: ignore[operator]
    result = scan(str(path))
    assert result.returncode == 1
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_text_with_a_few_nul_bytes_is_scanned(tmp_path: Path) -> None:
    """A UTF-8 log with two NUL bytes was refused as binary, so never scanned (issue 24, 9)."""
    path = tmp_path / "cut.log"
    path.write_bytes("客服回報：電話 0912-345-678\x00\x00 已回撥".encode())
    result = scan(str(path))
    assert result.returncode == 0, result.stderr
    assert any(line.split()[1:] == ["phone", "0912-345-678"] for line in result.stdout.splitlines())


def test_a_text_file_is_scanned_as_it_is_read_with_the_same_spans(tmp_path: Path) -> None:
    """A text file streams through the scanner block by block (issue 24, 8): the spans and
    their offsets are those of scanning the whole text at once."""
    from caseforge.privacy.identifiers import IdentifierDetector
    from caseforge.privacy.scan import BLOCK, text_blocks

    line = "客服回報：電話 0912-345-678，信箱 ann@acme-corp.com，單號 ORD-20261203 已退款。\n"
    lines = 3 * BLOCK // len(line.encode()) + 1  # more than three blocks
    text = line * lines
    path = tmp_path / "dump.txt"
    path.write_text(text, encoding="utf-8")
    blocks = text_blocks(path)
    assert blocks is not None
    streamed = [(s.start, s.end, s.cls) for s in IdentifierDetector().scan_stream(blocks)]
    whole = [(s.start, s.end, s.cls) for s in IdentifierDetector().scan(text)]
    # a phone, an e-mail and an order number (a reference: named by 單號) a line
    assert streamed == whole and len(whole) == 3 * lines
    result = scan(str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert [(s["start"], s["end"], s["class"]) for s in json.loads(result.stdout)] == whole


def test_a_file_unreadable_past_its_first_block_is_one_line(tmp_path: Path) -> None:
    from caseforge.errors import EnvError
    from caseforge.privacy.scan import text_blocks

    path = tmp_path / "gone.txt"
    path.write_text("電話 0912-345-678\n", encoding="utf-8")
    blocks = text_blocks(path)
    assert blocks is not None
    path.unlink()  # removed between the look at its head and the read
    with pytest.raises(EnvError, match=r"gone\.txt: cannot read"):
        list(blocks)
