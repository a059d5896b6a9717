"""Writing user files safely: a temporary file beside the target, then a rename."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_yaml(path: Path, data: object) -> None:
    """Write ``data`` as block-style YAML (Unicode kept, long lines unwrapped), atomically."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.allow_unicode = True
    yaml.width = 4096
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    write_atomic(path, buffer.getvalue())
