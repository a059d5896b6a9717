"""What one bad thing does to the web app: a malformed draft, a malformed labels file, a
stopped run and a damaged run each show as an error row or note, and the page around it
still renders (never a 500); a run pruned while served is a 404 page at every address. And
/api/docs works offline, within the app's CSP."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, update
from typer.testing import CliRunner

from caseforge.cli import app as cli
from caseforge.serve import Catalog, create_app
from caseforge.store.db import RunStore
from caseforge.store.schema import results, runs
from tests.serve.conftest import Served


@pytest.fixture
def copied(world: Served, tmp_path: Path) -> tuple[TestClient, Served]:
    """The served suites and store, copied: these tests break them."""
    store = tmp_path / "store.db"
    shutil.copy(world.store.removeprefix("sqlite:///"), store)
    suites = {
        name: shutil.copytree(folder, tmp_path / name) for name, folder in world.suites.items()
    }
    # The runs name their suite folders: point them at the copies.
    url = f"sqlite:///{store}"
    opened = RunStore(url)
    with opened.engine.begin() as conn:
        for name, folder in world.suites.items():
            conn.execute(
                update(runs)
                .where(runs.c.suite_path == str(folder))
                .values(suite_path=str(suites[name]))
            )
    opened.close()
    catalog = Catalog.open(list(suites.values()), url, reviewer="example-reviewer")
    web = TestClient(create_app(catalog), base_url="http://127.0.0.1:8471")
    return web, Served("", url, suites, world.runs, world.artifacts)


def test_a_malformed_draft_is_an_error_row_and_the_review_screen_still_renders(
    copied: tuple[TestClient, Served],
) -> None:
    web, served = copied
    queue = served.suites["support-refund"] / "synth" / "queue.jsonl"
    lines = queue.read_text(encoding="utf-8").splitlines()
    lines[2] = '{"draft_id": "syn-broken", "text": 42'  # cut short: not JSON
    lines.append('{"draft_id": "syn-half"}')  # JSON, but not a draft
    queue.write_text("\n".join(lines) + "\n", encoding="utf-8")
    page = web.get("/suites/0/review", params={"show": "all"})  # decided ones too
    assert page.status_code == 200
    assert re.search(r"queue\.jsonl:3:\d+: invalid JSON", page.text)
    assert f"queue.jsonl:{len(lines)}: not a draft: no " in page.text
    assert page.text.count('class="draft ') == 11  # the other drafts, as usual
    api = web.get("/api/suites/0/review", params={"show": "all"}).json()
    assert [b["line"] for b in api["broken"]] == [3, len(lines)]
    assert len(api["drafts"]) == 11
    # A decision waits until the queue is fixed, and says why in one line.
    first = next(d["draft_id"] for d in api["drafts"] if d["status"] == "pending")
    token = web.cookies.get("caseforge_csrf") or ""
    refused = web.post(
        f"/api/suites/0/review/{first}",
        json={"action": "accept"},
        headers={"X-CSRF-Token": token, "Origin": "http://127.0.0.1:8471"},
    )
    assert refused.status_code == 400 and "queue.jsonl:3" in refused.json()["detail"]


def test_a_malformed_labels_file_is_an_error_row_and_the_label_screen_still_renders(
    copied: tuple[TestClient, Served],
) -> None:
    web, served = copied
    labels = served.suites["support-refund"] / "labels"
    broken = sorted(labels.glob("*.yaml"))[0]
    broken.write_text("case: [unclosed\n", encoding="utf-8")
    run = served.runs["v1"]
    page = web.get(f"/runs/{run}/label")
    assert page.status_code == 200
    assert 'id="label-problems"' in page.text and broken.name in page.text
    assert "output(s) left to label" in page.text and 'class="label"' in page.text
    queue = web.get(f"/api/runs/{run}/labels").json()
    assert len(queue["problems"]) == 1 and broken.name in queue["problems"][0]
    assert queue["next"] is not None


def test_a_malformed_labels_file_shows_on_calibration_with_no_figures_until_it_is_fixed(
    copied: tuple[TestClient, Served],
) -> None:
    web, served = copied
    ready = web.get("/api/suites/0/calibration").json()
    assert ready["state"] == "ready" and ready["overall"]["n"] > 0  # seen, and kept, before
    broken = sorted((served.suites["support-refund"] / "labels").glob("*.yaml"))[0]
    text = broken.read_text(encoding="utf-8")
    broken.write_text("case: [unclosed\n", encoding="utf-8")
    page = web.get("/suites/0/calibration")
    assert page.status_code == 200  # the screen, its header and links: not an error page
    assert 'id="labels-problems"' in page.text and broken.name in page.text
    assert "as `caseforge calibrate` refuses" in page.text.replace("&#96;", "`")
    for figure in ('id="agreement"', 'id="confusion"', 'id="per-fact"', 'id="disagreements"'):
        assert figure not in page.text  # nothing computed from the other files
    api = web.get("/api/suites/0/calibration").json()
    assert api["state"] == "labels_unreadable" and api["overall"] is None
    assert len(api["problems"]) == 1 and broken.name in api["problems"][0]
    refused = CliRunner().invoke(cli, ["calibrate", str(served.suites["support-refund"])])
    assert refused.exit_code != 0 and broken.name in refused.output  # as the CLI
    broken.write_text(text, encoding="utf-8")  # fixed: the figures are back
    assert web.get("/api/suites/0/calibration").json()["state"] == "ready"


def _stop(url: str, run_id: str, keep: int) -> int:
    """Make a finished run a stopped one with only its first ``keep`` case-trials stored."""
    store = RunStore(url)
    stored = [(r["case_id"], r["trial"]) for r in store.results(run_id)]
    with store.engine.begin() as conn:
        for case_id, trial in stored[keep:]:
            conn.execute(
                delete(results).where(
                    results.c.run_id == run_id,
                    results.c.case_id == case_id,
                    results.c.trial == trial,
                )
            )
    store.set_status(run_id, "stopped")  # which drops its digest
    store.close()
    return len(stored)


def test_a_stopped_run_says_so_and_links_only_to_what_it_stored(
    copied: tuple[TestClient, Served],
) -> None:
    web, served = copied
    run = served.runs["v1"]
    planned = _stop(served.store, run, keep=50)
    listing = web.get("/").text
    row = re.search(rf'<tr class="run stopped"[^>]*>.*?{run}.*?</tr>', listing, re.S)
    assert row and f"unfinished: {planned - 50} of {planned} not run" in row.group(0)
    page = web.get(f"/runs/{run}")
    assert page.status_code == 200 and 'id="unfinished"' in page.text and "STOPPED" in page.text
    for number in (1, 2):
        grid = web.get(f"/api/runs/{run}/grid", params={"page": number}).json()
        cells = [c for r in grid["rows"] for c in r["cells"]]
        assert grid["unfinished"]
        for r in grid["rows"]:
            assert r["stored"] == any(c["stored"] for c in r["cells"])
        html = web.get(f"/fragments/runs/{run}/grid", params={"page": number}).text
        links = set(re.findall(rf'href="(/runs/{run}/cases/[^"]+)"', html))
        assert len(links) >= sum(c["stored"] for c in cells)
        for link in links:  # every link of the grid leads to a page
            assert web.get(link).status_code == 200, link
        not_run = [c for c in cells if not c["stored"]]
        assert all(c["status"] == "not run" for c in not_run)
        assert html.count('<span class="cell not-run" title=') == len(not_run)
    assert sum(1 for _ in re.finditer("not-run", web.get(f"/runs/{run}").text)) > 0


def test_a_damaged_run_is_an_error_row_and_its_own_page_says_why(
    copied: tuple[TestClient, Served],
) -> None:
    web, served = copied
    run = served.runs["v2"]
    store = RunStore(served.store)
    with store.engine.begin() as conn:
        conn.execute(update(results).where(results.c.run_id == run).values(checks_json="{broken"))
    store.set_status(run, "stopped")  # its digest goes: the rows are read again
    store.close()
    listing = web.get("/")
    assert listing.status_code == 200
    assert re.search(rf"{run}.*?cannot be read: run {run}: its stored results", listing.text, re.S)
    assert served.runs["v1"] in listing.text  # the others as usual
    screen = web.get(f"/runs/{run}")
    assert screen.status_code == 422 and "its stored results cannot be read" in screen.text
    assert "Traceback" not in screen.text
    api = web.get(f"/api/runs/{run}")
    assert api.status_code == 422 and "cannot be read" in api.json()["detail"]


def test_api_docs_work_offline_within_the_csp(copied: tuple[TestClient, Served]) -> None:
    web, _ = copied
    docs = web.get("/api/docs")
    assert docs.status_code == 200
    assert "script-src 'self'" in docs.headers["content-security-policy"]
    sources = re.findall(r'(?:src|href)="([^"]+)"', docs.text)
    assert sources and all(s.startswith("/static/") or s == "data:," for s in sources), sources
    assert "<script>" not in docs.text.replace("<script src", "")  # no inline script
    for source in sources:  # nothing remote: the app's own files, and an empty icon
        if source != "data:,":
            assert web.get(source).status_code == 200, source


def test_a_run_pruned_while_served_is_a_404_page_at_every_address_never_a_500(
    copied: tuple[TestClient, Served],
) -> None:
    web, served = copied
    v1, v2 = served.runs["v1"], served.runs["v2"]
    case = "refund-yearly-023"
    pages = [
        f"/runs/{v1}", f"/runs/{v1}?show=failing", f"/runs/{v1}/cases/{case}",
        f"/runs/{v1}/cases/{case}/trials/1", f"/runs/{v1}/label", f"/fragments/runs/{v1}/grid",
        f"/fragments/runs/{v1}/live", f"/compare?a={v2}&b={v1}", f"/compare?a={v1}&b={v2}",
        f"/compare?b={v1}", f"/fragments/compare/pair?a={v2}&b={v1}&case={case}",
    ]  # fmt: skip
    api = [
        f"/api/runs/{v1}", f"/api/runs/{v1}/grid", f"/api/runs/{v1}/cases/{case}/trials/1",
        f"/api/compare?a={v2}&b={v1}", f"/api/compare?a={v1}&b={v2}", f"/api/runs/{v1}/labels",
    ]  # fmt: skip
    for url in pages + api:  # seen, and kept by the app, before the prune
        assert web.get(url).status_code == 200, url
    pruned = CliRunner().invoke(
        cli, ["store", "prune", "--older-than", "0", "--store", served.store]
    )
    assert pruned.exit_code == 0, pruned.output
    assert v1 in pruned.output and RunStore(served.store).has_run(v2)  # the baseline's run stays
    for url in pages:
        answer = web.get(url)
        assert answer.status_code == 404, (url, answer.status_code)
        text = answer.text.replace("&#39;", "'")
        assert "<h1>Not found</h1>" in text and f"no run {v1!r}" in text, url
    for url in api:
        answer = web.get(url)
        assert answer.status_code == 404, (url, answer.status_code)
        assert answer.json() == {"detail": f"no run {v1!r} in the stores served"}
    listing = web.get("/")
    assert listing.status_code == 200 and v1 not in listing.text and v2 in listing.text
