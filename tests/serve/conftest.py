"""A served store with real runs: the support-refund suite's v1 and v2 (one trial each), a
suite whose ticket holds markup, for the XSS probe, and the LangGraph example's v1 (spans).
The server runs in a thread on a free loopback port; the browser is Debian's Chromium driven
by Playwright."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

from typer.testing import CliRunner  # noqa: E402

from caseforge.cli import app as cli  # noqa: E402
from caseforge.serve import Catalog, Guard, create_app  # noqa: E402
from tests.helpers import free_port  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


@dataclass
class Served:
    url: str
    store: str
    suites: dict[str, Path]
    runs: dict[str, str]  # "v1", "v2", "xss" -> run id
    artifacts: Path


def start_server(catalog: Catalog, guard: Guard | None = None) -> tuple[str, object]:
    port = free_port()
    config = uvicorn.Config(
        create_app(catalog, guard), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the server did not start"
    return f"http://127.0.0.1:{port}", server


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Served:
    tmp = tmp_path_factory.mktemp("serve")
    store = f"sqlite:///{tmp / 'store.db'}"
    runner = CliRunner()
    suite = tmp / "support-refund"
    shutil.copytree(
        REPO / "examples" / "support-refund",
        suite,
        ignore=shutil.ignore_patterns("__pycache__", "*.db"),
    )
    runs: dict[str, str] = {}
    for config in ("v2", "v1"):
        out = tmp / config
        done = runner.invoke(
            cli,
            ["run", str(suite), "--config", config, "--trials", "1", "--no-judge", "-q",
             "--store", store, "--out", str(out)],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        runs[config] = json.loads((out / "report.json").read_text())["run_id"]
    made = runner.invoke(
        cli, ["baseline", str(tmp / "v2" / "report.json"), "--write", str(suite / "baseline.json")]
    )
    assert made.exit_code == 0, made.output
    xss = tmp / "xss"
    runner.invoke(cli, ["init", str(xss)])
    case = xss / "cases" / "order-status.yaml"
    case.write_text(
        case.read_text().replace(
            "Where is my order ORD-1042?", XSS.replace('"', "'") + " ORD-1042?"
        ),
        encoding="utf-8",
    )
    out = tmp / "xss-out"
    done = runner.invoke(cli, ["run", str(xss), "-q", "--store", store, "--out", str(out)])
    assert done.exit_code == 0, done.output
    runs["xss"] = json.loads((out / "report.json").read_text())["run_id"]
    runs["talk"] = _model_user_run(tmp / "talk", store, runner)
    # The LangGraph example's v1: OpenInference spans on every trial, spans checks failing.
    graph = tmp / "langgraph-orders"
    shutil.copytree(
        REPO / "examples" / "langgraph-orders",
        graph,
        ignore=shutil.ignore_patterns("__pycache__", "*.db"),
    )
    out = tmp / "langgraph-out"
    done = runner.invoke(
        cli,
        ["run", str(graph), "--config", "v1", "--trials", "1", "-q", "--store", store,
         "--out", str(out)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    runs["langgraph"] = json.loads((out / "report.json").read_text())["run_id"]
    # `make screenshots` points this at docs/screenshots; otherwise they stay with the test run.
    artifacts = Path(os.environ.get("CASEFORGE_SCREENSHOTS") or tmp / "screenshots")
    artifacts.mkdir(parents=True, exist_ok=True)
    suites = {"support-refund": suite, "xss": xss, "talk": tmp / "talk", "langgraph": graph}
    return Served("", store, suites, runs, artifacts)


def _model_user_run(suite: Path, store: str, runner: CliRunner) -> str:
    """A run whose customer is played by a model, answered from recorded wire responses, so
    its trials carry the simulated user's usage and cost apart from the agent's."""
    import respx

    from tests.run.model_user import MODEL_USER, customer_replies

    (suite / "cases").mkdir(parents=True)
    shutil.copy(REPO / "tests" / "run" / "talk" / "talk_agent.py", suite / "talk_agent.py")
    (suite / "caseforge.yaml").write_text(
        "name: talk\nagent: {callable: 'talk_agent:run'}\ntrials: 1\n"
        "configs: {careful: {variant: careful}}\nsimulator: {model: gpt-4.1-mini}\n",
        encoding="utf-8",
    )
    (suite / "cases" / "model-customer.yaml").write_text(MODEL_USER, encoding="utf-8")
    keys = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://llm.test/v1"}
    saved = {name: os.environ.get(name) for name in keys}
    os.environ.update(keys)
    try:
        with respx.mock:
            respx.post("http://llm.test/v1/chat/completions").mock(side_effect=customer_replies)
            out = suite.parent / "talk-out"
            done = runner.invoke(
                cli, ["run", str(suite), "-q", "--store", store, "--out", str(out)]
            )
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    assert done.exit_code == 0, done.output
    return str(json.loads((out / "report.json").read_text())["run_id"])


@pytest.fixture(scope="session")
def served(world: Served) -> Iterator[Served]:
    catalog = Catalog.open(list(world.suites.values()), world.store, reviewer="example-reviewer")
    url, server = start_server(catalog)
    yield Served(url, world.store, world.suites, world.runs, world.artifacts)
    server.should_exit = True  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def browser(world: Served) -> Iterator[object]:
    # After `world`, and closed with its module: Playwright's sync API keeps an event loop
    # running in this thread, and `asyncio.run` (every `caseforge run`) cannot start in one.
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})  # type: ignore[attr-defined]
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], f"script errors on the page: {errors}"
