"""Without the otel extra (OpenTelemetry's SDK and protobuf packages not importable in
caseforge's process): an in-process agent using OpenTelemetry's API keeps running, and a
command agent exporting protobuf is refused, each said once in the run's warnings; its
spans checks are not judged, never failed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT, TIMEOUT_S, write_toy_suite
from tests.tracing.test_remote import COMMAND_AGENT

DRIVER = """
import json, sys

class NoExtra:  # as if caseforge[otel] were not installed: the API alone
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("opentelemetry.sdk", "opentelemetry.proto", "google.protobuf")):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, NoExtra())
from caseforge.api.run import execute_run
import asyncio
result = asyncio.run(execute_run(sys.argv[1], {"store": sys.argv[2], "agent": sys.argv[3]}))
trial = result.reports[0].cases[0].trials[0]
print(json.dumps({"warnings": result.warnings, "status": trial.status.value,
                  "checks": {c.name: c.status.value for c in trial.checks}}))
"""

API_AGENT = """
from opentelemetry import trace

tracer = trace.get_tracer("api-only")


def run(input, ctx):
    with tracer.start_as_current_span("handle"):
        return {"output": {}, "reply": "done", "tool_calls": []}
"""


def run_without_extra(tmp_path: Path, agent: str) -> dict[str, object]:
    suite = write_toy_suite(
        tmp_path / "suite",
        [{"id": "one", "input": {"lookups": 1}, "split": "dev"}],
        {"name": "no-extra", "agent": {"callable": "api_agent:run"}, "timeout_s": 300},
        expect={
            "reply": {"mode": "exact", "value": "done"},
            "trace": {"mode": "spans", "must_have": ["*"]},
        },
        files={"api_agent.py": API_AGENT, "cmd_agent.py": COMMAND_AGENT},
    )
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(suite), f"sqlite:///{tmp_path / 's.db'}", agent],
        cwd=suite,
        env={"PYTHONPATH": f"{suite}:{REPO_ROOT}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_an_in_process_agent_runs_and_the_warning_says_what_to_install(tmp_path: Path) -> None:
    found = run_without_extra(tmp_path, "api_agent:run")
    assert found["checks"] == {"reply": "pass", "trace": "not_judged"}
    assert found["status"] == "incomplete"
    [warning] = [w for w in found["warnings"] if "opentelemetry-sdk" in w]  # type: ignore[union-attr]
    assert "opentelemetry-sdk is not installed" in warning and "caseforge[otel]" in warning


def test_a_command_agents_protobuf_is_refused_saying_so(tmp_path: Path) -> None:
    found = run_without_extra(tmp_path, f"cmd:{sys.executable} cmd_agent.py")
    assert found["checks"] == {"reply": "pass", "trace": "not_judged"}
    [warning] = [w for w in found["warnings"] if "opentelemetry-proto" in w]  # type: ignore[union-attr]
    assert "caseforge[otel]" in warning and "http/json" in warning
