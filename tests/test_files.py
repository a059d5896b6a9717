"""Writing user files: all or none, the user's umask for new files, one line on failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from caseforge import files
from caseforge.errors import EnvError


def test_a_new_file_gets_the_umask_and_an_existing_one_keeps_its_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        files.write_atomic(tmp_path / "report.html", "<p>x</p>")
        assert (tmp_path / "report.html").stat().st_mode & 0o777 == 0o644
        (tmp_path / "private.json").write_text("{}")
        (tmp_path / "private.json").chmod(0o600)
        files.write_atomic(tmp_path / "private.json", "{}\n")
        assert (tmp_path / "private.json").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


def test_several_files_are_written_all_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("old a")
    b.write_text("old b")
    real = files._stage

    def stage(path: Path, text: str) -> str:
        if path == b:
            raise OSError(28, "No space left on device", str(b))
        return real(path, text)

    monkeypatch.setattr(files, "_stage", stage)
    with pytest.raises(EnvError, match=r"b\.yaml: cannot write: No space left on device"):
        files.write_all_atomic({a: "new a", b: "new b"})
    assert (a.read_text(), b.read_text()) == ("old a", "old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]  # no temp left
