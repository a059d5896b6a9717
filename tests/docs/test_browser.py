"""The docs site as a reader sees it, in Chromium: the home page, a how-to and the CLI
reference load with no script error and no request to another host, navigation and search
work, and CJK text is drawn with a CJK font, not boxes.

Screenshots go to the test's temporary folder; ``make screenshots`` (CASEFORGE_SCREENSHOTS)
writes them to docs/screenshots/ instead."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")


class _SiteHandler(SimpleHTTPRequestHandler):
    """Files of the built site, for its own Host name only (no DNS rebinding)."""

    host = ""

    def do_GET(self) -> None:
        if self.headers.get("Host") != self.host:
            self.send_error(421, "wrong host")
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def url(site: Path) -> Iterator[str]:
    handler = partial(_SiteHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    _SiteHandler.host = f"127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://{_SiteHandler.host}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("Debian's chromium is not installed, and CI=true (.ci/run installs it)")
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    elsewhere: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda r: None if r.url.startswith(url) else elsewhere.append(r.url))
    yield page
    context.close()
    assert errors == [], f"script errors on the page: {errors}"
    assert [u for u in elsewhere if not u.startswith(("data:", "blob:"))] == []


def _shot(page: Any, name: str, tmp_path: Path) -> Path:
    folder = Path(os.environ.get("CASEFORGE_SCREENSHOTS") or tmp_path)
    path = folder / f"site-{name}.png"
    page.screenshot(path=str(path), full_page=False, animations="disabled")
    return path


def _fonts(page: Any, selector: str) -> dict[str, int]:
    """The fonts Chromium drew the element's text with, and how many glyphs each drew."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    assert node, selector
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    return {font["familyName"]: int(font["glyphCount"]) for font in fonts}


def _assert_drawn_in_cjk(page: Any, text: str) -> None:
    """The innermost element holding ``text`` is visible and drawn with a CJK font."""
    span = page.locator("code span, code", has_text=text).last
    span.scroll_into_view_if_needed()
    assert span.is_visible(), text
    span.evaluate("el => el.setAttribute('data-cjk', '1')")
    fonts = _fonts(page, "[data-cjk='1']")
    cjk = {family: glyphs for family, glyphs in fonts.items() if "CJK" in family}
    assert cjk and sum(cjk.values()) >= len(text), f"{text!r} was drawn with {fonts}"
    span.evaluate("el => el.removeAttribute('data-cjk')")


def test_the_home_page_shows_a_case_in_chinese_drawn_with_a_cjk_font(
    page: Any, url: str, tmp_path: Path
) -> None:
    page.goto(f"{url}/index.html", wait_until="networkidle")
    assert page.locator(".md-content h1").first.inner_text().rstrip("¶").strip() == "caseforge"
    _assert_drawn_in_cjk(page, "我们年付的")
    page.locator("h2", has_text="What a case looks like").evaluate("el => el.scrollIntoView()")
    assert _shot(page, "home", tmp_path).stat().st_size > 10_000


def test_a_how_to_is_reached_from_the_navigation_and_its_glossary_is_drawn_in_cjk(
    page: Any, url: str, tmp_path: Path
) -> None:
    page.goto(f"{url}/index.html", wait_until="networkidle")
    page.locator("nav a", has_text="A sensitive ticket into a case").first.click()
    page.wait_for_url("**/how-to/sensitive-ticket.html")
    heading = page.locator(".md-content h1").first.inner_text().rstrip("¶").strip()
    assert heading == "A sensitive ticket into a case"
    assert page.locator(".highlight").count() >= 5
    _assert_drawn_in_cjk(page, "林佩萱")
    page.locator("h2", has_text="Write the glossary").evaluate("el => el.scrollIntoView()")
    assert _shot(page, "how-to", tmp_path).stat().st_size > 10_000


def test_the_cli_reference_lists_the_commands_and_search_finds_an_option(
    page: Any, url: str, tmp_path: Path
) -> None:
    page.goto(f"{url}/reference/cli.html", wait_until="networkidle")
    assert page.locator("h2", has_text="caseforge run").count() >= 1
    assert _shot(page, "cli", tmp_path).stat().st_size > 10_000
    # search runs offline (lunr in a worker from the site itself)
    page.locator("label.md-search__icon, .md-search__input").first.click()
    page.locator("input.md-search__input").press_sequentially("error rate", delay=20)
    # the results are drawn again on every key: wait for the list the whole query gives, read
    # in one go (reading link by link raced a redraw and waited for a link that had gone)
    page.wait_for_function(
        """() => [...document.querySelectorAll('.md-search-result__item a')]
                 .some(a => (a.getAttribute('href') || '').includes('reference/'))""",
        timeout=60_000,
    )
    links = page.locator(".md-search-result__item a").evaluate_all(
        "els => els.map(a => a.getAttribute('href') || '')"
    )
    assert any("reference/" in link for link in links), links
