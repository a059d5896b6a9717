"""Writing user files safely: a temporary file beside the target, then a rename."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

from caseforge.errors import EnvError, UsageError


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so readers see the old file or the new one, never half."""
    write_all_atomic({path: text})


def write_all_atomic(texts: dict[Path, str]) -> None:
    """Write several files all or none: every new text is staged beside its file first, and
    only when all are staged are they moved into place. A new file gets the user's umask
    (reports and baselines are meant to be shared), an existing one keeps its mode. A
    folder that cannot be written is one line naming it (exit 5)."""
    for path in texts:
        if path.is_dir():
            raise EnvError(f"{path}: cannot write: it is a folder")
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in texts.items():
            staged.append((_stage(path, text), path))
        for tmp, path in staged:
            os.replace(tmp, path)
    except OSError as exc:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        where = exc.filename or next(iter(texts))
        raise EnvError(f"{where}: cannot write: {exc.strerror or exc}") from None


def _stage(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, file_mode(path))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def file_mode(path: Path) -> int:
    """The mode a file written in place of ``path`` gets: the existing file's, else what the
    user's umask gives a new file (a temporary file's 0600 would make it private)."""
    return path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def yaml_text(data: object) -> str:
    """``data`` as block-style YAML, Unicode kept and long lines unwrapped."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.allow_unicode = True
    yaml.width = 4096
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue()


def write_yaml(path: Path, data: object) -> None:
    """Write ``data`` as block-style YAML (Unicode kept, long lines unwrapped), atomically."""
    write_atomic(path, yaml_text(data))


def read_json_file(path: Path, what: str, missing_hint: str) -> object:
    """The JSON in ``path``, or one line: missing, or not JSON (truncated, not UTF-8): a
    usage error (2), the file given is not one caseforge can read, which says nothing of a
    regression; unreadable: an environment error (5)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise UsageError(f"{path}: {what} not found ({missing_hint})") from None
    except OSError as exc:
        raise EnvError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(
            f"{path}: the {what} is not JSON ({exc}): a truncated or damaged file? write it again"
        ) from None


def json_kind(value: object) -> str:
    """How a JSON value that should have been an object is named in a message."""
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def output_folder(path: Path | None, flag: str) -> None:
    """A folder the user named for files written after a long run: made now (and its
    writing tried), so a folder that cannot be written is said before any case-trial runs
    or any run is recorded. A path that is a file, or runs through one, is a usage error
    (2); a folder that cannot be made or written, an environment one (5)."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: is a file; name a folder for report.json")
    made = [p for p in (path, *path.parents) if not p.exists()]
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".caseforge-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except (FileExistsError, NotADirectoryError):
        raise UsageError(f"{flag} {path}: a file is in the way; name a folder") from None
    except OSError as exc:
        for folder in made:  # leave nothing behind: only the folders made here, if empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise EnvError(f"{flag} {path}: cannot write there: {exc.strerror or exc}") from None


def output_file(path: Path | None, flag: str) -> Path | None:
    """A file the user named to write: a folder there is a usage error, said before any work."""
    if path is not None and path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; name a file to write")
    return path
