"""The docs site: it builds with --strict, asks no other host for anything, holds every
command, option and config key, documents every public function's parameters, and no
citation of a document the repository does not hold remains."""

from __future__ import annotations

import inspect
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import caseforge
from caseforge.reference import config_keys

REPO = Path(__file__).resolve().parents[2]


class _Loads(HTMLParser):
    """What a page loads: scripts, styles, fonts, images, frames (links to read are fine)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video") and values.get("src"):
            self.found.append(str(values["src"]))
        if tag == "link" and values.get("href"):
            rel = (values.get("rel") or "").lower()
            if any(kind in rel for kind in ("stylesheet", "preload", "icon", "prefetch", "font")):
                self.found.append(str(values["href"]))


def test_the_site_asks_no_other_host_for_anything(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 30
    for page in pages:
        loads = _Loads()
        loads.feed(page.read_text(encoding="utf-8"))
        remote = [url for url in loads.found if re.match(r"(https?:)?//", url)]
        assert not remote, f"{page.relative_to(site)} loads {remote}"
    for sheet in site.rglob("*.css"):
        urls = re.findall(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", sheet.read_text("utf-8"))
        assert not urls, f"{sheet.relative_to(site)} fetches {urls}"


def _sections(page: str) -> dict[str, str]:
    """The CLI page's sections by command (``run``, ``synth tuples``): heading to heading."""
    parts = re.split(r'(?=<h[23] id="caseforge-)', page)
    out = {}
    for part in parts[1:]:
        title = re.match(r'<h[23] id="caseforge-[^"]*">caseforge ([^<]+)', part)
        if title:
            out[title.group(1).strip()] = part
    return out


def test_every_command_option_and_config_key_is_on_the_site(site: Path) -> None:
    """Each option in its own command's section (a --json listed for one command does not
    stand for another's), each config key on the config page."""
    from caseforge.cli.root import COMMANDS

    sections = _sections((site / "reference" / "cli.html").read_text(encoding="utf-8"))
    for name, lazy in COMMANDS.items():
        command = lazy.load()
        subcommands = getattr(command, "commands", {})
        owners = [(name, command)] + [(f"{name} {sub}", c) for sub, c in subcommands.items()]
        for title, owner in owners:
            assert title in sections, f"caseforge {title} has no section"
            for param in owner.params:
                for option in param.opts:
                    if option.startswith("-"):
                        assert f"<code>{option}</code>" in sections[title], f"{title} {option}"
    config = (site / "reference" / "config.html").read_text(encoding="utf-8")
    for key in config_keys():
        assert f"<code>{key}</code>" in config, key


def test_every_public_function_documents_every_parameter() -> None:
    """Google-style: an ``Args:`` section naming each parameter (the API reference reads it)."""
    for name in caseforge.__all__:
        value = getattr(caseforge, name)
        if not inspect.isfunction(value):
            continue
        doc = inspect.getdoc(value) or ""
        parameters = [
            p.name if p.kind is not p.VAR_KEYWORD else f"**{p.name}"
            for p in inspect.signature(value).parameters.values()
        ]
        if not parameters:
            continue
        assert "Args:" in doc, f"caseforge.{name} has no Args section"
        args = doc.split("Args:", 1)[1].split("\n\n")[0]
        for parameter in parameters:
            assert re.search(rf"^\s+{re.escape(parameter)}\b", args, re.M), (
                f"caseforge.{name} does not document {parameter}"
            )


def test_every_public_name_is_on_the_api_page(site: Path) -> None:
    page = (site / "reference" / "api.html").read_text(encoding="utf-8")
    for name in caseforge.__all__:
        if name == "__version__":
            assert "caseforge.__version__" in page
            continue
        assert re.search(rf'id="caseforge\.[\w.]*\.{re.escape(name)}"', page), name


def test_no_citation_of_a_document_the_repository_does_not_hold() -> None:
    """The founding contract was cited by section ("DESIGN", a section sign, a number); the
    docs site is its replacement. The needle is built here, so this file does not hold it."""
    needle = "DESIGN " + chr(0xA7)
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in listed:
        path = REPO / name
        if path.suffix not in (".py", ".md", ".json", ".yaml", ".yml", ".toml", ".html", ".txt"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        assert needle not in text, name
