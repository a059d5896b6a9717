"""MkDocs hook: the reference pages' generated parts, from the code.

A page that says ``<!-- generated: NAME -->`` on a line of its own gets, in its place, what
``caseforge.reference.GENERATORS[NAME]`` returns (every CLI option, every config key, the
check modes, the exit codes, the fields of the case file, the report and the agent
protocol). Nothing generated is committed, so it cannot drift from the code.
"""

from __future__ import annotations

import re
from typing import Any

from caseforge.reference import GENERATORS

MARK = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)


def on_startup(command: str, dirty: bool) -> None:
    """The search plugin segments Chinese with jieba when it is installed (the privacy
    extra): better search, but jieba announces its dictionary on stderr. Quiet it."""
    try:
        import jieba
    except ImportError:
        return
    jieba.setLogLevel(60)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{page.file.src_path}: no generator named {name!r}")
        return GENERATORS[name]()

    return MARK.sub(generated, markdown)
