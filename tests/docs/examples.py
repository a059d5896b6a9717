"""Reading the docs site's code blocks, and running them as a reader would.

The conventions a page follows (CONTRIBUTING.md says them too):

- A fenced block whose line before is ``<!-- not-run: REASON -->`` is not run (a reason is
  required: "needs a model", "an excerpt").
- ``console``: a session. A line starting ``$ `` is a command; the lines after it, up to
  the next command, are its expected output, compared after :func:`normalise`; a line
  ``...`` in it stands for any number of lines. A command whose line ends ``# exit: N``
  must exit N; any other must exit 0.
- ``sh`` / ``bash``: a script, run with ``bash -e``; its output is not compared.
- ``python``: run in a process of its own; it must exit 0.
- ``yaml``: a case (top-level ``id`` and ``expect``) or a config (``name`` and other keys of
  ``caseforge.yaml``) is validated; ``<!-- case -->`` or ``<!-- config -->`` before it says
  which when that cannot be told.
- Other blocks (``json``, ``text``…) are shown, not run.

The blocks of one page run in order in one workspace: a copy of the repository's
``examples/`` under ``examples/``, in a git repository with one commit, ``caseforge`` on the
``PATH``, no store or model configured. So a tutorial's steps build on each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```\s*$", re.S | re.M
)
MARKER = re.compile(r"<!--\s*(not-run|case|config|exit)\s*:?\s*(.*?)\s*-->\s*$")
RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")
DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")
MONEY = re.compile(r"\$\d[\d,]*(?:\.\d+)?")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
ETA = re.compile(r"ETA \S+")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int
    lang: str
    body: str
    marker: str | None = None  # not-run, case, config
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, with the marker on the line before it."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        indent = len(match.group("indent"))
        body = "\n".join(row[indent:] for row in match.group("body").splitlines())
        found.append(
            Block(
                page,
                line,
                match.group("lang").lower(),
                body,
                marker.group(1) if marker else None,
                marker.group(2) if marker else "",
            )
        )
    return found


@dataclass(frozen=True)
class Command:
    """One ``$ `` line of a console block, what it should print, and its exit code."""

    line: str
    expected: list[str]
    exit_code: int = 0


def session(block: Block) -> list[Command]:
    """The commands of a console block, each with its expected output."""
    commands: list[Command] = []
    for row in block.body.splitlines():
        if row.startswith("$ "):
            command, code = row[2:], 0
            exit_mark = re.search(r"\s+# exit: (\d+)\s*$", command)
            if exit_mark:
                command, code = command[: exit_mark.start()], int(exit_mark.group(1))
            commands.append(Command(command, [], code))
        elif commands:
            commands[-1].expected.append(row)
    return commands


def normalise(text: str, workspace: Path) -> list[str]:
    """Output as compared: run ids, durations, money, ETAs and the workspace's path written
    the same way every time, colours and trailing spaces gone, blank lines dropped."""
    text = ANSI.sub("", text).replace(str(workspace) + "/", "").replace(str(workspace), ".")
    text = RUN_ID.sub("RUN_ID", text)
    text = ETA.sub("ETA", text)
    text = DURATION.sub("DURATION", text)
    text = MONEY.sub("$X", text)
    return [row.rstrip() for row in text.splitlines() if row.strip()]


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is ``expected``, a ``...`` line standing for any lines."""
    if not expected:
        return not actual
    head, *rest = expected
    if head.strip() == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and actual[0] == head and matches(rest, actual[1:])
