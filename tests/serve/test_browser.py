"""The web app in a real browser (Debian's Chromium): what a person does on each screen.
Screenshots go to the test run's temporary folder; `make screenshots` refreshes docs/."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from caseforge.case.load import load_suite
from caseforge.synth.writer import load_queue
from tests.serve.conftest import Served


def shot(page: Any, served: Served, name: str) -> None:
    page.screenshot(path=str(served.artifacts / f"{name}.png"), full_page=True)


def test_the_runs_list_shows_every_run_with_its_pass_rate(page: Any, served: Served) -> None:
    page.goto(served.url + "/")
    rows = page.locator("#runs-table tbody tr")
    assert rows.count() == 5  # support-refund v1 and v2, xss, talk, langgraph-orders
    v1 = page.locator("tr", has=page.locator(f"a[href='/runs/{served.runs['v1']}']"))
    assert "support-refund" in v1.inner_text() and "v1" in v1.inner_text()
    assert re.search(r"\d+\.\d%", v1.inner_text())
    shot(page, served, "runs")
    page.fill("#runs-filter", "v2")
    page.press("#runs-filter", "Enter")
    page.wait_for_url(re.compile(r"[?&]q=v2"))  # the filter is in the address, to share
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    page.goto(served.url + "/?q=v2")  # and the address alone gives the same list
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    assert served.runs["v2"] in page.inner_text("#runs-table")


def test_drill_down_from_a_run_to_its_failing_check(page: Any, served: Served) -> None:
    page.goto(served.url + f"/runs/{served.runs['v1']}")
    assert "Most failing checks" in page.inner_text("main")
    summary = page.inner_text("table.kv")
    assert "86 × 1 = 86" in summary and "stored" not in summary  # the whole run, finished
    page.select_option("select[name=show]", "failing")
    expect(page.locator("#grid .cell.pass")).to_have_count(0)
    shot(page, served, "run")
    page.locator("#grid .cell.fail").first.click()
    page.wait_for_url(re.compile(r"/cases/.+/trials/1$"))
    failing = page.locator("table.checks tr.fail").first
    assert failing.count() == 1
    assert failing.locator("td").nth(4).inner_text().strip(), "the failing check says why"
    assert page.locator("pre.source .line").count() > 5, "the case file is shown"
    shot(page, served, "trial")


def test_compare_v2_with_v1_finds_the_newly_failing_cases(page: Any, served: Served) -> None:
    a, b = served.runs["v2"], served.runs["v1"]
    page.goto(served.url + "/compare")
    page.select_option("select[name=a]", a)
    page.select_option("select[name=b]", b)
    page.select_option("select[name=baseline]", "baseline.json")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/compare\?a="))
    heading = page.locator("h2", has_text="Newly failing").inner_text()
    assert int(re.search(r"\((\d+)\)", heading).group(1)) > 0
    assert "significant" in page.inner_text("table.kv")
    assert "gate: regression" in page.inner_text("main")
    first = page.locator("details.pair").first
    assert "trial 1" in first.inner_text()  # the open pair came with its trials
    second = page.locator("details.pair").nth(1)
    assert "loading the trials" in (second.text_content() or "")
    second.locator("summary").click()  # the others load when opened
    expect(second.locator(".side-by-side a", has_text="trial 1")).to_have_count(2)
    case_id = second.locator("summary .mono").inner_text()
    link = second.locator(".side-by-side a").first.get_attribute("href")
    assert link == f"/runs/{a}/cases/{case_id}/trials/1"
    shot(page, served, "compare")


def test_markup_in_a_ticket_is_shown_as_text_and_never_runs(page: Any, served: Served) -> None:
    page.goto(served.url + f"/runs/{served.runs['xss']}/cases/order-status")
    assert "<script>window.__pwned = 1</script>" in page.inner_text("main")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img").count() == 0
    shot(page, served, "xss")


def test_a_traversal_id_in_the_url_is_refused(page: Any, served: Served) -> None:
    run = served.runs["v1"]
    for path, says in [
        (f"/runs/{run}/cases/..%2F..%2Fcaseforge.yaml", "not a case id"),
        ("/runs/..%2F..%2Fetc%2Fpasswd", "not a run id"),
        ("/compare?a=x&b=y&baseline=..%2F..%2Fetc%2Fpasswd", "not a run id"),
        (f"/fragments/compare/pair?a={run}&b={run}&case=..%2F..%2Fx", "not a case id"),
    ]:
        response = page.goto(served.url + path)
        assert response.status in (400, 404), path
        assert says in page.inner_text("main") or page.inner_text("main").startswith("Not found")


def test_label_a_fact_in_the_browser_writes_the_suites_labels_file(
    page: Any, served: Served
) -> None:
    run = served.runs["v1"]
    labels = served.suites["support-refund"] / "labels"
    before = {p.name: p.read_text() for p in labels.glob("*.yaml")}
    page.goto(served.url + f"/runs/{run}/label")
    left = int(re.search(r"(\d+) output", page.inner_text("#remaining")).group(1))
    assert left > 0
    case_id = page.locator("form.label input[name=case_id]").get_attribute("value")
    page.locator("form.label input[name='verdict-0'][value=conveyed]").check()
    shot(page, served, "label")
    page.click("form.label button[type=submit]")
    expect(page.locator("#saved")).to_contain_text(f"labels/{case_id}.yaml")
    assert f"{left - 1} output(s) left" in page.inner_text("#remaining")
    written = (labels / f"{case_id}.yaml").read_text()
    assert written != before.get(f"{case_id}.yaml") and "conveyed" in written


def test_the_suite_screen_shows_cases_with_their_expectations(page: Any, served: Served) -> None:
    page.goto(served.url + "/")
    page.click("header nav a:has-text('support-refund')")
    page.wait_for_url(re.compile(r"/suites/\d+$"))
    cases = served.suites["support-refund"] / "cases"
    assert page.locator("#cases-table tbody tr").count() == len(list(cases.glob("*.yaml")))
    # Validated in the background; the page polls its progress and reloads when it is done.
    expect(page.locator("#validation .status.pass")).to_have_text("valid", timeout=120_000)
    page.fill("#cases-filter", "refund-yearly-023")
    page.press("#cases-filter", "Enter")
    page.wait_for_url(re.compile(r"q=refund-yearly-023"))
    row = page.locator("#cases-table tbody tr")
    expect(row).to_have_count(1)
    assert "6578" in row.inner_text()  # the oracle-computed refund
    shot(page, served, "suite")


def test_review_accept_one_draft_reject_another_and_edit_a_third(page: Any, served: Served) -> None:
    suite = served.suites["support-refund"]
    page.goto(served.url + "/")
    page.click("header nav a:has-text('support-refund')")
    page.click("a:has-text('Review queue')")
    page.wait_for_url(re.compile(r"/suites/\d+/review$"))
    pending = len([d for d in load_queue(suite) if d.status == "pending"])
    expect(page.locator("#review-counts [data-count=pending]")).to_have_text(f"{pending} pending")
    near = page.locator("article.draft", has=page.locator(".neighbour"))
    assert "syn-export-error-038" in near.first.inner_text()  # with the neighbour's own text
    assert "ERR_EXPORT_TIMEOUT" in near.first.locator(".side-by-side pre").nth(1).inner_text()
    assert "computed by refund_policy(scenario=cancel)" in page.inner_text("main")
    shot(page, served, "review")

    drafts = page.locator("article.draft.pending")
    first = drafts.nth(0).get_attribute("id").removeprefix("draft-")
    second = drafts.nth(1).get_attribute("id").removeprefix("draft-")
    third = drafts.nth(2).get_attribute("id").removeprefix("draft-")
    page.locator(f"#draft-{first} button.accept").click()
    expect(page.locator(f"#draft-{first} .written")).to_contain_text("cases/syn-")
    written = page.locator(f"#draft-{first} .written code").inner_text()

    card = page.locator(f"#draft-{second}")
    card.locator("details.reject summary").click()
    card.locator("input[name=reason]").fill("does not fit its tuple")
    card.locator("details.reject button").click()
    expect(page.locator(f"#draft-{second} .status")).to_have_text("rejected")

    card = page.locator(f"#draft-{third}")
    card.locator("details.edit summary").click()
    card.locator("textarea[name=expect_yaml]").fill("category: {mode: exactly, value: refund}")
    card.locator("details.edit button").click()
    expect(page.locator(f"#draft-{third} .problem")).to_contain_text("expect.category")
    card = page.locator(f"#draft-{third}")  # swapped: the form kept what was typed
    assert "exactly" in card.locator("textarea[name=expect_yaml]").input_value()
    card.locator("textarea[name=expect_yaml]").fill("category: {mode: exact, value: billing}")
    card.locator("textarea[name=text]").fill("我想把发票抬头改成公司全称。")
    card.locator("details.edit button").click()
    expect(page.locator(f"#draft-{third} .status")).to_have_text("edited")

    counts = page.locator("#review-counts")
    expect(counts.locator("[data-count=accepted]")).to_have_text("1 accepted")
    expect(counts.locator("[data-count=edited]")).to_have_text("1 edited")
    expect(counts.locator("[data-count=rejected]")).to_have_text("1 rejected")
    expect(counts.locator("[data-count=pending]")).to_have_text(f"{pending - 3} pending")
    row = counts.locator("tr[data-reviewer=example-reviewer]")
    expect(row).to_have_text(re.compile(r"example-reviewer\s*1\s*1\s*1"))
    shot(page, served, "review-decided")

    queue = {d.draft_id: d for d in load_queue(suite)}  # what the CLI's `review` reads
    assert [queue[i].status for i in (first, second, third)] == ["accepted", "rejected", "edited"]
    assert queue[second].reason == "does not fit its tuple"
    case = load_suite(suite).cases
    made = {c.case.id: c.case for c in case}
    accepted = made[queue[first].case_id or ""]
    assert (suite / written).is_file() and accepted.provenance["reviewed_by"] == "example-reviewer"
    edited = made[queue[third].case_id or ""]
    assert edited.input["ticket"] == "我想把发票抬头改成公司全称。"
    assert edited.provenance["edited"] is True


def test_calibration_shows_agreement_kappa_confusion_disagreements_and_probes(
    page: Any, served: Served
) -> None:
    page.goto(served.url + "/suites/0")
    page.click("a:has-text('Judge calibration')")
    page.wait_for_url(re.compile(r"/suites/0/calibration$"))
    expect(page.locator("#agreement")).to_contain_text("Cohen's κ")
    kappa = float(re.search(r"κ\s+(-?\d\.\d{3})", page.inner_text("#agreement")).group(1))
    labels = page.locator("#confusion thead th").all_inner_texts()[1:]
    assert labels == ["conveyed", "missing", "contradicted"]
    cells = [int(t) for t in page.locator("#confusion tbody td").all_inner_texts()]
    assert len(cells) == 9 and sum(cells) > 0
    diagonal = cells[0] + cells[4] + cells[8]
    shown = float(re.search(r"(\d+\.\d)%", page.inner_text("#agreement")).group(1))
    assert abs(shown - 100 * diagonal / sum(cells)) < 0.06  # the agreement is the diagonal
    assert -1 <= kappa <= 1
    off_diagonal = sum(cells) - diagonal
    assert page.locator("#disagreements tbody tr").count() == off_diagonal
    assert "verdicts flipped when irrelevant text was added" in page.inner_text("#probes")
    shot(page, served, "calibration")


def test_a_multi_turn_trial_shows_its_conversation(page: Any, served: Served) -> None:
    page.goto(served.url + f"/runs/{served.runs['v2']}/cases/mt-ask-id-cancel-c023/trials/1")
    heading = page.locator("h2", has_text="Conversation")
    expect(heading).to_contain_text("3 agent turn(s), ended by approval")
    turns = page.locator("ol.transcript li")
    assert turns.count() == 6  # three from the user, three from the agent
    assert "客户编号" in turns.nth(1).inner_text()  # the agent asked first
    assert "C023" in turns.nth(2).inner_text()
    assert "create_refund_request" in turns.nth(5).inner_text()
    shot(page, served, "trial-conversation")


def test_a_model_played_users_cost_is_shown_apart_from_the_agents(
    page: Any, served: Served
) -> None:
    run = served.runs["talk"]
    page.goto(served.url + f"/runs/{run}")
    cost = page.locator("table.kv tr", has=page.locator("th", has_text="cost")).inner_text()
    assert re.search(r"simulated users \$0\.\d+ more, apart", cost), cost
    page.goto(served.url + f"/runs/{run}/cases/refund-model-customer/trials/1")
    usage = page.inner_text("#user-usage")
    assert "600 in / 36 out tokens" in usage  # three customer turns of 200 in, 12 out
    assert not re.search(r"\$0\.0000", usage)
    assert "$0.0000 · 0 in / 0 out tokens" in page.inner_text("#trial-usage")  # the agent's
    expect(page.locator("ol.transcript li")).to_have_count(6)
    shot(page, served, "trial-simulated-user")


def test_a_trials_spans_show_as_a_tree_with_durations_attributes_and_errors(
    page: Any, served: Served
) -> None:
    run = served.runs["langgraph"]
    page.goto(served.url + f"/runs/{run}/cases/unknown-order/trials/1")
    spans = page.locator("ul.spans").first
    expect(spans).to_be_visible()
    root = spans.locator(":scope > li > .span-line").first
    expect(root).to_contain_text("LangGraph")
    expect(root).to_contain_text(re.compile(r"\d+\.\d ms"))
    errors = page.locator("li.span-error > .span-line")
    expect(errors).to_have_count(2)  # v1 looked the missing order up twice
    expect(errors.first).to_contain_text("lookup_order")
    expect(errors.first).to_contain_text("KeyError")
    kinds = page.locator("li.span-error table.attributes td", has_text="openinference.span.kind")
    expect(kinds.first).to_be_visible()  # an error span's attributes are open
    expect(page.locator("tr.fail", has_text="trace").locator("pre.diff")).to_have_count(0)
    check = page.locator("tr.fail", has_text="trace")
    expect(check).to_contain_text("2 error spans named lookup_order, at most 1 allowed")
    shot(page, served, "trial-spans")
