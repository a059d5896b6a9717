"""The web app for a team's daily loop, in a real browser (Debian's Chromium): the keyboard,
links that keep a screen's state, compare's diff, the trends page, a phone's 390 px and an
accessibility check (axe-core, vendored in tests/serve/vendor) on every screen, at both
widths. Screenshots go to the test run's folder; `make screenshots` refreshes docs/."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from caseforge.compare.digest import save_digest
from caseforge.report.build import build_report
from caseforge.results import CheckResult, CheckStatus, TrialRecord, TrialStatus
from caseforge.serve import Catalog
from caseforge.store.db import RunStore, utcnow
from tests.serve.conftest import Served, start_server

AXE = Path(__file__).parent / "vendor" / "axe.min.js"


def shot(page: Any, served: Served, name: str, full: bool = True) -> None:
    page.screenshot(path=str(served.artifacts / f"{name}.png"), full_page=full)


def first_failing_trial(page: Any, served: Served) -> str:
    page.goto(served.url + f"/runs/{served.runs['v1']}?show=failing")
    return str(page.locator("#grid td.cells a.cell.fail").first.get_attribute("href"))


# -- the keyboard -----------------------------------------------------------------------


def test_j_k_and_enter_move_through_the_runs_list_and_the_grid(page: Any, served: Served) -> None:
    page.goto(served.url + "/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    current = page.locator("#runs-table tbody tr.current")
    expect(current).to_have_count(1)
    second = page.locator("#runs-table tbody tr").nth(1)
    assert "current" in (second.get_attribute("class") or "")
    page.keyboard.press("k")
    first = page.locator("#runs-table tbody tr").first
    expect(first).to_have_class(re.compile("current"))
    target = first.locator("a").first.get_attribute("href")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(re.escape(str(target)) + "$"))

    page.goto(served.url + f"/runs/{served.runs['v1']}")
    for _ in range(3):
        page.keyboard.press("j")
    row = page.locator("#grid tbody tr").nth(2)
    expect(row).to_have_class(re.compile("current"))
    case = row.locator("a").first.inner_text()
    shot(page, served, "keyboard-grid", full=False)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/cases/{case}$"))


def test_n_p_and_f_walk_the_trials_and_question_mark_lists_the_keys(
    page: Any, served: Served
) -> None:
    run = served.runs["v1"]
    page.goto(served.url + f"/runs/{run}")
    second = page.locator("#grid td.cells a.cell").nth(1).get_attribute("href")
    page.goto(served.url + str(second))
    start = page.url
    page.keyboard.press("n")
    page.wait_for_url(lambda url: url != start)
    after = page.url
    assert re.search(r"/cases/[^/]+/trials/\d+$", after)
    page.keyboard.press("p")
    page.wait_for_url(start)
    page.keyboard.press("f")
    page.wait_for_url(lambda url: url != start)
    expect(page.locator("h1 .status")).not_to_have_text("pass")
    page.keyboard.press("?")
    keys = page.locator("dialog#keys")
    expect(keys).to_be_visible()
    assert "next failing case-trial" in keys.inner_text()
    shot(page, served, "keys", full=False)
    page.keyboard.press("Escape")
    expect(keys).to_be_hidden()
    page.keyboard.press("u")
    page.wait_for_url(re.compile(rf"/runs/{run}$"))


def test_the_labeller_takes_the_terminals_keys(page: Any, served: Served) -> None:
    page.goto(served.url + f"/runs/{served.runs['v2']}/label")
    facts = page.locator("form.label tr[data-fact]")
    count = facts.count()
    assert count >= 1
    page.keyboard.press("c")
    expect(facts.nth(0).locator("input[value=conveyed]")).to_be_checked()
    if count > 1:
        page.keyboard.press("x")
        expect(facts.nth(1).locator("input[value=contradicted]")).to_be_checked()
    case = page.locator("form.label input[name=case_id]").get_attribute("value")
    page.keyboard.press("s")  # skip: the next output, not saved
    page.wait_for_url(re.compile(r"skip=1$"))
    assert page.locator("form.label input[name=case_id]").get_attribute("value") != case or (
        page.locator("form.label input[name=check]").count() == 1
    )


# -- links ------------------------------------------------------------------------------


def test_the_grids_filters_live_in_the_address_and_links_can_be_copied(
    page: Any, served: Served
) -> None:
    run = served.runs["v1"]
    page.goto(served.url + f"/runs/{run}")
    page.select_option("select[name=show]", "failing")
    page.wait_for_url(re.compile(r"\?show=failing$"))  # pushed as the grid changes
    expect(page.locator("#grid .cell.pass")).to_have_count(0)
    page.reload()  # the address alone gives the same grid
    expect(page.locator("select[name=show]")).to_have_value("failing")
    expect(page.locator("#grid .cell.pass")).to_have_count(0)
    page.locator(".pager a[rel=next]").first.click() if page.locator(
        ".pager a[rel=next]"
    ).count() else None
    href = str(page.locator("#grid td.cells a.cell").first.get_attribute("href"))
    page.goto(served.url + href)
    link = page.locator("[data-copy-source]").input_value()
    assert link == served.url + href  # the name and port this server was reached on
    page.click("[data-copy]")
    expect(page.locator("[data-copied]")).to_have_text(re.compile("copied|selected"))
    page.goto(served.url + f"/compare?a={served.runs['v2']}&b={run}")
    assert page.locator("[data-copy-source]").input_value() == page.url


def test_back_to_the_grid_gives_back_its_filters(page: Any, served: Served) -> None:
    run = served.runs["v1"]
    page.goto(served.url + f"/runs/{run}")
    page.select_option("select[name=show]", "failing")
    page.wait_for_url(re.compile(r"\?show=failing$"))
    page.locator("input[name=q]").press_sequentially("refund")  # as typed: keyup
    page.wait_for_url(re.compile(r"\?show=failing&q=refund$"))
    page.go_back()  # within the page: htmx's history
    page.wait_for_url(re.compile(r"\?show=failing$"))
    expect(page.locator("select[name=show]")).to_have_value("failing")
    expect(page.locator("input[name=q]")).to_have_value("")
    expect(page.locator("#grid .cell.pass")).to_have_count(0)
    page.go_back()
    page.wait_for_url(re.compile(rf"/runs/{run}$"))
    expect(page.locator("select[name=show]")).to_have_value("all")
    page.go_forward()
    page.wait_for_url(re.compile(r"\?show=failing$"))
    expect(page.locator("select[name=show]")).to_have_value("failing")
    page.locator("#grid td.cells a.cell").first.click()  # to a trial, and back
    page.wait_for_url(re.compile(r"/trials/\d+$"))
    page.go_back()
    page.wait_for_url(re.compile(r"\?show=failing$"))
    expect(page.locator("select[name=show]")).to_have_value("failing")
    expect(page.locator("#grid .cell.pass")).to_have_count(0)


def test_the_runs_lists_poll_keeps_the_row_j_and_k_chose(page: Any, served: Served) -> None:
    page.goto(served.url + "/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    second = page.locator("#runs-table tbody tr").nth(1)
    expect(second).to_have_class(re.compile("current"))
    chosen = second.get_attribute("data-row-id")
    page.evaluate("() => { document.querySelector('#runs-table').dataset.old = 'yes'; }")
    page.evaluate(  # what the poll does, now rather than in 10 s
        """() => new Promise(done => {
          document.addEventListener("htmx:afterSettle", () => done(), {once: true});
          htmx.ajax("GET", document.querySelector("#runs").getAttribute("hx-get"),
                    {target: "#runs", swap: "outerHTML"});
        })"""
    )
    expect(page.locator("#runs-table[data-old]")).to_have_count(0)  # a new table
    current = page.locator("#runs-table tbody tr.current")
    expect(current).to_have_count(1)
    assert current.get_attribute("data-row-id") == chosen
    expect(current.locator("a").first).to_be_focused()
    page.keyboard.press("j")  # and j goes on from there
    expect(page.locator("#runs-table tbody tr").nth(2)).to_have_class(re.compile("current"))


# -- compare that explains ------------------------------------------------------------------


def test_compare_shows_a_text_diff_and_each_checks_change(page: Any, served: Served) -> None:
    page.goto(served.url + f"/compare?b={served.runs['v1']}")  # A: the suite's baseline run
    expect(page.locator("select[name=a]")).to_have_value(served.runs["v2"])
    expect(page.locator("select[name=baseline]")).to_have_value("baseline.json")
    first = page.locator("details.pair").first
    changes = first.locator("ul.check-changes li")
    assert changes.count() >= 1
    assert re.search(
        r": (pass|fail|error|absent)[^→]*→ (pass|fail|error|absent)", changes.first.inner_text()
    )
    diff = first.locator("pre.textdiff")
    expect(diff).to_have_count(1)
    assert diff.locator("del, ins").count() >= 1
    second = page.locator("details.pair").nth(1)
    second.locator("summary").click()  # loaded when opened, with its changes and diff
    expect(second.locator("ul.check-changes li").first).to_be_visible()
    expect(second.locator("pre.textdiff")).to_have_count(1)
    shot(page, served, "compare-diff")


# -- trends -------------------------------------------------------------------------------


def _trend_store(root: Path) -> tuple[Path, str]:
    """A fictional suite with eight nightly runs of one configuration: pass rate, cost and
    latency drifting, a few cases flaky."""
    suite = root / "nightly"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: nightly\n", encoding="utf-8")
    url = f"sqlite:///{root / 'trends.db'}"
    store = RunStore(url)
    rng = random.Random(28)
    ids = [f"ticket-{n:02d}" for n in range(24)]
    odds = {cid: rng.choice([0.97, 0.97, 0.9, 0.6, 0.5]) for cid in ids}
    snapshot = {
        "input": {"ticket": "发票抬头写错了"},
        "expect": {"category": {"mode": "exact", "value": "billing"}},
    }
    for night in range(8):
        run_id = store.create_run(
            suite="nightly", suite_path=str(suite), agent="toy", config_name="nightly",
            trials=3, split="all", caseforge_version="test",
            options={"judge": {"model": "judge-mini", "prompt_version": "1", "prompt_hash": "x",
                               "cost_usd": 0.02 + 0.004 * night}},
        )  # fmt: skip
        store.save_cases(run_id, [(c, json.dumps({"id": c, **snapshot})) for c in ids])
        rows = []
        for cid in ids:
            for trial in (1, 2, 3):
                ok = rng.random() < odds[cid] + 0.01 * night
                check = CheckResult(
                    "category", "exact", CheckStatus.PASS if ok else CheckStatus.FAIL, "billing",
                    "billing" if ok else "refund",
                )  # fmt: skip
                record = TrialRecord(
                    case_id=cid, trial=trial, status=TrialStatus.PASS if ok else TrialStatus.FAIL,
                    checks=[check], latency_s=0.8 + rng.random() * (1.5 - 0.1 * night),
                    cost_usd=0.0012 + 0.0001 * night,
                )  # fmt: skip
                rows.append(record.to_row(run_id, utcnow(), json.dumps({"reply": "好的"})))
        store.write_results(rows)
        store.set_status(run_id, "finished")
        save_digest(store, build_report(store, run_id))
    store.close()
    return suite, url


@pytest.fixture(scope="module")
def nightly(world: Served, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    suite, url = _trend_store(tmp_path_factory.mktemp("trends"))
    address, server = start_server(Catalog.open([suite], url))
    yield Served(address, url, {"nightly": suite}, {}, world.artifacts)
    server.should_exit = True  # type: ignore[attr-defined]


def test_the_trends_page_plots_pass_rate_cost_and_latency_and_a_heat_map(
    page: Any, nightly: Served
) -> None:
    page.goto(nightly.url + "/suites/0")
    page.click("a:has-text('Trends')")
    page.wait_for_url(re.compile(r"/suites/0/trends$"))
    assert "8 finished run(s)" in page.inner_text("h1")
    expect(page.locator("#chart-pass-rate circle")).to_have_count(8)
    expect(page.locator("#chart-pass-rate polygon.band")).to_have_count(1)
    assert page.locator("#chart-cost rect.bar-agent").count() == 8
    assert page.locator("#chart-cost rect.bar-judge").count() == 8
    expect(page.locator("#chart-latency circle")).to_have_count(8)
    rows = page.locator("table.heat tbody tr")
    assert 1 <= rows.count() <= 20
    first = rows.first.locator("td.heat-cell a").first
    assert re.fullmatch(r"[PF]{3}", first.inner_text())
    assert page.locator("script[src^=http], link[href^=http]").count() == 0  # no CDN
    shot(page, nightly, "trends")
    first.click()  # a cell opens the case in that run
    page.wait_for_url(re.compile(r"/runs/[^/]+/cases/ticket-\d+$"))


# -- a phone ------------------------------------------------------------------------------


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], f"script errors on the page: {errors}"


def _sideways(page: Any) -> int:
    """How far the page itself scrolls sideways (tables scroll in their own boxes). Against
    the layout viewport's width (``clientWidth``): on a phone ``window.innerWidth`` grows to
    the content, so measured against it nothing ever overflows."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


def every_screen(served: Served) -> list[str]:
    """A path to each screen the app has, the error pages too."""
    v1, v2 = served.runs["v1"], served.runs["v2"]
    return [
        "/", "/?q=refund", f"/runs/{v1}", f"/runs/{v1}?show=failing",
        f"/runs/{v2}/cases/mt-ask-id-cancel-c023/trials/1",
        f"/runs/{v1}/cases/refund-yearly-023/trials/1", f"/runs/{v1}/cases/refund-yearly-023",
        f"/runs/{served.runs['langgraph']}", first_trial(served, "langgraph"),
        first_trial(served, "talk"), f"/runs/{served.runs['xss']}",
        f"/compare?a={v2}&b={v1}", f"/compare?b={v1}", "/compare",
        "/suites/0", "/suites/0?q=refund", "/suites/1", "/suites/2", "/suites/3",
        "/suites/0/review", "/suites/0/review?show=all", f"/runs/{v1}/label",
        f"/runs/{v2}/label", "/suites/0/calibration", "/suites/1/calibration",
        "/suites/0/trends", "/runs/20990101-000000-000000", "/no-such-page",
        f"/runs/{v1}?page=0", "/suites/99",
    ]  # fmt: skip


def first_trial(served: Served, run: str) -> str:
    return f"/runs/{served.runs[run]}/cases/{_first_case(served, run)}/trials/1"


def _first_case(served: Served, run: str) -> str:
    from caseforge.store.db import RunStore

    store = RunStore(served.store)
    try:
        return str(next(iter(store.results(served.runs[run])))["case_id"])
    finally:
        store.close()


def test_the_sideways_measure_sees_a_page_wider_than_the_phone(phone: Any, served: Served) -> None:
    phone.goto(served.url + "/")
    viewport = phone.locator("meta[name=viewport]").get_attribute("content") or ""
    assert "width=device-width" in viewport
    assert _sideways(phone) <= 0
    phone.evaluate(
        "() => { const d = document.createElement('div'); d.style.width = '900px';"
        " d.textContent = 'wide'; document.querySelector('main').append(d); }"
    )
    assert _sideways(phone) > 400  # what the old measure (innerWidth) reported as 0


def test_every_screen_fits_a_phone_and_text_wraps_by_word(
    phone: Any, served: Served, nightly: Served
) -> None:
    v1, v2 = served.runs["v1"], served.runs["v2"]
    trial = f"/runs/{v2}/cases/mt-ask-id-cancel-c023/trials/1"
    wide: dict[str, int] = {}
    for path in every_screen(served):
        phone.goto(served.url + path)
        if _sideways(phone) > 0:
            wide[path] = _sideways(phone)
    phone.goto(nightly.url + "/suites/0/trends")
    if _sideways(phone) > 0:
        wide["trends"] = _sideways(phone)
    assert wide == {}, f"screens that scroll sideways at 390 px (by px): {wide}"
    shot(phone, served, "phone-trends", full=False)

    phone.goto(served.url + trial)
    # The checks table stacks: one card per check, each value under its name.
    cell = phone.locator("table.checks tbody td").first
    assert cell.evaluate("e => getComputedStyle(e).display") == "block"
    assert cell.evaluate("e => getComputedStyle(e, '::before').content") == '"check"'
    # Chinese wraps across the width, not a character a line.
    reply = phone.locator("ol.transcript pre.reply").nth(1)
    width = reply.evaluate("e => e.getBoundingClientRect().width")
    assert width > 200, width
    lines = reply.evaluate(
        "e => Math.round(e.getBoundingClientRect().height"
        " / parseFloat(getComputedStyle(e).lineHeight))"
    )
    characters = len(reply.inner_text())
    assert lines * 8 < characters, (lines, characters)  # many characters to a line
    shot(phone, served, "phone-trial", full=False)
    phone.locator("#conversation").scroll_into_view_if_needed()
    shot(phone, served, "phone-trial-conversation", full=False)
    phone.goto(served.url + f"/runs/{v1}")
    box = phone.locator("#grid .scroll")
    assert box.evaluate("e => getComputedStyle(e).overflowX") == "auto"
    phone.locator("#grid-title").evaluate("e => e.scrollIntoView()")
    shot(phone, served, "phone-run", full=False)
    phone.goto(served.url + "/")
    shot(phone, served, "phone-runs", full=False)
    phone.goto(served.url + f"/compare?a={v2}&b={v1}")
    shot(phone, served, "phone-compare", full=False)
    phone.goto(served.url + "/suites/0")
    shot(phone, served, "phone-suite", full=False)
    phone.goto(served.url + f"/runs/{v1}/label")
    shot(phone, served, "phone-label", full=False)
    phone.goto(served.url + "/suites/0/review")
    shot(phone, served, "phone-review", full=False)
    phone.goto(served.url + "/suites/0/calibration")
    # The disagreements stack too: each under its column's name.
    cell = phone.locator("table#disagreements tbody td").first
    assert cell.evaluate("e => getComputedStyle(e, '::before').content") == '"case"'
    shot(phone, served, "phone-calibration", full=False)


# -- accessibility --------------------------------------------------------------------------


@pytest.fixture
def audited(browser: Any) -> Iterator[Any]:
    """A page that lets the test inject axe (its content-security policy is bypassed for
    that script only; the app's own pages are as served)."""
    context = browser.new_context(viewport={"width": 1360, "height": 900}, bypass_csp=True)
    page = context.new_page()
    yield page
    context.close()


def _axe(page: Any) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = page.evaluate(
        """async () => {
          const result = await axe.run(document, {resultTypes: ["violations"]});
          return result.violations.map(v => ({id: v.id, impact: v.impact,
            nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + ": " + n.failureSummary)}));
        }"""
    )
    return found


def test_every_screen_passes_axe_on_a_desktop_and_a_phone(
    audited: Any, served: Served, nightly: Served
) -> None:
    paths = [served.url + p for p in every_screen(served)]
    paths += [served.url + first_failing_trial(audited, served), nightly.url + "/suites/0/trends"]
    found: dict[str, list[dict[str, Any]]] = {}
    for width, height in ((1360, 900), (390, 844)):
        audited.set_viewport_size({"width": width, "height": height})
        for path in paths:
            audited.goto(path)
            if violations := _axe(audited):
                found[f"{width}px {path}"] = violations
    assert found == {}, json.dumps(found, indent=1)
    # A ✗ names its check, in words a screen reader reads.
    audited.goto(served.url + f"/runs/{served.runs['v1']}?show=failing")
    label = audited.locator("#grid a.cell.fail").first.get_attribute("aria-label") or ""
    assert re.search(r"trial \d+: fail — \S+", label), label


def test_focus_is_visible(page: Any, served: Served) -> None:
    page.goto(served.url + f"/runs/{served.runs['v1']}")
    page.keyboard.press("Tab")  # the skip link comes first
    skip = page.locator("a.skip")
    expect(skip).to_be_focused()
    assert skip.evaluate("e => e.getBoundingClientRect().left") >= 0  # shown when focused
    link = page.locator("#grid td a").first
    link.focus()
    outline = link.evaluate(
        "e => getComputedStyle(e).outlineStyle + ' ' + getComputedStyle(e).outlineWidth"
    )
    assert outline.startswith("solid") and not outline.endswith(" 0px"), outline
    shot(page, served, "focus", full=False)


def test_api_docs_render_offline_within_the_csp(page: Any, served: Served) -> None:
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if m.type == "error" else None)
    remote: list[str] = []
    page.on("request", lambda r: remote.append(r.url) if not r.url.startswith(served.url) else None)
    page.goto(served.url + "/api/docs")
    expect(page.locator(".opblock").first).to_be_visible(timeout=60_000)
    assert page.locator(".opblock").count() >= 11  # every endpoint of the spec
    assert refused == [] and remote == []  # nothing blocked by the CSP, nothing fetched elsewhere
    shot(page, served, "api-docs", full=False)
