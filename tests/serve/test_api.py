"""Every JSON endpoint against the OpenAPI spec it is generated with, and the guards: CSRF
and Origin on state-changing requests, --read-only, and ids from the URL (the Host names
and the token beyond loopback: test_security.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from caseforge.case.load import load_suite
from caseforge.serve import Catalog, Guard, create_app
from caseforge.serve.security import CSRF_COOKIE
from caseforge.synth.writer import load_queue
from tests.serve.conftest import REPO, Served


def client(world: Served, guard: Guard | None = None, **kw: Any) -> TestClient:
    """A client naming the server as a browser on this machine would (the Host guard
    refuses TestClient's own ``testserver``)."""
    catalog = Catalog.open(list(world.suites.values()), world.store, reviewer="example-reviewer")
    return TestClient(create_app(catalog, guard), **{"base_url": "http://127.0.0.1:8471", **kw})


@pytest.fixture(scope="module")
def api(world: Served) -> TestClient:
    return client(world)


def test_the_openapi_spec_names_every_endpoint_and_its_models(api: TestClient) -> None:
    spec = api.get("/api/openapi.json").json()
    paths = set(spec["paths"])
    assert paths == {
        "/api/runs",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/grid",
        "/api/runs/{run_id}/cases/{case_id}/trials/{trial}",
        "/api/compare",
        "/api/runs/{run_id}/labels",
        "/api/suites/{index}",
        "/api/suites/{index}/review",
        "/api/suites/{index}/review/{draft_id}",
        "/api/suites/{index}/calibration",
        "/api/suites/{index}/trends",
    }
    schemas = set(spec["components"]["schemas"])
    assert {"RunList", "RunReport", "GridPage", "TrialPage", "ComparePage", "LabelIn"} <= schemas
    assert {"ReviewPage", "DecisionIn", "DecisionOut", "DraftView", "CalibrationPage"} <= schemas
    assert {"TrendsPage", "ValidationState", "CostSplit", "TextDiff"} <= schemas
    assert set(spec["paths"]["/api/runs/{run_id}/labels"]) == {"get", "post"}


def test_every_endpoint_answers_its_model(api: TestClient, world: Served) -> None:
    runs = api.get("/api/runs").json()["runs"]
    assert {r["id"] for r in runs} == set(world.runs.values())
    v1 = world.runs["v1"]
    report = api.get(f"/api/runs/{v1}").json()
    assert report["run_id"] == v1 and report["summary"]["cases"] == 86
    failing = api.get(f"/api/runs/{v1}/grid", params={"show": "failing"}).json()
    assert failing["total_cases"] == 86 - report["summary"]["fully_passing_cases"]
    assert all(any(s != "pass" for s in r["statuses"]) for r in failing["rows"])
    first = failing["rows"][0]["id"]
    trial = api.get(f"/api/runs/{v1}/cases/{first}/trials/1").json()
    assert trial["view"]["case_id"] == first and trial["case_file"] == f"cases/{first}.yaml"
    written = [
        c for c in trial["checks"] if c["status"] == "fail" and c["name"] != "approval_pause"
    ]
    assert written and all(c["line"] for c in written), "each failing check knows its line"
    compare = api.get("/api/compare", params={"a": world.runs["v2"], "b": v1}).json()
    assert compare["result"]["newly_failing"] and compare["result"]["significant"]
    assert compare["newly_failing"][0]["b"][0]["output"] is not None
    paged = api.get(f"/api/runs/{v1}/grid", params={"page": 2}).json()
    assert paged["page"] == 2 and paged["pages"] == 2 and len(paged["rows"]) == 36


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/api/runs/nope", 404, "no run 'nope'"),
        ("/api/runs/%2E%2E", 400, "is not a run id"),
        ("/api/runs/..%2F..%2Fetc", 404, "Not Found"),  # no route takes a slash in an id
        ("/api/runs/{v1}/cases/%2E%2E/trials/1", 400, "is not a case id"),
        ("/api/runs/{v1}/cases/%2E%2E%5Cx/trials/1", 400, "is not a case id"),
        ("/api/runs/{v1}/cases/no-such/trials/1", 400, "has no stored result"),
        ("/api/runs/{v1}/grid?show=everything", 400, "show must be one of"),
        ("/api/compare?a={v1}&b={xss}", 400, "different suites"),
        ("/api/compare?a={v1}&b={v1}&baseline=..%2F..%2Fcaseforge.yaml", 400, "not a baseline"),
    ],
)
def test_bad_ids_and_paths_are_refused_in_one_line(
    api: TestClient, world: Served, path: str, status: int, says: str
) -> None:
    response = api.get(path.format(**world.runs))
    assert response.status_code == status, response.text
    assert says in response.json()["detail"]


def test_a_state_changing_request_needs_the_csrf_token_and_this_origin(world: Served) -> None:
    web = client(world, base_url="http://127.0.0.1:8471")
    page = web.get("/")
    token = page.cookies.get(CSRF_COOKIE) or web.cookies.get(CSRF_COOKIE)
    assert token and f'"X-CSRF-Token": "{token}"' in page.text
    own = {"Origin": "http://127.0.0.1:8471"}
    missing = web.post("/api/runs", headers=own)
    assert missing.status_code == 403 and "CSRF" in missing.text
    foreign = web.post("/api/runs", headers={"X-CSRF-Token": token, "Origin": "http://evil.test"})
    assert foreign.status_code == 403 and "evil.test" in foreign.text
    no_origin = web.post("/api/runs", headers={"X-CSRF-Token": token})
    assert no_origin.status_code == 403
    allowed = web.post("/api/runs", headers={"X-CSRF-Token": token, **own})
    assert allowed.status_code == 405  # past the guard: this route takes no POST


def test_read_only_refuses_every_write(world: Served) -> None:
    web = client(world, Guard(read_only=True), base_url="http://127.0.0.1:8471")
    token = web.get("/").cookies.get(CSRF_COOKIE)
    refused = web.post(
        "/api/runs", headers={"X-CSRF-Token": token or "", "Origin": "http://127.0.0.1:8471"}
    )
    assert refused.status_code == 403 and "read-only" in refused.text
    assert "read-only" in web.get("/").text


def test_a_label_posted_to_the_api_is_saved_once(world: Served) -> None:
    web = client(world, base_url="http://127.0.0.1:8471")
    token = web.get("/").cookies.get(CSRF_COOKIE) or ""
    headers = {"X-CSRF-Token": token, "Origin": "http://127.0.0.1:8471"}
    run = world.runs["v2"]
    queue = web.get(f"/api/runs/{run}/labels").json()
    task = queue["next"]
    body = {k: task[k] for k in ("case_id", "trial", "check", "digest")}
    wrong = web.post(
        f"/api/runs/{run}/labels",
        json={**body, "labels": {"no such fact": "conveyed"}},
        headers=headers,
    )
    assert wrong.status_code == 400 and "not a fact of" in wrong.json()["detail"]
    bad = web.post(
        f"/api/runs/{run}/labels",
        json={**body, "labels": {task["facts"][0]: "maybe"}},
        headers=headers,
    )
    assert bad.status_code == 400 and "a label is one of" in bad.json()["detail"]
    saved = web.post(
        f"/api/runs/{run}/labels",
        json={**body, "labels": {task["facts"][0]: "missing"}},
        headers=headers,
    )
    assert saved.status_code == 200, saved.text
    assert saved.json() == {
        "path": f"labels/{task['case_id']}.yaml",
        "remaining": queue["remaining"] - 1,
    }
    again = web.post(
        f"/api/runs/{run}/labels",
        json={**body, "labels": {task["facts"][0]: "missing"}},
        headers=headers,
    )
    assert again.status_code == 404 and "already labeled" in again.json()["detail"]
    xss = world.runs["xss"]
    assert web.get(f"/api/runs/{xss}/labels").json()["remaining"] == 0


def test_the_suite_endpoint_lists_cases_problems_history_and_holdout(
    api: TestClient, world: Served
) -> None:
    suites = list(world.suites)
    refund = api.get(f"/api/suites/{suites.index('support-refund')}").json()
    assert refund["name"] == "support-refund" and len(refund["cases"]) == 86
    case = next(c for c in refund["cases"] if c["id"] == "refund-yearly-023")
    assert case["file"] == "cases/refund-yearly-023.yaml" and "refund" in case["expect"]
    assert refund["errors"] == []
    assert {r["id"] for r in refund["history"]["runs"]} == {world.runs["v1"], world.runs["v2"]}
    assert refund["holdout"] is not None and refund["holdout_run"] in world.runs.values()
    assert api.get("/api/suites/7").status_code == 404


def test_compare_from_digests_is_the_same_as_from_full_reports(
    api: TestClient, world: Served
) -> None:
    from caseforge.compare.outcomes import outcomes_from_report
    from caseforge.compare.pairing import compare_runs
    from caseforge.report.build import load_report

    a, b = world.runs["v2"], world.runs["v1"]
    served = api.get("/api/compare", params={"a": a, "b": b}).json()["result"]
    full = compare_runs(
        outcomes_from_report(load_report(a, world.store)),
        outcomes_from_report(load_report(b, world.store)),
    ).to_result()
    assert served == json.loads(full.model_dump_json())


def _review_client(tmp_path: Path, reviewer: str = "ana", **kw: Any) -> tuple[TestClient, Path]:
    """Its own copy of the suite: the browser test counts the shared one's decisions."""
    suite = tmp_path / "support-refund"
    shutil.copytree(REPO / "examples" / "support-refund", suite)
    catalog = Catalog.open([suite], f"sqlite:///{tmp_path / 'none.db'}", reviewer=reviewer)
    return TestClient(create_app(catalog, **kw), base_url="http://127.0.0.1:8471"), suite


def _headers(web: TestClient) -> dict[str, str]:
    token = web.get("/").cookies.get(CSRF_COOKIE) or web.cookies.get(CSRF_COOKIE) or ""
    return {"X-CSRF-Token": token, "Origin": "http://127.0.0.1:8471"}


def test_review_decisions_through_the_api(tmp_path: Path) -> None:
    web, suite = _review_client(tmp_path)
    headers = _headers(web)
    before = len(load_suite(suite).cases)
    page = web.get("/api/suites/0/review").json()
    assert page["counts"]["pending"] == 12 and len(page["drafts"]) == 12
    draft = page["drafts"][0]
    assert draft["tuple_descriptions"]["scenario"] and draft["expect_yaml"].startswith("category")
    assert draft["oracles"] == {"refund": "refund_policy(scenario=cancel)"}
    near = page["drafts"][11]["near_duplicates"][0]
    assert near["id"] == "syn-export-error-038" and near["similarity"] >= 0.8
    url = f"/api/suites/0/review/{draft['draft_id']}"
    done = web.post(url, json={"action": "accept"}, headers=headers)
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["path"].startswith("cases/syn-cancel-unpaid-") and (suite / body["path"]).is_file()
    assert body["counts"]["by_reviewer"] == {"ana": {"accepted": 1, "edited": 0, "rejected": 0}}
    again = web.post(url, json={"action": "reject", "reason": "x"}, headers=headers)
    assert again.status_code == 400 and "already accepted by ana" in again.json()["detail"]

    second = page["drafts"][1]["draft_id"]
    url = f"/api/suites/0/review/{second}"
    no_reason = web.post(url, json={"action": "reject"}, headers=headers)
    assert no_reason.status_code == 400 and "needs a reason" in no_reason.json()["detail"]
    bad_edit = web.post(
        url, json={"action": "edit", "expect": {"category": {"mode": "nope"}}}, headers=headers
    )
    assert bad_edit.status_code == 400 and "expect.category" in bad_edit.json()["detail"]
    assert load_queue(suite)[1].status == "pending"  # neither wrote anything
    shown = web.get("/api/suites/0/review", params={"show": "accepted"}).json()
    assert [d["draft_id"] for d in shown["drafts"]] == [draft["draft_id"]]
    assert len(load_suite(suite).cases) == before + 1


@pytest.mark.parametrize(
    ("path", "body", "status", "says"),
    [
        ("/api/suites/0/review/..%2E", {"action": "accept"}, 400, "is not a draft id"),
        ("/api/suites/0/review/nope", {"action": "accept"}, 400, "no draft 'nope'"),
        ("/api/suites/7/review/x", {"action": "accept"}, 404, "no suite number 7"),
        ("/api/suites/0/review/x", {"action": "publish"}, 422, "accept"),
    ],
)
def test_bad_review_requests_are_refused(
    tmp_path: Path, path: str, body: dict[str, str], status: int, says: str
) -> None:
    web, _ = _review_client(tmp_path)
    response = web.post(path, json=body, headers=_headers(web))
    assert response.status_code == status, response.text
    assert says in response.text
    shows = web.get("/api/suites/0/review", params={"show": "everything"})
    assert shows.status_code == 400 and "show must be one of" in shows.text


def test_review_needs_a_name_and_read_only_refuses_it(tmp_path: Path) -> None:
    web, suite = _review_client(tmp_path, reviewer="")
    first = load_queue(suite)[0].draft_id
    nameless = web.post(
        f"/api/suites/0/review/{first}", json={"action": "accept"}, headers=_headers(web)
    )
    assert nameless.status_code == 400 and "--reviewer NAME" in nameless.json()["detail"]
    web, suite = _review_client(tmp_path / "ro", guard=Guard(read_only=True))
    refused = web.post(
        f"/api/suites/0/review/{first}", json={"action": "accept"}, headers=_headers(web)
    )
    assert refused.status_code == 403 and "read-only" in refused.text
    assert "read-only: reviewing is off" in web.get("/suites/0/review").text
    assert all(d.status == "pending" for d in load_queue(suite))


def test_calibration_replays_and_is_redone_when_a_label_changes(tmp_path: Path) -> None:
    import asyncio

    from caseforge.calibrate.calibrate import calibrate
    from caseforge.calibrate.labels import LabeledOutput, save_item

    web, suite = _review_client(tmp_path)
    page = web.get("/api/suites/0/calibration").json()
    assert page["state"] == "ready" and page["mode"] == "replay"
    cli = asyncio.run(calibrate(suite)).to_json()  # what `caseforge calibrate` reports
    assert page["overall"] == cli["overall"] and page["per_fact"] == cli["per_fact"]
    assert len(page["disagreements"]) == len(cli["disagreements"])
    assert page["position"]["flips"] == cli["position"]["flips"] and page["not_judged"] == []
    item = LabeledOutput(
        check="facts", output="一段从未被评过的回复。", labels={"保持礼貌，不对骂": "missing"}
    )
    save_item(suite, "edge-abusive-c018", item)
    again = web.get("/api/suites/0/calibration").json()
    assert any("no recorded response" in line for line in again["not_judged"])


def test_calibration_without_recordings_or_labels_says_what_to_do(tmp_path: Path) -> None:
    web, suite = _review_client(tmp_path)
    shutil.rmtree(suite / "labels" / "judge-recordings")
    page = web.get("/api/suites/0/calibration").json()
    assert page["state"] == "no_recordings" and "--record" in page["message"]
    assert page["overall"] is None  # nothing judged: the web app never calls a model
    for path in (suite / "labels").glob("*.yaml"):
        path.unlink()
    page = web.get("/api/suites/0/calibration").json()
    assert page["state"] == "no_labels" and "caseforge label RUN" in page["message"]
    assert "caseforge label RUN" in web.get("/suites/0/calibration").text


def test_the_suite_page_caps_its_near_duplicates_as_validate_does(tmp_path: Path) -> None:
    suite = tmp_path / "tickets"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: tickets\nagent: {callable: 'a:run'}\n")
    ticket = {"ticket": "My walnut desk lamp arrived broken"}
    expect = {"c": {"mode": "exact", "value": 1}}
    lines = [
        json.dumps(
            {"id": f"t{n}", "input": ticket, "expect": expect, "split": ["dev", "test"][n % 2]}
        )
        for n in range(8)
    ]
    (suite / "cases" / "t.jsonl").write_text("\n".join(lines) + "\n")  # 28 identical pairs
    catalog = Catalog.open([suite], f"sqlite:///{tmp_path / 'none.db'}", reviewer="r")
    web = TestClient(create_app(catalog), base_url="http://127.0.0.1:8471")
    web.get("/api/suites/0")  # starts the suite's validation, in the background
    assert catalog.suite_index(0).wait(120), "the validation did not end"
    page = web.get("/api/suites/0").json()
    assert page["validation"]["state"] == "done"
    assert page["warnings_total"] == 28
    assert len(page["warnings"]) == 21
    assert page["warnings"][-1] == (
        "and 8 more near-duplicate pairs; `caseforge validate --json` lists them"
    )
    assert "28 warning(s)" in web.get("/suites/0").text
