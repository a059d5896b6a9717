"""Mistakes a user makes, each asserted on its exit code (the README's table), its one-line
message naming the file, field or flag, and the absence of a traceback.

Every row runs the real CLI on a small suite whose run and baseline are made once."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caseforge.cli import app

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]

CASES = [
    {
        "id": "a",
        "input": {},
        "tags": ["must-pass"],
        "expect": {
            "category": {"mode": "exact", "value": "refund"},
            "flags": {"mode": "exact_set", "values": []},
        },
    },
    {"id": "b", "input": {}, "expect": {"category": {"mode": "exact", "value": "refund"}}},
]
CONFIG = {
    "name": "mistakes",
    "agent": {"callable": "tests.run.toy_agent:run"},
    "trials": 2,
    "gate": {"rules": [{"metric": "pass_rate", "no_significant_drop": True}]},
}


def write_suite(root: Path, config: dict[str, object] | None = None) -> Path:
    (root / "cases").mkdir(parents=True, exist_ok=True)
    (root / "caseforge.yaml").write_text(
        json.dumps({**CONFIG, **(config or {})}, indent=1), encoding="utf-8"
    )
    for case in CASES:
        (root / "cases" / f"{case['id']}.yaml").write_text(json.dumps(case), encoding="utf-8")
    return root


@dataclass
class World:
    tmp: Path
    suite: Path
    store: str
    report: Path
    baseline: Path
    run_id: str
    http: str = ""  # a local server: /loop redirects to itself, /v1 answers as a judge

    def variant(self, name: str, config: dict[str, object]) -> Path:
        return write_suite(self.tmp / name, config)


class _Server(BaseHTTPRequestHandler):
    """``POST /loop``: a redirect to itself. ``POST /v1/chat/completions``: a judge that
    finds every fact conveyed."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.startswith("/loop"):
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        verdict = {"facts": [{"index": 0, "verdict": "conveyed", "reason": "it says so"}]}
        message = {"role": "assistant", "content": json.dumps(verdict)}
        body = json.dumps(
            {
                "id": "c1", "object": "chat.completion", "created": 0, "model": "fake-judge",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        ).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        yield _world(tmp_path_factory, f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()


def _world(tmp_path_factory: pytest.TempPathFactory, http: str) -> World:
    tmp = tmp_path_factory.mktemp("mistakes")
    suite = write_suite(tmp / "suite")
    store = f"sqlite:///{tmp / 'store.db'}"
    out = tmp / "out"
    done = runner.invoke(app, ["run", str(suite), "--quiet", "--store", store, "--out", str(out)])
    assert done.exit_code == 0, done.output
    report = out / "report.json"
    baseline = tmp / "baseline.json"
    made = runner.invoke(app, ["baseline", str(report), "--write", str(baseline)])
    assert made.exit_code == 0, made.output
    run_id = json.loads(report.read_text(encoding="utf-8"))["run_id"]
    return World(tmp, suite, store, report, baseline, run_id, http)


@dataclass
class Mistake:
    name: str
    argv: Callable[[World], list[str]]
    code: int
    says: str
    env: dict[str, str] = field(default_factory=dict)


def gate_with(rules: list[dict[str, object]], name: str) -> Callable[[World], list[str]]:
    def argv(w: World) -> list[str]:
        variant = w.variant(name, {"gate": {"rules": rules}})
        return ["gate", str(w.report), "--baseline", str(w.baseline), "--suite", str(variant)]

    return argv


def validate_with(config: dict[str, object], name: str) -> Callable[[World], list[str]]:
    return lambda w: ["validate", str(w.variant(name, config))]


def run_with(*flags: str) -> Callable[[World], list[str]]:
    return lambda w: ["run", str(w.suite), "--quiet", "--store", w.store, *flags]


def validate_case(text: str, name: str) -> Callable[[World], list[str]]:
    def argv(w: World) -> list[str]:
        suite = w.variant(name, {})
        (suite / "cases" / "zz.yaml").write_text(text, encoding="utf-8")
        return ["validate", str(suite)]

    return argv


def with_files(name: str, files: dict[str, str], *argv: str) -> Callable[[World], list[str]]:
    """A variant suite with extra files; ``{suite}`` in argv is its folder."""

    def make(w: World) -> list[str]:
        suite = w.variant(name, {})
        for rel, text in files.items():
            (suite / rel).parent.mkdir(parents=True, exist_ok=True)
            (suite / rel).write_text(text, encoding="utf-8")
        return [a.replace("{suite}", str(suite)) for a in argv]

    return make


def in_tmp(*argv: str, files: dict[str, str] | None = None) -> Callable[[World], list[str]]:
    def make(w: World) -> list[str]:
        for rel, text in (files or {}).items():
            (w.tmp / rel).write_text(text, encoding="utf-8")
        return [a.replace("{tmp}", str(w.tmp)) for a in argv]

    return make


def _with_checks(w: World, name: str, source: str) -> list[str]:
    suite = w.variant(name, {"checks": "checks.py"})
    (suite / "checks.py").write_text(source, encoding="utf-8")
    return ["validate", str(suite)]


def _dangling(w: World) -> list[str]:
    suite = w.variant("e2", {})
    link = suite / "cases" / "gone.yaml"
    if not link.is_symlink():
        link.symlink_to(w.tmp / "was-here.yaml")
    return ["validate", str(suite)]


CASE_A = "id: a\ninput: {}\nexpect: {x: {mode: exact, value: 1}}\n"
MANY_CASES = "".join(
    json.dumps({"id": f"m{i}", "input": {}, "expect": {"x": {"mode": "exact", "value": 1}}}) + "\n"
    for i in range(1001)
)


def stopped_run(w: World) -> str:
    """A copy of the world's report marked as a stopped run."""
    data = json.loads(w.report.read_text(encoding="utf-8"))
    data["status"] = "stopped"
    path = w.tmp / "stopped.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


BAD_MODE = (
    "from typing import Literal\nfrom caseforge import CheckMode\n\n\n"
    "class Mine(CheckMode):\n    mode: Literal['mine']\n"
    "    def grade(self, a): ...\n"
)

BOMB = (
    "id: bomb\ninput:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))
    + "expect: {category: {mode: exact, value: refund}}\n"
)
DEEP = (
    "id: deep\ninput:\n  x: " + "[" * 3000 + "]" * 3000 + "\n"
    "expect: {category: {mode: exact, value: refund}}\n"
)
DEEP_JSONL = (
    '{"id": "deep", "expect": {"category": {"mode": "exact", "value": "refund"}}, "input": '
    + "[" * 3000
    + "]" * 3000
    + "}\n"
)
BOMB_CONFIG = (
    "name: mistakes\nagent: {callable: 'tests.run.toy_agent:run'}\ndescription_of:\n"
    + BOMB.split("input:\n")[1].split("expect:")[0]
)


MISTAKES = [
    Mistake(
        "report --out under a file",
        lambda w: ["report", str(w.report), "--out", str(w.tmp / "afile.txt" / "r.html")],
        5,
        "cannot write",
    ),
    Mistake(
        "gate an unfinished run",
        lambda w: ["gate", stopped_run(w), "--baseline", str(w.baseline)],
        2,
        "is stopped: finish it with `caseforge run SUITE --resume",
    ),
    Mistake(
        "baseline of an unfinished run",
        lambda w: ["baseline", stopped_run(w), "--write", str(w.tmp / "b2.json")],
        2,
        "before writing a baseline",
    ),
    Mistake(
        "rescore an unknown run",
        lambda w: ["rescore", "nope", "--store", w.store],
        2,
        "no run 'nope' in the store",
    ),
    Mistake(
        "show an unknown run",
        lambda w: ["show", "nope", "--store", w.store],
        2,
        "no run 'nope' in the store",
    ),
    Mistake(
        "compare a report.json that is not there",
        lambda w: ["compare", str(w.report), str(w.tmp / "missing.json")],
        2,
        "missing.json: report not found",
    ),
    Mistake(
        "run --fixtures with an unknown mode",
        run_with("--fixtures", "sometimes"),
        2,
        "--fixtures",
    ),
    Mistake("run with a misspelt option", run_with("--trails", "3"), 2, "No such option"),
    Mistake("an unknown command", lambda w: ["valdate", str(w.suite)], 2, "No such command"),
    Mistake(
        "a check mode without its strength",
        lambda w: _with_checks(w, "e3", BAD_MODE),
        1,
        "checks.Mine: declare `strength`",
    ),
    Mistake(
        "an oracles module that fails, used by no case",
        with_files(
            "e1",
            {
                "oracles.py": "raise RuntimeError('boom')\n",
                "caseforge.yaml": json.dumps({**CONFIG, "oracles": "oracles.py"}),
            },
            "validate",
            "{suite}",
        ),
        1,
        "importing the oracles module failed: RuntimeError('boom')",
    ),
    Mistake(
        "a dangling symlink among the cases",
        lambda w: _dangling(w),
        1,
        "gone.yaml: a dangling link (to ",  # no fake :0:0 position
    ),
    Mistake(
        "history of a case no run has",
        lambda w: ["history", str(w.suite), "no-such-case", "--store", w.store],
        2,
        "no case 'no-such-case' in the last",
    ),
    Mistake(
        "a duplicate case id",
        with_files("d1", {"cases/dup.yaml": CASE_A}, "validate", "{suite}"),
        1,
        "dup.yaml:1:1: id: duplicate id 'a': also in",
    ),
    Mistake(
        "an oracle module that does not import",
        with_files(
            "d2",
            {
                "oracles.py": "def broken(:\n",
                "caseforge.yaml": json.dumps({**CONFIG, "oracles": "oracles.py"}),
                "cases/o.yaml": "id: o\ninput: {}\nexpect: {x: {mode: exact, value: 1, "
                "oracle: price}}\n",
            },
            "validate",
            "{suite}",
        ),
        1,
        "importing the oracles module failed: SyntaxError",
    ),
    Mistake(
        "an oracle nobody registered",
        with_files(
            "d3",
            {
                "oracles.py": "from caseforge.oracle import oracle\n",
                "caseforge.yaml": json.dumps({**CONFIG, "oracles": "oracles.py"}),
                "cases/o.yaml": "id: o\ninput: {}\nexpect: {x: {mode: exact, value: 1, "
                "oracle: price}}\n",
            },
            "validate",
            "{suite}",
        ),
        1,
        "expect.x.oracle: unknown oracle 'price' (registered: none)",
    ),
    Mistake(
        "a misspelt oracle",
        with_files(
            "d3b",
            {
                "oracles.py": "from caseforge.oracle import oracle\n\n"
                "@oracle('price')\ndef price(input):\n    return 1\n",
                "caseforge.yaml": json.dumps({**CONFIG, "oracles": "oracles.py"}),
                "cases/o.yaml": "id: o\ninput: {}\nexpect: {x: {mode: exact, value: 1, "
                "oracle: prise}}\n",
            },
            "validate",
            "{suite}",
        ),
        1,
        "expect.x.oracle: unknown oracle 'prise' (did you mean 'price'?) (registered: price)",
    ),
    Mistake(
        "an agent module that does not exist",
        lambda w: [
            "run",
            str(w.variant("d4", {"agent": {"callable": "nope_module:run"}})),
            "-q",
            "--store",
            w.store,
        ],
        1,
        "d4/caseforge.yaml:4:15: agent.callable: 'nope_module:run': cannot import",
    ),
    Mistake(
        "an agent module that does not exist, named with its field",
        lambda w: [
            "run",
            str(w.variant("d4b", {"agent": {"callable": "nope_module:run"}})),
            "-q",
            "--store",
            w.store,
        ],
        1,
        "agent.callable: 'nope_module:run': cannot import 'nope_module'",
    ),
    Mistake(
        "a workspace_setup hook that is not in its module",
        lambda w: [
            "run",
            str(w.variant("d4c", {"workspace_setup": "tests.run.toy_agent:nope"})),
            "-q",
            "--store",
            w.store,
        ],
        1,
        "workspace_setup: 'tests.run.toy_agent:nope': 'tests.run.toy_agent' has no 'nope'",
    ),
    Mistake(
        "an agent callable that is not callable",
        lambda w: [
            "run",
            str(w.variant("d4d", {"agent": {"callable": "json:__name__"}})),
            "-q",
            "--store",
            w.store,
        ],
        1,
        "agent.callable: 'json:__name__' is not callable",
    ),
    # A wrong path is a usage error (2), never the code CI reads as a regression, and a
    # position that is not known is left out (it was printed as a fake `nowhere:0:0`).
    Mistake(
        "a suite folder that does not exist",
        in_tmp("validate", "{tmp}/nowhere"),
        2,
        "nowhere: suite folder not found (give the folder holding caseforge.yaml)",
    ),
    Mistake(
        "history of a folder that is no suite",
        in_tmp("history", "{tmp}/nowhere"),
        2,
        "nowhere: suite folder not found",
    ),
    # An input caseforge cannot read is a usage error (2), never 1, which CI reads as a
    # regression; a newer one says to upgrade.
    Mistake(
        "a report.json of another schema version",
        in_tmp("report", "{tmp}/old.json", files={"old.json": '{"schema_version": 99}'}),
        2,
        "old.json: written by a newer caseforge (report schema_version 99; this one reads 2): "
        "upgrade caseforge",
    ),
    Mistake(
        "a report file that is not JSON",
        in_tmp("report", "{tmp}/bad.json", files={"bad.json": "nope"}),
        2,
        "bad.json: the report is not JSON",
    ),
    Mistake(
        "plan with a rate above 1",
        in_tmp("plan", "--p", "2", "--delta", "0.1"),
        2,
        "--p and --delta must be between 0 and 1",
    ),
    Mistake(
        "audit --private of a missing folder",
        lambda w: ["audit", str(w.suite), "--private", str(w.tmp / "no-such-store")],
        2,
        "no-such-store: no such folder",
    ),
    Mistake(
        "retire an unknown case",
        lambda w: ["retire", str(w.variant("d5", {})), "zz", "--reason", "gone"],
        2,
        "no case with id 'zz'",
    ),
    Mistake(
        "a checks module that is missing",
        lambda w: ["validate", str(w.variant("d6", {"checks": "nope.py"}))],
        1,
        "checks: checks module",
    ),
    Mistake(
        "a case with no check",
        validate_case("id: zz\ninput: {}\nexpect: {}\n", "c1"),
        1,
        "zz.yaml:3:9: expect: a case with no check always passes",
    ),
    Mistake(
        "a number check given a string",
        validate_case("id: zz\ninput: {}\nexpect:\n  n: {mode: number, value: '20'}\n", "c2"),
        1,
        "expect.n.value: Input should be a valid number",
    ),
    Mistake(
        "a misspelt shorthand key",
        validate_case("id: zz\ninput: {}\nexpect:\n  reply: {must_inlcude: [x]}\n", "c3"),
        1,
        "expect.reply.must_inlcude: unknown key 'must_inlcude' (did you mean 'must_include'?)",
    ),
    Mistake(
        "tab indentation",
        validate_case("id: zz\ninput: {}\nexpect:\n\treply: {must_include: [x]}\n", "c4"),
        1,
        "zz.yaml:4:1: YAML syntax error: found character that cannot start any token: a tab",
    ),
    Mistake(
        "an unknown mode",
        validate_case("id: zz\ninput: {}\nexpect:\n  x: {mode: exct, value: 1}\n", "c5"),
        1,
        "expect.x.mode: unknown mode 'exct' (did you mean 'exact'?); expected one of: exact,",
    ),
    Mistake(
        "a misspelt field of a check",
        validate_case(
            "id: zz\ninput: {}\nexpect:\n  x: {mode: regex, value: a, case_sensitiv: false}\n",
            "c5b",
        ),
        1,
        "zz.yaml:4:45: expect.x.case_sensitiv: unknown field 'case_sensitiv' "
        "(did you mean 'case_sensitive'?); see `caseforge schema` for the fields",
    ),
    Mistake(
        "a misspelt field of a span",
        validate_case(
            "id: zz\ninput: {}\nexpect:\n  x: {mode: spans, must_have: [{name: a, cont: 2}]}\n",
            "c5c",
        ),
        1,
        "expect.x.must_have.0.cont: unknown field 'cont' (did you mean 'count'?)",
    ),
    Mistake(
        "a value no member of a union takes",
        validate_with({"agent": {"command": 5}}, "c5d"),
        1,
        "caseforge.yaml:4:14: agent.command: expected a string or a list of strings (got 5)\nsuite",
    ),
    Mistake(
        "a check's value no member of a union takes",
        validate_case(
            "id: zz\ninput: {}\nexpect:\n  x: {mode: json, schema: 5}\n"
            "  y: {mode: spans, max_errors: [1]}\n",
            "c5e",
        ),
        1,
        "zz.yaml:5:32: expect.y.max_errors: expected an integer or a mapping of names to "
        "integers (got [1])\n",
    ),
    Mistake(
        "an empty span glob",
        validate_case('id: zz\ninput: {}\nexpect:\n  x: {mode: spans, must_have: [""]}\n', "c5f"),
        1,
        'zz.yaml:4:32: expect.x.must_have.0.name: an empty glob ("") matches no span: write a '
        "span name or a glob",
    ),
    Mistake(
        "an empty glob as a max_errors key",
        validate_case(
            'id: zz\ninput: {}\nexpect:\n  x: {mode: spans, max_errors: {"": 0}}\n', "c5g"
        ),
        1,
        'zz.yaml:4:32: expect.x.max_errors: a key is an empty glob ("") matches no span',
    ),
    Mistake(
        "a typo in caseforge.yaml",
        validate_with({"trails": 3}, "c6"),
        1,
        "trails: unknown key 'trails' (did you mean 'trials'?)",
    ),
    # A judge setting caseforge never reads must not look as if it did something.
    Mistake(
        "a judge setting caseforge does not have",
        validate_with({"judge": {"model": "m", "temperature": 0.2}}, "c7"),
        1,
        "judge.temperature: unknown key 'temperature'",
    ),
    Mistake(
        "synth's facts hook under judge:",
        validate_with({"judge": {"model": "m", "facts": "facts:describe"}}, "c8"),
        1,
        "judge.facts: unknown key 'facts'",
    ),
    # A typo in a gate rule would switch that part of the gate off.
    Mistake(
        "validate: unknown gate metric",
        validate_with({"gate": {"rules": [{"metric": "pass_rat", "min": 0.5}]}}, "v1"),
        1,
        "gate.rules.0.metric: unknown metric 'pass_rat' (did you mean 'pass_rate'?)",
    ),
    Mistake(
        "validate: unknown item field in a metric",
        validate_with(
            {"gate": {"rules": [{"metric": "items.flgs.recall", "no_significant_drop": True}]}},
            "v2",
        ),
        1,
        "did you mean 'items.flags.recall'?",
    ),
    Mistake(
        "validate: unknown cost metric",
        validate_with({"gate": {"rules": [{"metric": "cost_per_rnu", "max": 1}]}}, "v3"),
        1,
        "did you mean 'cost_per_run'?",
    ),
    Mistake(
        "validate: a tag no case carries",
        validate_with({"gate": {"rules": [{"tag": "must-pas"}]}}, "v4"),
        1,
        "gate.rules.0.tag: no case is tagged 'must-pas' (did you mean 'must-pass'?)",
    ),
    Mistake(
        "validate: a paired test on a metric that has none",
        validate_with(
            {"gate": {"rules": [{"metric": "cost_usd", "no_significant_drop": True}]}}, "v5"
        ),
        1,
        "gate.rules.0.no_significant_drop: 'cost_usd' has no paired test",
    ),
    Mistake(
        "gate: unknown metric is refused, not passed",
        gate_with([{"metric": "pass_rat", "min": 0.5}], "g1"),
        1,
        "gate.rules.0.metric: unknown metric 'pass_rat'",
    ),
    Mistake(
        "gate: unknown tag is refused, not passed",
        gate_with([{"tag": "must-pas"}], "g2"),
        1,
        "no case is tagged 'must-pas'",
    ),
    Mistake("gate: no rules", gate_with([], "g3"), 2, "no gate.rules to apply"),
    Mistake(
        "gate: --format html",
        lambda w: ["gate", str(w.report), "--baseline", str(w.baseline), "--format", "html"],
        2,
        "--format must be one of text, md, junit, github, gitlab, not 'html'",
    ),
    Mistake(
        "gate: missing baseline",
        lambda w: ["gate", str(w.report), "--baseline", str(w.tmp / "nope.json")],
        2,
        "nope.json: baseline not found",
    ),
    Mistake(
        "report: unknown format",
        lambda w: ["report", str(w.report), "--format", "pdf"],
        2,
        "--format must be one of",
    ),
    Mistake(
        "report: unknown run id",
        lambda w: ["report", "20990101-000000-000000", "--store", w.store],
        2,
        "no run '20990101-000000-000000' in the store",
    ),
    Mistake(
        "compare: unknown run id",
        lambda w: ["compare", w.run_id, "nope", "--store", w.store],
        2,
        "no run 'nope' in the store",
    ),
    Mistake("run: --trials 0", run_with("--trials", "0"), 2, "--trials must be at least 1"),
    # Issue 21, item 2: a billion trials was accepted, and nothing happened for minutes.
    Mistake(
        "run: --trials above the limit",
        run_with("--trials", "1000000000"),
        2,
        "--trials must be at most 10,000 (caseforge's limit per case), not 1,000,000,000",
    ),
    Mistake(
        "run: more than ten million case-trials in one invocation",
        with_files(
            "ten-million",
            {"cases/many.jsonl": MANY_CASES},
            "run",
            "{suite}",
            "-q",
            "--trials",
            "10000",
        ),
        2,
        "1,003 cases x 10,000 trials = 10,030,000 case-trials: one invocation runs at most "
        "10,000,000",
    ),
    Mistake(
        "caseforge.yaml: trials above the limit",
        validate_with({"trials": 20000}, "many-trials"),
        1,
        "trials: Input should be less than or equal to 10000",
    ),
    Mistake(
        "run: --concurrency -1",
        run_with("--concurrency", "-1"),
        2,
        "--concurrency must be at least 1, not -1",
    ),
    Mistake("run: --concurrency 0", run_with("--concurrency", "0"), 2, "--concurrency must be"),
    Mistake("run: --timeout 0", run_with("--timeout", "0"), 2, "--timeout must be more than 0"),
    Mistake("run: --timeout -5", run_with("--timeout", "-5"), 2, "--timeout must be more"),
    Mistake("run: --max-cost -1", run_with("--max-cost", "-1"), 2, "--max-cost must be 0 or"),
    Mistake(
        "run: --max-error-rate 2",
        run_with("--max-error-rate", "2"),
        2,
        "--max-error-rate must be from 0 to 1",
    ),
    Mistake("run: --split bogus", run_with("--split", "bogus"), 2, "--split must be dev, test"),
    Mistake("run: --case nope", run_with("--case", "nope"), 2, "--case: no such case"),
    Mistake(
        "run: --case misspelt",
        run_with("--case", "aa"),
        2,
        "--case: no such case in all: aa (did you mean 'a'?)",
    ),
    Mistake(
        "run: --tag nobody carries",
        run_with("--tag", "must-pas"),
        2,
        "--tag: no case in all is tagged must-pas (did you mean 'must-pass'?)",
    ),
    Mistake("run: --config nope", run_with("--config", "nope"), 2, "--config: unknown config nope"),
    Mistake(
        "run: an unclosed quote in --agent",
        run_with("--agent", 'cmd:python "x.py'),
        2,
        "--agent: cannot read the command",
    ),
    Mistake(
        "run: --resume an unknown run",
        run_with("--resume", "nope"),
        2,
        "no run 'nope' in the store",
    ),
    Mistake(
        "store: CASEFORGE_STORE is not a URL",
        lambda w: ["runs"],
        2,
        "'notaurl' is not a store URL",
        env={"CASEFORGE_STORE": "notaurl"},
    ),
    Mistake(
        "store: --store names no known database",
        lambda w: ["runs", "--store", "bogus://x"],
        2,
        "no database dialect 'bogus'",
    ),
    Mistake(
        "store: a driver name SQLAlchemy does not know",
        lambda w: ["runs", "--store", "postgresql+nosuchdriver://u:pw@127.0.0.1/db"],
        2,
        "no database dialect",
    ),
    Mistake(
        "store: a PostgreSQL URL whose driver is not installed (password hidden)",
        lambda w: ["runs", "--store", "postgresql+psycopg2://u:secret@127.0.0.1:1/db"],
        5,
        "postgresql+psycopg2://u:***@127.0.0.1:1/db: the database driver is not installed",
    ),
    Mistake(
        "store: a PostgreSQL server that is not there (password hidden)",
        lambda w: ["runs", "--store", "postgresql://u:secret@127.0.0.1:1/db"],
        5,
        "postgresql://u:***@127.0.0.1:1/db: cannot open the run store: connection failed",
    ),
    Mistake(
        "report latest on an empty store",
        lambda w: ["report", "latest", "--store", f"sqlite:///{w.tmp / 'empty.db'}"],
        2,
        "no runs in the store",
    ),
    # A store the user names is never given a folder: only the default .caseforge/ is made.
    Mistake(
        "store: its folder is a file",
        lambda w: ["run", str(w.suite), "--store", f"sqlite:///{w.tmp / 'afile.txt' / 's.db'}"],
        2,
        "afile.txt: the folder of the store sqlite:///",
    ),
    Mistake(
        "report latest where no run was ever stored (and no store is created)",
        lambda w: ["report", "latest", "--store", f"sqlite:///{w.tmp / 'never' / 'x.db'}"],
        2,
        "there is no store file yet (a run creates it",
    ),
    Mistake(
        "init into a folder that is not empty",
        lambda w: ["init", str(w.suite)],
        2,
        "is a folder that is not empty; `caseforge init` writes into a new or empty folder",
    ),
    Mistake(
        "init onto a file",
        lambda w: ["init", str(w.tmp / "afile.txt")],
        2,
        "afile.txt: is a file",
    ),
    Mistake(
        "init --example that is not shipped",
        lambda w: ["init", str(w.tmp / "new-suite"), "--example", "support_refund"],
        2,
        "--example 'support_refund' is not a shipped suite; choose one of: ac-clarifier",
    ),
    Mistake(
        "init under a file",
        lambda w: ["init", str(w.tmp / "afile.txt" / "suite")],
        5,
        "cannot create",
    ),
    Mistake(
        "show with --suite naming a suite whose store has no runs",
        lambda w: ["show", "latest", "--suite", str(w.variant("no-runs", {}))],
        2,
        "no runs in the store sqlite:///",
    ),
    # Mistakes found by someone else, trying caseforge fresh (see the issue-11 note).
    Mistake(
        "a date that does not exist in a case file",
        validate_case(
            "id: zz\ninput: {}\nexpect: {category: {mode: exact, value: x}}\nadded: 2026-02-30\n",
            "bad-date",
        ),
        1,
        "zz.yaml:4:8: added: '2026-02-30' is not a valid date or time",
    ),
    Mistake(
        "a time that does not exist in caseforge.yaml",
        with_files(
            "bad-time",
            {"caseforge.yaml": "name: t\ndescription: 2026-13-45\n"},
            "validate",
            "{suite}",
        ),
        1,
        "caseforge.yaml:2:14: description:",
    ),
    Mistake(
        "report --out naming a folder",
        lambda w: ["report", str(w.report), "--format", "json", "--out", str(w.tmp)],
        2,
        "is a folder; name a file to write",
    ),
    Mistake(
        "baseline --write naming a folder",
        lambda w: ["baseline", str(w.report), "--write", str(w.tmp)],
        2,
        "is a folder; name a file to write",
    ),
    Mistake(
        "store: a file that is not a database",
        in_tmp(
            "runs", "--store", "sqlite:///{tmp}/junk.db", files={"junk.db": "not a database\n" * 20}
        ),
        5,
        "cannot open the run store: file is not a database",
    ),
    Mistake(
        "store: sqlite:/// with no path (runs would vanish)",
        lambda w: ["run", str(w.suite), "--quiet"],
        2,
        "names no file, so every run would be lost",
        env={"CASEFORGE_STORE": "sqlite:///"},
    ),
    Mistake(
        "plan --n below 2",
        lambda w: ["plan", "--p", "0.8", "--delta", "0.1", "--n", "-5"],
        2,
        "--n must be 2 or more",
    ),
    Mistake(
        "plan --discordance without --paired",
        lambda w: ["plan", "--p", "0.8", "--delta", "0.1", "--discordance", "0.3"],
        2,
        "--discordance is for --paired",
    ),
    Mistake(
        "plan --n and --suite together",
        lambda w: ["plan", "--p", "0.8", "--delta", "0.1", "--n", "50", "--suite", str(w.suite)],
        2,
        "give --n or --suite, not both",
    ),
    Mistake(
        "synth tuples -n 0 (would empty the tuples file)",
        lambda w: ["synth", "tuples", str(w.suite), "-n", "0"],
        2,
        "-n must be from 1 to 100,000",
    ),
    Mistake(
        "a suite with no cases",
        lambda w: _no_cases(w),
        1,
        "the suite has no cases",
    ),
    Mistake(
        "audit --require-history outside git",
        lambda w: ["audit", str(w.suite), "--require-history"],
        5,
        "not in a git repository, so there is no history to audit",
    ),
    Mistake(
        "agent.callable without a colon",
        validate_with({"agent": {"callable": "my_agent.run"}}, "no-colon"),
        1,
        "agent.callable: 'my_agent.run' is not `module:function`",
    ),
    Mistake(
        "an outcome check with no outcome_probe configured",
        validate_case(
            "id: zz\ninput: {}\nexpect: {refund: {mode: outcome, value: null}}\n", "no-probe"
        ),
        1,
        "expect.refund: an outcome check needs `outcome_probe:`",
    ),
    Mistake(
        "validate --threshold above 1",
        lambda w: ["validate", str(w.suite), "--threshold", "2"],
        2,
        "--threshold must be above 0",
    ),
    Mistake(
        "gate --json with --format md",
        lambda w: [
            "gate",
            str(w.report),
            "--baseline",
            str(w.baseline),
            "--json",
            "--format",
            "md",
        ],
        2,
        "give --json or --format md, not both",
    ),
    Mistake(
        "--agent with no colon", run_with("--agent", "foo"), 2, "--agent 'foo': not module:callable"
    ),
    Mistake(
        "--agent cmd: with no command",
        run_with("--agent", "cmd:"),
        2,
        "--agent 'cmd:': the command is empty",
    ),
    Mistake(
        "--agent with an unknown scheme",
        run_with("--agent", "ftp://x/y"),
        2,
        "ftp:// is not a transport",
    ),
    Mistake(
        "--agent http:// with no host", run_with("--agent", "http://"), 2, "the URL names no host"
    ),
    Mistake(
        "--agent naming a missing function",
        run_with("--agent", "tests.run.toy_agent:nope"),
        2,
        "--agent: ",
    ),
    Mistake(
        "retire with an empty --reason",
        lambda w: ["retire", str(w.suite), "a", "--reason", " "],
        2,
        "retire needs a non-empty --reason",
    ),
    Mistake(
        "scan --lang that is not a language",
        in_tmp("scan", "{tmp}/t.txt", "--lang", "xx", files={"t.txt": "hi"}),
        2,
        "--lang 'xx'",
    ),
    Mistake(
        "verify a file that is not there",
        lambda w: ["verify", str(w.tmp / "nope.yaml"), str(w.tmp / "nope2.yaml")],
        2,
        "nope.yaml: no such file",
    ),
    Mistake("run --out naming a file", run_with("--out", "{afile}"), 2, "is a file; name a folder"),
    Mistake(
        "serve --token-uses 0 (the token could never be used)",
        lambda w: ["serve", str(w.suite), "--store", w.store, "--token-uses", "0"],
        2,
        "--token-uses must be 1 or more, not 0",
    ),
    Mistake(
        "serve --allow-host with a port",
        lambda w: ["serve", str(w.suite), "--store", w.store, "--allow-host", "box.lan:8471"],
        2,
        "--allow-host 'box.lan:8471': give a host name or an IP address without a port",
    ),
    Mistake(
        "schema --report with --suite",
        lambda w: ["schema", "--report", "--suite", str(w.suite)],
        2,
        "--suite adds a suite's check modes to the case schema; not with --report",
    ),
    # Issue 21, item 9: input too deep or too large, each one line naming file, line and limit.
    Mistake(
        "an alias bomb under input: (1 KB, nine levels of nine aliases)",
        lambda w: _with_case(w, "bomb", "bomb.yaml", BOMB.encode()),
        1,
        "bomb.yaml:8:12: input.a5.0: more than 100,000 values once its aliases are expanded",
    ),
    Mistake(
        "3,000 levels of nesting under input:",
        lambda w: _with_case(w, "deep", "deep.yaml", DEEP.encode()),
        1,
        "deep.yaml:3:104: input.x.0.0.…95 more….0: nested deeper than 100 levels",
    ),
    Mistake(
        "a JSONL case line nested 3,000 levels",
        lambda w: _with_case(w, "deep-jsonl", "bulk.jsonl", DEEP_JSONL.encode()),
        1,
        "bulk.jsonl:1:186: nested deeper than 100 levels of lists and mappings",
    ),
    Mistake(
        "an alias bomb in caseforge.yaml",
        with_files("bomb-config", {"caseforge.yaml": BOMB_CONFIG}, "validate", "{suite}"),
        1,
        "caseforge.yaml:9:12: description_of.a5.0: more than 100,000 values",
    ),
    Mistake(
        "run of a suite holding an alias bomb",
        lambda w: [
            "run",
            *_with_case(w, "bomb-run", "bomb.yaml", BOMB.encode())[1:],
            "-q",
            "--store",
            w.store,
        ],
        1,
        "bomb.yaml:8:12: input.a5.0: more than 100,000 values",
    ),
    # Item 10: the store.
    Mistake(
        "store: CASEFORGE_STORE naming a folder that does not exist (none is made)",
        lambda w: ["run", str(w.suite), "-q"],
        2,
        "never/dir: the folder of the store sqlite:///",
        env={"CASEFORGE_STORE": "sqlite:///{tmp}/never/dir/x.db"},
    ),
    Mistake(
        "store: a URL that does not parse keeps its password hidden",
        lambda w: ["runs", "--store", "postgresql://ci:s3cret@db:port/x"],
        2,
        "'postgresql://ci:***@db:port/x' is not a store URL",
    ),
    # Item 11: inputs caseforge cannot read are usage errors (2), never 1.
    Mistake(
        "report: a truncated report.json",
        lambda w: ["report", _truncated(w, w.report, "cut-report.json")],
        2,
        "cut-report.json: the report is not JSON",
    ),
    Mistake(
        "gate: a truncated baseline",
        lambda w: ["gate", str(w.report), "--baseline", _truncated(w, w.baseline, "cut.json")],
        2,
        "cut.json: the baseline is not JSON",
    ),
    Mistake(
        "gate: a baseline written by a newer caseforge",
        lambda w: ["gate", str(w.report), "--baseline", _newer_baseline(w)],
        2,
        "newer-baseline.json: written by a newer caseforge (baseline version 2; this one reads "
        "1): upgrade caseforge",
    ),
    Mistake(
        "report: a JSON array",
        in_tmp("report", "{tmp}/array.json", files={"array.json": "[1, 2]"}),
        2,
        "array.json: not a caseforge report: the file holds an array",
    ),
    Mistake(
        "gate: a JSON array as the baseline",
        lambda w: ["gate", str(w.report), "--baseline", _file(w, "array-b.json", "[]")],
        2,
        "array-b.json: not a caseforge baseline: the file holds an array",
    ),
    Mistake(
        "gate: a report.json given as the baseline",
        lambda w: ["gate", str(w.report), "--baseline", str(w.report)],
        2,
        "report.json: is a report.json, not a baseline: make the baseline from it with "
        "`caseforge baseline",
    ),
    Mistake(
        "run on a file",
        lambda w: ["run", str(w.tmp / "afile.txt"), "-q", "--store", w.store],
        2,
        "afile.txt: is a file, not a suite folder",
    ),
    Mistake(
        "run on a missing folder",
        lambda w: ["run", str(w.tmp / "nowhere"), "-q", "--store", w.store],
        2,
        "nowhere: suite folder not found",
    ),
    Mistake(
        "a case file that is not UTF-8 (its first bad byte named)",
        lambda w: _with_case(
            w, "latin1", "zz.yaml", "id: zz\ninput: {t: café}\n".encode("latin-1")
        ),
        1,
        "zz.yaml:2:15: not UTF-8 text: byte 0xe9",
    ),
    Mistake(
        "validate --fix of a suite with a case file that is not UTF-8",
        lambda w: [
            *_with_case(w, "latin1-fix", "zz.yaml", "id: zz\nalt_: {t: café}\n".encode("latin-1")),
            "--fix",
        ],
        1,
        "zz.yaml:2:14: not UTF-8 text: byte 0xe9",
    ),
    Mistake(
        "a symlink loop among the cases",
        lambda w: _loop(w),
        1,
        "loop.yaml: a symlink loop (it leads back to itself): fix or remove it",
    ),
    Mistake(
        "editors' lock and backup files in cases/ are left alone",
        lambda w: _editor_files(w),
        0,
        "valid",
    ),
    Mistake(
        "run --out under a file",
        run_with("--out", "{afile}/out"),
        2,
        "a file is in the way; name a folder",
    ),
    # The POOR items: each message says what is true, at its source.
    Mistake(
        "a duplicate key names both lines",
        validate_case(
            "id: zz\ninput: {}\nexpect:\n  x: {mode: exact, value: 1}\n  y: {mode: exact, "
            "value: 2}\n  x: {mode: exact, value: 3}\n",
            "dup-key",
        ),
        1,
        "zz.yaml:6:3: expect.x: duplicate key 'x' (first at line 4)",
    ),
    Mistake(
        "an HTTP agent that redirects to itself",
        lambda w: ["run", str(w.suite), "--store", w.store, "--agent", f"{w.http}/loop"],
        4,
        "HTTP 302 from http://127.0.0.1:",
    ),
    Mistake(
        "--agent 'http//127.0.0.1:8000'",
        run_with("--agent", "http//127.0.0.1:8000"),
        2,
        "--agent 'http//127.0.0.1:8000': not a URL (did you mean http://127.0.0.1:8000?)",
    ),
    Mistake(
        "--agent naming a module the standard library shadows",
        lambda w: _queue_agent(w),
        2,
        "the module 'queue' that Python imported is Python's own (",
    ),
    Mistake(
        "CASEFORGE_MODEL without a judge: block configures the judge",
        lambda w: _judged(w),
        0,
        "fake-judge (judge-v1",
        env={"CASEFORGE_MODEL": "fake-judge", "OPENAI_BASE_URL": "{http}/v1"},
    ),
    Mistake(
        "gate on a selection (--case) names it and what it lacks",
        lambda w: _gate_selection(w),
        2,
        "is a selection (--case b): it lacks 1 case(s) of the baseline (a)",
    ),
    Mistake(
        "compare of a run with itself",
        lambda w: ["compare", str(w.report), str(w.report)],
        0,
        "no difference: both sides are run",
    ),
    Mistake(
        "a scripted conversation longer than max_turns",
        validate_case(
            "id: zz\ninput: {}\nconversation:\n  max_turns: 2\n  script:\n    - say: one\n"
            "    - say: two\n    - say: three\nexpect: {category: {mode: exact, value: x}}\n",
            "long-script",
        ),
        1,
        "zz.yaml:6:5: conversation.script: 3 scripted messages, but max_turns is 2",
    ),
]


def _with_case(w: World, name: str, filename: str, content: bytes) -> list[str]:
    """``validate`` of a variant suite with one more case file, written as bytes."""
    suite = w.variant(name, {})
    (suite / "cases" / filename).write_bytes(content)
    return ["validate", str(suite)]


def _file(w: World, name: str, text: str) -> str:
    (w.tmp / name).write_text(text, encoding="utf-8")
    return str(w.tmp / name)


def _truncated(w: World, whole: Path, name: str) -> str:
    text = whole.read_text(encoding="utf-8")
    return _file(w, name, text[: len(text) // 2])  # cut off, as by a full disk


def _newer_baseline(w: World) -> str:
    data = json.loads(w.baseline.read_text(encoding="utf-8"))
    data["caseforge_baseline"] = 2
    return _file(w, "newer-baseline.json", json.dumps(data))


def _loop(w: World) -> list[str]:
    suite = w.variant("loop", {})
    link = suite / "cases" / "loop.yaml"
    if not link.is_symlink():
        link.symlink_to(link)
    return ["validate", str(suite)]


def _editor_files(w: World) -> list[str]:
    """What Emacs, macOS, Vim and office suites leave beside a case being edited."""
    suite = w.variant("editors", {})
    cases = suite / "cases"
    lock = cases / ".#a.yaml"
    if not lock.is_symlink():
        lock.symlink_to("user@host.12345:1700000000")  # an Emacs lock: a dangling link
    (cases / "._a.yaml").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X")
    (cases / "#a.yaml#").write_text("id: half-typed\n", encoding="utf-8")
    (cases / "a.yaml~").write_text("id: a\n", encoding="utf-8")
    (cases / ".a.yaml.swp").write_bytes(b"b0VIM 9.0\x00")
    (cases / "~$a.yaml").write_bytes(b"\x00lock")
    return ["validate", str(suite)]


def _queue_agent(w: World) -> list[str]:
    """``queue.py`` in the suite folder, and the standard library's ``queue`` imported
    already: Python hands back the latter."""
    suite = w.variant("queue-agent", {})
    (suite / "queue.py").write_text(
        "def run(input, ctx):\n    return {'output': {'category': 'refund'}}\n",
        encoding="utf-8",
    )
    return ["run", str(suite), "-q", "--store", w.store, "--agent", "queue:run"]


def _judged(w: World) -> list[str]:
    """A suite with a judge check and no ``judge:`` block, run with CASEFORGE_MODEL set."""
    suite = w.variant("judged", {})
    (suite / "cases" / "j.yaml").write_text(
        "id: j\ninput: {}\nexpect:\n  category: {mode: exact, value: refund}\n"
        "  reply: {mode: judge, values: [says it is a refund]}\n",
        encoding="utf-8",
    )
    return ["run", str(suite), "--store", w.store]


def _gate_selection(w: World) -> list[str]:
    """A run of `--case b` only, gated on the whole suite's baseline with a must-pass rule
    (case a carries the tag): it used to blame caseforge.yaml:0:0 for the tag."""
    out = w.tmp / "selection"
    ran = runner.invoke(
        app, ["run", str(w.suite), "-q", "--store", w.store, "--case", "b", "--out", str(out)]
    )
    assert ran.exit_code == 0, ran.output
    rules = {"gate": {"rules": [{"metric": "pass_rate", "no_significant_drop": True},
                                {"tag": "must-pass"}]}}  # fmt: skip
    variant = w.variant("selection-rules", rules)
    report = str(out / "report.json")
    return ["gate", report, "--baseline", str(w.baseline), "--suite", str(variant)]


# --- Issue 21: suite code that misbehaves, numbers and sizes from the agent ----------------

ORACLE_HEAD = "from caseforge.oracle import oracle\n\n@oracle('o')\ndef o(input):\n"
ORACLE_CASE = "id: oc\ninput: {n: 1}\nexpect: {x: {mode: exact, value: 1, oracle: o}}\n"


def with_oracle(name: str, body: str, **config: object) -> Callable[[World], list[str]]:
    """A variant suite whose oracle `o` runs ``body``; validate it (``--json`` for prints)."""

    def make(w: World) -> list[str]:
        suite = w.variant(name, {"oracles": "oracles.py", **config})
        (suite / "oracles.py").write_text(ORACLE_HEAD + body, encoding="utf-8")
        (suite / "cases" / "oc.yaml").write_text(ORACLE_CASE, encoding="utf-8")
        return ["validate", str(suite), *(["--json"] if "print" in body else [])]

    return make


def with_agent(name: str, source: str, *flags: str) -> Callable[[World], list[str]]:
    """A variant suite whose agent is ``agent.py``'s ``run``; run it."""

    def make(w: World) -> list[str]:
        suite = w.variant(name, {"agent": {"command": [sys.executable, "agent.py"]}})
        (suite / "agent.py").write_text(textwrap.dedent(source), encoding="utf-8")
        return ["run", str(suite), "--store", f"sqlite:///{w.tmp / (name + '.db')}", *flags]

    return make


def _cut_actual(w: World) -> list[str]:
    """Run an agent whose reply is 3 KB, then show the trial: the check keeps 2 KB of it."""
    argv = with_agent("big-reply", BIG_REPLY, "-q")(w)
    suite = Path(argv[1])
    case = {"id": "a", "input": {}, "expect": {"reply": {"mode": "regex", "value": "^ok"}}}
    for old in (suite / "cases").iterdir():
        old.unlink()
    (suite / "cases" / "a.yaml").write_text(json.dumps(case), encoding="utf-8")
    assert runner.invoke(app, argv).exit_code == 0
    return ["show", "latest", "a", "--store", argv[3]]


BIG_REPLY = """
    import json, sys
    json.load(sys.stdin)
    print(json.dumps({"output": {}, "reply": "ok " + "x" * 3000}))
"""
NAN_COST = """
    import json, sys
    json.load(sys.stdin)
    print('{"output": {"category": "refund"}, "usage": {"cost_usd": NaN}}')
"""

MISTAKES += [
    Mistake(
        "an oracle calling sys.exit(0) (validate said nothing and exited 0: 'valid')",
        with_oracle("oracle-exit", "    import sys\n    sys.exit(0)\n"),
        1,
        "oc.yaml:3:34: expect.x: oracle 'o' called sys.exit(0)",
    ),
    Mistake(
        "an oracle that never returns (validate hung)",
        with_oracle("oracle-hang", "    while True:\n        pass\n", oracle_timeout_s=2),
        1,
        "expect.x: oracle 'o' timed out after 2 s (oracle_timeout_s in caseforge.yaml)",
    ),
    Mistake(
        "an oracle that prints (validate --json's stdout stopped parsing)",
        with_oracle("oracle-print", "    print('thinking')\n    return 1\n"),
        0,
        "oracle o (case oc): thinking",
    ),
    Mistake(
        "an agent answering a NaN cost (the store refused it: exit 5, no report)",
        with_agent("nan-cost", NAN_COST),
        4,
        "invalid agent response at usage.cost_usd: Input should be a finite number",
    ),
    Mistake(
        "a 3 KB reply graded: the check keeps 2 KB and says where the rest is",
        _cut_actual,
        0,
        "(graded 3,003 bytes of reply; the result keeps 2 KB of it)",
    ),
]


@dataclass
class ProcessMistake:
    """A mistake that needs caseforge's own process: its signal handling, or an agent
    whose exit would end it. ``stop`` sends that signal once the agent has started, from a
    shell script that started caseforge in the background (as CI does)."""

    name: str
    agent: str
    code: int
    says: str
    flags: tuple[str, ...] = ()
    stop: str | None = None  # TERM or INT


SLOW_AGENT = """
    import json, pathlib, sys, time
    json.load(sys.stdin)
    pathlib.Path(__file__).with_name("started").touch()
    time.sleep(0.5)
    print(json.dumps({"output": {"category": "refund"}}))
"""
IN_PROCESS_EXIT = """
    import sys

    def run(input, ctx):
        sys.exit(3)

    async def interrupted(input, ctx):
        raise KeyboardInterrupt
"""

PROCESS_MISTAKES = [
    ProcessMistake(
        "SIGTERM to a run a script started in the background (it ran on and exited 0)",
        SLOW_AGENT,
        143,
        "interrupted (SIGTERM); the run is saved as stopped: resume with --resume",
        ("--trials", "40", "--concurrency", "1"),
        stop="TERM",
    ),
    ProcessMistake(
        "an agent calling sys.exit(3) (the run ended silently with 3, the budget code)",
        IN_PROCESS_EXIT,
        4,
        "the agent called sys.exit(3)",
        ("--agent", "agent:run"),
    ),
    ProcessMistake(
        "an async agent raising KeyboardInterrupt (it is the agent's failure, not Ctrl-C)",
        IN_PROCESS_EXIT,
        4,
        "the agent raised KeyboardInterrupt",
        ("--agent", "agent:interrupted"),
    ),
    ProcessMistake(
        "a command agent that floods stderr and fails: one line per case-trial, no flood",
        """
        import os, sys
        for _ in range(4096):
            os.write(2, b"noise " * 170 + b"\\n")
        os.write(2, b"the real reason\\n")
        sys.exit(2)
        """,
        4,
        "the agent command exited with status 2",
    ),
]


@pytest.mark.parametrize("mistake", PROCESS_MISTAKES, ids=[m.name for m in PROCESS_MISTAKES])
def test_a_mistake_in_caseforge_s_own_process(world: World, mistake: ProcessMistake) -> None:
    slug = "".join(c if c.isalnum() else "-" for c in mistake.name)[:40]
    suite = world.variant(slug, {"agent": {"command": [sys.executable, "agent.py"]}})
    (suite / "agent.py").write_text(textwrap.dedent(mistake.agent), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "caseforge", "run", str(suite), "--store",
            f"sqlite:///{suite / 'store.db'}", *mistake.flags]  # fmt: skip
    if mistake.stop is None:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        code, output = done.returncode, done.stdout + done.stderr
    else:
        errors = suite / "stderr.txt"
        script = (
            f"{shlex.join(argv)} >/dev/null 2>{shlex.quote(str(errors))} &\nP=$!\n"
            f"while [ ! -e {shlex.quote(str(suite / 'started'))} ]; do sleep 0.02; done\n"
            f"kill -{mistake.stop} $P\nwait $P\necho $?\n"
        )
        done = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        code, output = int(done.stdout.split()[-1]), errors.read_text(encoding="utf-8")
    assert "Traceback" not in output
    assert code == mistake.code, output
    assert mistake.says in output, output


def _no_cases(w: World) -> list[str]:
    suite = w.variant("no-cases", {})
    for case in (suite / "cases").iterdir():
        case.unlink()
    return ["validate", str(suite)]


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_a_mistake_is_one_line_with_its_exit_code(
    world: World, mistake: Mistake, monkeypatch: pytest.MonkeyPatch
) -> None:
    (world.tmp / "afile.txt").write_text("x", encoding="utf-8")
    for key, value in mistake.env.items():
        monkeypatch.setenv(
            key, value.replace("{tmp}", str(world.tmp)).replace("{http}", world.http)
        )
    argv = [a.replace("{afile}", str(world.tmp / "afile.txt")) for a in mistake.argv(world)]
    result = runner.invoke(app, argv)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{mistake.name}: raised {result.exception!r}"
    )
    assert "Traceback" not in result.output
    assert result.exit_code == mistake.code, f"{mistake.name}: {result.output}"
    assert mistake.says in result.output, result.output
    assert not (world.tmp / "never").exists(), "a command that only reads made a store"


def test_a_mistaken_run_records_nothing(world: World) -> None:
    before = runner.invoke(app, ["runs", "--store", world.store, "--json"]).output
    runner.invoke(app, ["run", str(world.suite), "--store", world.store, "--concurrency", "-1"])
    after = runner.invoke(app, ["runs", "--store", world.store, "--json"]).output
    assert json.loads(after) == json.loads(before)


def test_a_run_whose_agent_errors_exits_4_unless_the_rate_allows_it(world: World) -> None:
    broken = world.tmp / "broken"
    (broken / "cases").mkdir(parents=True)
    (broken / "caseforge.yaml").write_text(json.dumps({**CONFIG, "trials": 1}), encoding="utf-8")
    for i, behaviour in enumerate(["crash", "crash", "ok"]):
        case = {"id": f"c{i}", "input": {"behaviour": behaviour}}
        case["expect"] = {"category": {"mode": "exact", "value": "refund"}}
        (broken / "cases" / f"c{i}.yaml").write_text(json.dumps(case), encoding="utf-8")
    argv = ["run", str(broken), "--quiet", "--store", world.store]
    failed = runner.invoke(app, argv)
    assert failed.exit_code == 4, failed.output
    assert "2 of 3 case-trials were agent errors (67% > 10%, --max-error-rate)" in failed.output
    allowed = runner.invoke(app, [*argv, "--max-error-rate", "0.7"])
    assert allowed.exit_code == 0, allowed.output


def test_the_store_belongs_to_the_suite_and_ignores_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.gitrepo import git

    monkeypatch.delenv("CASEFORGE_STORE", raising=False)
    repo = tmp_path / "repo"
    suite = write_suite(repo / "suites" / "one")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "suite")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    done = runner.invoke(app, ["run", str(suite), "--quiet"])
    assert done.exit_code == 0, done.output
    assert (repo / ".caseforge" / "caseforge.db").is_file()
    assert not (elsewhere / ".caseforge").exists()
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""  # .caseforge/ ignores itself
    listed = runner.invoke(app, ["runs", str(suite), "--json"])
    [run] = json.loads(listed.output)
    assert run["suite"] == "mistakes" and run["dataset_dirty"] is False
    by_name = runner.invoke(app, ["runs", "mistakes"])
    assert "warning: 'mistakes' is not a suite folder" in by_name.output


def test_outside_git_a_command_without_suite_names_the_suites_that_have_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside a git repository a run keeps its runs beside its suite; `show latest` from
    the folder above finds no store there, and says which suite has one."""
    monkeypatch.delenv("CASEFORGE_STORE", raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    suite = write_suite(tmp_path / "my-suite")
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["run", str(suite), "--quiet"])
    assert done.exit_code == 0, done.output
    shown = runner.invoke(app, ["show", "latest"])
    assert shown.exit_code == 2
    assert "the suite my-suite has runs of its own: add --suite my-suite" in shown.output
    assert runner.invoke(app, ["show", "latest", "--suite", "my-suite"]).exit_code == 0


def test_compare_gate_and_resume_refuse_another_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.gitrepo import git

    monkeypatch.delenv("CASEFORGE_STORE", raising=False)
    repo = tmp_path / "repo"
    one = write_suite(repo / "one")
    two = write_suite(repo / "two")  # the same `name:` in another folder
    other = write_suite(repo / "other", {"name": "other"})
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "suites")
    store = ["--store", f"sqlite:///{tmp_path / 'store.db'}"]
    reports = {}
    for name, suite in (("one", one), ("two", two), ("other", other)):
        out = tmp_path / name
        ran = runner.invoke(app, ["run", str(suite), "-q", *store, "--out", str(out)])
        assert ran.exit_code == 0, ran.output
        reports[name] = out / "report.json"
    identity = json.loads(reports["one"].read_text(encoding="utf-8"))["suite_identity"]
    assert identity["name"] == "mistakes" and identity["path"] == "one"
    assert len(identity["root_commit"]) == 40 and str(tmp_path) not in json.dumps(identity)
    baseline = tmp_path / "baseline-two.json"
    runner.invoke(app, ["baseline", str(reports["two"]), "--write", str(baseline)])

    refused = runner.invoke(app, ["compare", str(reports["one"]), str(reports["other"])])
    assert refused.exit_code == 2 and "they are different suites" in refused.output
    same_name = runner.invoke(app, ["compare", str(reports["one"]), str(reports["two"])])
    assert same_name.exit_code == 2 and "at one in repository" in same_name.output
    forced = runner.invoke(app, ["compare", str(reports["one"]), str(reports["other"]), "--force"])
    assert forced.exit_code == 0, forced.output

    gated = runner.invoke(app, ["gate", str(reports["one"]), "--baseline", str(baseline)])
    assert gated.exit_code == 2 and "different suites" in gated.output
    ok = runner.invoke(app, ["gate", str(reports["two"]), "--baseline", str(baseline)])
    assert ok.exit_code == 0, ok.output

    old = json.loads(baseline.read_text(encoding="utf-8"))
    del old["suite_identity"]  # as written before identities existed
    baseline.write_text(json.dumps(old), encoding="utf-8")
    legacy = runner.invoke(app, ["gate", str(reports["one"]), "--baseline", str(baseline)])
    assert legacy.exit_code == 0, legacy.output
    assert "records no suite identity" in legacy.output


def test_resume_latest_ignores_another_folder_with_the_same_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from caseforge.store.db import RunStore
    from tests.gitrepo import git

    repo = tmp_path / "repo"
    one, two = write_suite(repo / "one"), write_suite(repo / "two")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "suites")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    runner.invoke(app, ["run", str(two), "-q", "--store", url])
    store = RunStore(url)
    [run] = store.list_runs()
    store.set_status(run.id, "stopped")  # two's run is unfinished
    resumed = runner.invoke(app, ["run", str(one), "-q", "--store", url, "--resume", "latest"])
    assert resumed.exit_code == 2 and "no unfinished run of suite 'mistakes'" in resumed.output
    again = runner.invoke(app, ["run", str(two), "-q", "--store", url, "--resume", "latest"])
    assert again.exit_code == 0, again.output


def test_tag_selects_the_cases_carrying_any_of_the_tags(world: World) -> None:
    out = world.tmp / "tagged"
    ran = runner.invoke(
        app,
        [
            "run",
            str(world.suite),
            "-q",
            "--store",
            world.store,
            "--tag",
            "must-pass",
            "--out",
            str(out),
        ],
    )
    assert ran.exit_code == 0, ran.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [c["id"] for c in report["cases"]] == ["a"]


def test_a_run_of_a_folder_that_is_not_a_suite_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEFORGE_STORE", raising=False)
    missing = tmp_path / "no-such-suite"
    result = runner.invoke(app, ["run", str(missing)])
    assert result.exit_code == 2 and "no-such-suite: suite folder not found" in result.output
    assert ":0:0" not in result.output
    assert not missing.exists(), "a store was made beside a suite that is not there"


def test_comparing_a_run_with_itself_says_so(world: World) -> None:
    result = runner.invoke(app, ["compare", str(world.report), str(world.report)])
    assert result.exit_code == 0
    assert f"warning: both sides are run {world.run_id}: nothing can differ" in result.output


def test_a_reader_that_closes_the_pipe_is_no_environment_error(tmp_path: Path) -> None:
    """`caseforge … | head -1`: the reader going away is not a store or disk fault (5). The
    command stops quietly with 141, as a shell reports one SIGPIPE stopped. The pipe's read
    end is closed before the command starts, so its first write meets a closed pipe."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "caseforge", "schema"],
            stdout=write, stderr=subprocess.PIPE, text=True, cwd=tmp_path, timeout=300,
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""  # no "Broken pipe" line, no "Exception ignored" at exit
