"""The web app for a team's daily loop, below the browser: a trial read by its key with its
neighbours, compare from paired digest rows, the suite screen's pages and background
validation, grid cells that name their checks, URL state, compare's defaults and diffs,
the cost split and the trends (issue 28). The browser side: test_browser_daily.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from caseforge.case.load import load_config
from caseforge.compare.digest import compare_stored, load_digest, save_digest
from caseforge.compare.outcomes import outcomes_from_report
from caseforge.compare.pairing import compare_runs
from caseforge.report.build import build_report
from caseforge.report.model import TrialResult
from caseforge.report.show import TrialView
from caseforge.results import CheckResult, CheckStatus, TrialRecord, TrialStatus
from caseforge.serve import Catalog, create_app
from caseforge.serve.catalog import _trial_cost, check_changes, pair_diff
from caseforge.serve.suites import SuiteIndex
from caseforge.serve.textdiff import tokens, word_diff
from caseforge.store.db import RunStore, utcnow
from tests.serve.conftest import Served


@pytest.fixture(scope="module")
def api(world: Served) -> TestClient:
    catalog = Catalog.open(list(world.suites.values()), world.store, reviewer="example-reviewer")
    return TestClient(create_app(catalog), base_url="http://127.0.0.1:8471")


def test_a_trial_is_read_by_its_key_with_its_neighbours(
    world: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = world.runs["v1"]
    store = RunStore(world.store)
    order = [(r["case_id"], r["trial"], r["status"]) for r in store.results(run)]
    store.close()

    def whole_run(*_: Any, **__: Any) -> Any:
        raise AssertionError("a trial page read the whole run")

    monkeypatch.setattr(RunStore, "results", whole_run)  # neither every result…
    monkeypatch.setattr(RunStore, "cases", whole_run)  # …nor every case
    catalog = Catalog.open(list(world.suites.values()), world.store)
    web = TestClient(create_app(catalog), base_url="http://127.0.0.1:8471")
    middle = len(order) // 2
    case_id, trial, _ = order[middle]
    page = web.get(f"/api/runs/{run}/cases/{case_id}/trials/{trial}").json()
    assert page["view"]["case_id"] == case_id
    assert (page["previous"]["case_id"], page["previous"]["trial"]) == order[middle - 1][:2]
    assert (page["next"]["case_id"], page["next"]["trial"]) == order[middle + 1][:2]
    failing = next(o for o in order[middle + 1 :] if o[2] != "pass")
    assert (page["next_failing"]["case_id"], page["next_failing"]["trial"]) == failing[:2]
    first = web.get(f"/api/runs/{run}/cases/{order[0][0]}/trials/{order[0][1]}").json()
    assert first["previous"] is None
    html = web.get(f"/runs/{run}/cases/{case_id}/trials/{trial}").text
    assert 'data-key="n"' in html and 'data-key="p"' in html and 'data-key="f"' in html
    assert f'value="http://127.0.0.1:8471/runs/{run}/cases/{case_id}/trials/{trial}"' in html


def _make_run(store: RunStore, suite: Path, outcomes: dict[str, str], expect: str = "x") -> str:
    """A finished run whose case ``c`` has trials ``outcomes[c]`` (P, F, E letters)."""
    trials = max(len(v) for v in outcomes.values())
    run_id = store.create_run(
        suite="pairs", suite_path=str(suite), agent="toy", trials=trials, split="all",
        caseforge_version="test",
    )  # fmt: skip
    snapshot = {
        "input": {"ticket": "退款"},
        "expect": {"a": {"mode": "exact", "value": expect}, "b": {"mode": "exact", "value": "y"}},
    }
    store.save_cases(run_id, [(c, json.dumps({"id": c, **snapshot})) for c in outcomes])
    rows = []
    statuses = {"P": TrialStatus.PASS, "F": TrialStatus.FAIL, "E": TrialStatus.ERROR}
    for case_id, letters in outcomes.items():
        for trial, letter in enumerate(letters, start=1):
            ok = letter == "P"
            checks = [
                CheckResult("a", "exact", CheckStatus.PASS if ok else CheckStatus.FAIL, "x", "x"),
                CheckResult("b", "exact", CheckStatus.PASS, "y", "y"),
            ]
            record = TrialRecord(
                case_id=case_id, trial=trial, status=statuses[letter], checks=checks
            )
            rows.append(record.to_row(run_id, utcnow(), json.dumps({"reply": f"好的 {letter}"})))
    store.write_results(rows)
    store.set_status(run_id, "finished")
    save_digest(store, build_report(store, run_id))
    return run_id


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"c1": "P", "c2": "P", "c3": "F", "c4": "P", "gone": "P"},
         {"c1": "F", "c2": "P", "c3": "P", "c4": "E", "new": "F"}),
        ({"c1": "PPF", "c2": "PPP", "c3": "FFP", "c4": "PFP"},
         {"c1": "FFF", "c2": "PPF", "c3": "PPP", "c4": "PFP"}),
    ],
)  # fmt: skip
def test_compare_from_paired_digest_rows_is_the_comparison_of_the_whole_runs(
    tmp_path: Path, a: dict[str, str], b: dict[str, str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    store = RunStore(f"sqlite:///{tmp_path / 'pairs.db'}")
    run_a, run_b = _make_run(store, suite, a), _make_run(store, suite, b)
    digest_a, digest_b = load_digest(store, run_a), load_digest(store, run_b)
    assert digest_a is not None and digest_b is not None
    paired = compare_stored(store, digest_a, digest_b).to_result()
    whole = compare_runs(
        outcomes_from_report(build_report(store, run_a)),
        outcomes_from_report(build_report(store, run_b)),
    ).to_result()
    assert paired == whole
    assert paired.newly_failing and paired.newly_passing  # something to compare
    store.close()


def test_a_case_whose_expectations_changed_is_left_out_of_the_paired_compare(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    store = RunStore(f"sqlite:///{tmp_path / 'pairs.db'}")
    run_a = _make_run(store, suite, {"c1": "P", "c2": "P"})
    run_b = _make_run(store, suite, {"c1": "F", "c2": "F"}, expect="z")
    digest_a, digest_b = load_digest(store, run_a), load_digest(store, run_b)
    assert digest_a is not None and digest_b is not None
    result = compare_stored(store, digest_a, digest_b).to_result()
    assert result.cases_changed == ["c1", "c2"] and result.paired_cases == 0
    store.close()


def _suite(root: Path, cases: int) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "caseforge.yaml").write_text("name: paged\n", encoding="utf-8")
    for n in range(cases):
        split = "dev" if n % 2 else "test"
        (root / "cases" / f"case-{n:03d}.yaml").write_text(
            f"id: case-{n:03d}\ninput: {{ticket: 'ticket number {n} 第{n}号'}}\n"
            f"expect:\n  category: {{mode: exact, value: billing}}\nsplit: {split}\n"
            f"tags: [{'odd' if n % 2 else 'even'}]\n",
            encoding="utf-8",
        )
    return root


def test_the_suite_screen_pages_from_the_files_then_from_its_background_validation(
    tmp_path: Path,
) -> None:
    suite = _suite(tmp_path / "paged", 230)
    catalog = Catalog.open([suite], f"sqlite:///{tmp_path / 'none.db'}")
    web = TestClient(create_app(catalog), base_url="http://127.0.0.1:8471")
    first = web.get("/api/suites/0").json()
    assert [c["id"] for c in first["cases"]] == [f"case-{n:03d}" for n in range(100)]
    assert first["total_cases"] == 230 and first["pages"] == 3
    assert first["validation"]["total"] == 230
    index = catalog.suite_index(0)
    assert index.wait(120), "the validation did not end"
    done = web.get("/api/suites/0", params={"page": 3}).json()
    assert done["validation"]["state"] == "done"
    assert [c["id"] for c in done["cases"]] == [f"case-{n:03d}" for n in range(200, 230)]
    assert done["errors"] == [] and done["distribution"] == {
        "billing": {"dev": 115, "test": 115, "unassigned": 0}
    }
    found = web.get("/api/suites/0", params={"q": "odd"}).json()  # tags, once validated
    assert found["total_cases"] == 115
    job = index._job
    web.get("/api/suites/0")
    assert index._job is job  # unchanged files: the result is kept, nothing re-validated
    page = web.get("/suites/0?page=2&q=case-1")
    assert page.status_code == 200 and "case-150" in page.text and "case-050" not in page.text
    # One file edited: validated again, in the background; the page says how far it is.
    edited = suite / "cases" / "case-007.yaml"
    edited.write_text(
        edited.read_text().replace("value: billing", "value: [billing"), encoding="utf-8"
    )
    again = web.get("/api/suites/0").json()
    assert again["validation"]["state"] == "running" and index._job is not job
    assert index.wait(120)
    problems = web.get("/api/suites/0").json()["errors"]
    assert any("case-007.yaml" in p for p in problems)


def test_a_validation_nobody_looks_at_is_stopped(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "left", 30)
    index = SuiteIndex(suite, abandon_s=-1.0)  # nobody has looked for "ever"
    assert index.state().state == "running"
    assert index.wait(120)
    state = index.state(start=False)
    assert state.state == "not started"  # stopped, and not started again without a look
    assert index._job is not None and index._job.state == "abandoned"
    assert index._job.done == 0 and index.result() is None


def test_grid_cells_name_the_checks_they_failed(api: TestClient, world: Served) -> None:
    run = world.runs["v1"]
    grid = api.get(f"/api/runs/{run}/grid", params={"show": "failing"}).json()
    cell = next(c for r in grid["rows"] for c in r["cells"] if c["status"] == "fail")
    row = next(r for r in grid["rows"] if cell in r["cells"])
    trial = api.get(f"/api/runs/{run}/cases/{row['id']}/trials/{cell['trial']}").json()
    failed = [c["name"] for c in trial["checks"] if c["status"] in ("fail", "error")]
    assert cell["failing"] == failed and failed
    html = api.get(f"/fragments/runs/{run}/grid", params={"show": "failing"}).text
    label = f"{row['id']} trial {cell['trial']}: fail — {', '.join(failed)}"
    assert f'aria-label="{label}"' in html


def test_the_grids_address_follows_its_filters(api: TestClient, world: Served) -> None:
    run = world.runs["v1"]
    fragment = api.get(f"/fragments/runs/{run}/grid", params={"show": "failing", "page": 1})
    assert fragment.headers["HX-Push-Url"] == f"/runs/{run}?show=failing"
    page = api.get(f"/runs/{run}", params={"show": "failing", "q": "refund"})
    assert page.status_code == 200
    assert '<option value="failing" selected>' in page.text and 'value="refund"' in page.text


def test_the_runs_list_filters_sorts_and_pages_in_its_address(
    api: TestClient, world: Served
) -> None:
    everything = api.get("/api/runs").json()
    assert everything["total"] == len(world.runs)
    by_rate = api.get("/api/runs", params={"sort": "pass_rate", "order": "asc"}).json()["runs"]
    rates = [r["pass_rate"] for r in by_rate]
    assert rates == sorted(rates)
    # "v1" names support-refund's v1 run and the LangGraph example's (run with its v1).
    assert {r["id"] for r in api.get("/api/runs", params={"q": "v1"}).json()["runs"]} == {
        world.runs["v1"],
        world.runs["langgraph"],
    }
    assert api.get("/api/runs", params={"sort": "nope"}).status_code == 400
    html = api.get("/", params={"sort": "cost", "order": "desc"}).text
    assert 'aria-sort="descending"' in html and "/?sort=cost&amp;order=asc" in html


def test_the_header_names_the_suites_and_the_store_served(api: TestClient, world: Served) -> None:
    serving = re.search(r'<p class="serving".*?</p>', api.get("/").text, re.S)
    assert serving is not None
    for folder in world.suites.values():  # each by its caseforge.yaml's name
        name = load_config(folder).name
        assert f"<b>{name}</b>" in serving.group(0)
    assert world.store in serving.group(0)


def test_compare_defaults_to_the_suites_baseline_run_and_explains(
    api: TestClient, world: Served
) -> None:
    v1, v2 = world.runs["v1"], world.runs["v2"]  # support-refund's baseline.json is v2's
    choices = re.search(r'<select name="a">(.*?)</select>', api.get(f"/runs/{v1}").text, re.S)
    assert choices is not None
    first = re.search(r'<option value="([^"]+)" selected>([^<]*)', choices.group(1))
    assert first is not None and first.group(1) == v2
    assert "the suite&#39;s baseline (baseline.json)" in first.group(2)
    page = api.get("/compare", params={"b": v1}).text  # B alone: A and the gate are defaulted
    assert f'<option value="{v2}" selected>' in page
    assert '<option value="baseline.json" selected>' in page and "gate: regression" in page
    data = api.get("/api/compare", params={"a": v2, "b": v1}).json()
    pair = data["newly_failing"][0]
    assert pair["check_changes"] and all(c["a"] != c["b"] for c in pair["check_changes"])
    names = {c["name"] for c in pair["check_changes"]}
    assert set(pair["changed_checks"]) <= names
    assert pair["diff"] is not None and pair["diff"]["parts"]
    html = api.get("/compare", params={"a": v2, "b": v1}).text
    change = pair["check_changes"][0]
    assert f'<b>{change["name"]}</b>: <span class="was">{change["a"]}</span> →' in html


def test_check_changes_and_the_text_diff() -> None:
    def trial(n: int, status: str, reply: str) -> TrialResult:
        check = CheckResult("reply", "must_include", CheckStatus(status), ["退款"], reply)
        return TrialResult(trial=n, status=TrialStatus(status), reply=reply, checks=[check])

    a = [trial(1, "pass", "好的，已为您办理退款。"), trial(2, "pass", "已退款")]
    b = [trial(1, "fail", "好的，已为您办理换货。"), trial(2, "pass", "已退款")]
    [change] = check_changes(a, b)
    assert (change.name, change.a, change.b) == ("reply", "pass ×2", "1 of 2 pass")
    assert [check_changes(a[:1], b[:1])[0].b] == ["fail"]
    diff = pair_diff(a, b)
    assert diff is not None and (diff.trial_a, diff.trial_b) == (1, 1)
    changed = [(p.op, p.text) for p in diff.parts if p.op != "same"]
    assert changed == [("del", "退款"), ("add", "换货")]  # the changed words alone
    assert tokens("Hoàn tiền 退款 now") == ["Hoàn", " ", "tiền", " ", "退", "款", " ", "now"]
    parts = word_diff("refund the yearly plan", "refund the monthly plan")
    assert [(p.op, p.text) for p in parts] == [
        ("same", "refund the "), ("del", "yearly"), ("add", "monthly"), ("same", " plan"),
    ]  # fmt: skip


def test_a_trials_cost_is_split_by_who_spent_it() -> None:
    checks = [
        CheckResult("facts", "judge", CheckStatus.PASS, None, None, cost_usd=0.002),
        CheckResult("tone", "judge", CheckStatus.FAIL, None, None, cost_usd=0.0),
        CheckResult("category", "exact", CheckStatus.PASS),
    ]
    view = TrialView(
        run_id="r", case_id="c", trial=1, status=TrialStatus.FAIL, checks=checks,
        cost_usd=0.01, user_usage={"cost_usd": 0.003},
    )  # fmt: skip
    cost = _trial_cost(view)
    assert (cost.agent_usd, cost.judge_usd, cost.simulated_user_usd) == (0.01, 0.002, 0.003)
    old = view.model_copy(update={"checks": [CheckResult("facts", "judge", CheckStatus.PASS)]})
    assert _trial_cost(old).judge_usd is None  # judged before the cost was kept per check


def test_the_trends_follow_a_configurations_finished_runs(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: pairs\n", encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'trend.db'}"
    store = RunStore(url)
    made = [
        _make_run(store, suite, {"steady": "PPP", "flaky": "PFP", "broken": "FFF"}),
        _make_run(store, suite, {"steady": "PPP", "flaky": "FPF", "broken": "FFF"}),
        _make_run(store, suite, {"steady": "PPP", "flaky": "PPF", "broken": "FFP"}),
    ]
    store.close()
    catalog = Catalog.open([suite], url)
    web = TestClient(create_app(catalog), base_url="http://127.0.0.1:8471")
    data = web.get("/api/suites/0/trends").json()
    assert [p["run_id"] for p in data["points"]] == made  # oldest first
    rates = [p["pass_rate"] for p in data["points"]]
    assert rates == pytest.approx([5 / 9, 4 / 9, 6 / 9])
    assert [h["case"] for h in data["heat"]] == ["flaky", "broken"]  # flakiest first
    assert data["heat"][0]["letters"] == ["PFP", "FPF", "PPF"]
    assert data["heat"][0]["cells"] == pytest.approx([2 / 3, 1 / 3, 2 / 3])
    html = web.get("/suites/0/trends").text
    assert html.count("<svg") >= 3 and 'id="chart-pass-rate"' in html
    assert 'aria-label="flaky in run ' in html
    assert web.get("/suites/0/trends", params={"config": "nope"}).status_code == 400


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/runs/{v1}?page=0", "query parameter page: Input should be greater than or equal to 1"),
        ("/?page=first", "query parameter page: Input should be a valid integer"),
        ("/suites/first", "path part index: Input should be a valid integer"),
        ("/runs/{v1}/label?skip=-1", "query parameter skip: Input should be greater than"),
        ("/runs/{v1}/cases/refund-yearly-023/trials/one", "path part trial: Input should be"),
    ],
)
def test_a_bad_query_parameter_is_the_styled_400_page(
    api: TestClient, world: Served, path: str, said: str
) -> None:
    page = api.get(path.format(v1=world.runs["v1"]))
    assert page.status_code == 400
    assert page.headers["content-type"].startswith("text/html")
    assert "<h1>Bad request</h1>" in page.text and 'id="serving"' in page.text  # the app's page
    message = re.search(r'<p class="error">([^<]*)</p>', page.text)
    assert message is not None and message.group(1).startswith(said), page.text


def test_the_api_keeps_fastapis_422_for_a_bad_parameter(api: TestClient, world: Served) -> None:
    answer = api.get(f"/api/runs/{world.runs['v1']}/grid", params={"page": 0})
    assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == ["query", "page"]


def _why(html: str) -> str:
    found = re.search(r'<p class="muted" id="compare-why">([^<]*)</p>', html)
    return found.group(1).replace("&#39;", "'") if found else ""


def test_compare_defaults_b_to_the_newest_finished_run_and_a_to_the_one_before(
    tmp_path: Path,
) -> None:
    suite = _suite(tmp_path / "pairs", 2)
    store = RunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    first, second, third = (_make_run(store, suite, {"c1": "P", "c2": p}) for p in "PFP")
    running = store.create_run(
        suite="pairs", suite_path=str(suite), agent="toy", trials=1, split="all",
        caseforge_version="test",
    )  # fmt: skip
    web = TestClient(create_app(Catalog.open([suite], store.url)), base_url="http://127.0.0.1:8471")

    def chosen(html: str, side: str) -> str:
        select = re.search(rf'<select name="{side}">(.*?)</select>', html, re.S)
        picked = re.search(r'<option value="([^"]*)" selected>', select.group(1) if select else "")
        return picked.group(1) if picked else ""

    page = web.get("/compare").text  # nothing given: B the newest finished run, A the one before
    assert (chosen(page, "a"), chosen(page, "b")) == (second, third)
    assert _why(page) == (
        f"B is the newest finished run, {third}. A is the previous finished run, {second}."
    )
    assert running not in (chosen(page, "a"), chosen(page, "b"))  # unfinished: never a default
    page = web.get("/compare", params={"b": second}).text  # the previous, not the newest
    assert chosen(page, "a") == first and _why(page) == f"A is the previous finished run, {first}."
    page = web.get("/compare", params={"b": first}).text  # the oldest: the next one after it
    assert chosen(page, "a") == second
    assert _why(page) == f"A is the next finished run: none finished before it, {second}."
    run_page = web.get(f"/runs/{third}").text  # the run screen's "Compare with" agrees
    assert chosen(run_page, "a") == second and "(the previous finished run)" in run_page
    for other in (first, second):
        store.delete_run(other)
    page = web.get("/compare", params={"b": third}).text
    assert chosen(page, "a") == "" and "Newly failing" not in page
    assert _why(page) == (
        "No other finished run of suite 'pairs' to compare B with: choose A, or run the suite "
        "again."
    )
    assert "same run" in web.get("/compare", params={"a": third, "b": third}).text
    store.close()


def test_compare_with_the_baseline_run_as_b_takes_another_run_as_a(
    api: TestClient, world: Served
) -> None:
    v1, v2 = world.runs["v1"], world.runs["v2"]  # baseline.json is v2's, v2 ran first
    page = api.get("/compare", params={"b": v2}).text
    assert f'<option value="{v1}" selected>' in page  # never v2 against itself
    assert _why(page) == f"A is the next finished run: none finished before it, {v1}."
    page = api.get("/compare", params={"b": v1}).text
    assert _why(page) == f"A is the run the suite's baseline (baseline.json) was made from, {v2}."


def test_a_run_of_a_suite_not_served_links_to_no_screen_that_is_not_there(world: Served) -> None:
    only = Catalog.open([world.suites["support-refund"]], world.store, reviewer="ana")
    web = TestClient(create_app(only), base_url="http://127.0.0.1:8471")
    run = world.runs["xss"]  # its suite is not served
    seen: set[str] = set()
    pages = [f"/runs/{run}", f"/fragments/runs/{run}/grid"]
    trial = re.search(rf'href="(/runs/{run}/cases/[^"]+)"', web.get(pages[0]).text)
    assert trial is not None
    pages.append(trial.group(1))
    for path in pages:
        page = web.get(path)
        assert page.status_code == 200, path
        for link in set(re.findall(r'href="(/[^"#]*)', page.text)) - seen:
            seen.add(link)
            if not link.startswith("/static/"):
                answer = web.get(link.replace("&amp;", "&"))
                assert answer.status_code == 200, (path, link, answer.status_code)
    assert f"/runs/{run}/label" not in seen  # (the header's /suites/0 is the suite served)
    assert "is not served: serve it to label" in web.get(f"/runs/{run}").text
    # Its own suite's runs keep both links.
    served = web.get(f"/runs/{world.runs['v1']}").text
    assert (
        f'href="/runs/{world.runs["v1"]}/label"' in served and '<h1><a href="/suites/0">' in served
    )


def test_the_run_screen_says_which_pass_rate_is_which(api: TestClient, world: Served) -> None:
    page = api.get(f"/runs/{world.runs['v1']}").text
    rows = dict(re.findall(r"<tr><th>([^<]*)</th><td>([^<]*)</td></tr>", page))
    rate = rows["pass rate (of case-trials)"]
    assert rate.startswith(f"{re.search(r'[0-9.]+%', rate).group(0)} (95% CI")  # type: ignore[union-attr]
    assert rows["pass^k (k=1: mean per-case pass share)"].startswith("k=1: ")
    explained = re.search(r'<p class="muted" id="pass-rates">(.*?)</p>', page, re.S)
    assert explained is not None and "each case counting once" in explained.group(1)
