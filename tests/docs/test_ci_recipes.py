"""The CI recipes under docs/ci/: both workflow files are valid against the schemas
check-jsonschema vendors (GitHub Actions, GitLab CI; never skipped, never downloaded), each
does what docs/ci/index.md says, the GitLab merge-request note is edited in place (against a
fake GitLab API on 127.0.0.1), and the shell recipe runs the support example, sharded, to
the gate's verdict."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import pytest
from ruamel.yaml import YAML

from tests.helpers import REPO_ROOT, TIMEOUT_S

CI = REPO_ROOT / "docs" / "ci"
GITHUB, GITLAB, RELEASE, SHELL = (
    CI / "github.yml", CI / "gitlab.yml", CI / "release.yml", CI / "caseforge-ci.sh"
)  # fmt: skip


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("schema", "files"),
    [("vendor.github-workflows", [GITHUB, RELEASE]), ("vendor.gitlab-ci", [GITLAB])],
)
def test_the_workflows_are_valid_against_their_published_schemas(
    schema: str, files: list[Path]
) -> None:
    """Against the schemas check-jsonschema ships; proxies that lead nowhere prove that
    nothing is downloaded."""
    nowhere = "http://127.0.0.1:9"
    env = {**os.environ, "HTTP_PROXY": nowhere, "HTTPS_PROXY": nowhere, "NO_PROXY": ""}
    env.update({k.lower(): v for k, v in env.items() if k.endswith("_PROXY")})
    checked = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok -- validation done" in checked.stdout


def test_github_tests_on_three_pythons_and_comments_once_on_the_pull_request() -> None:
    workflow = load(GITHUB)
    jobs = workflow["jobs"]
    assert jobs["test"]["strategy"]["matrix"]["python"] == ["3.11", "3.12", "3.13"]
    assert jobs["shard"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert str(workflow["env"]["SHARDS"]) == "4"
    gate = jobs["gate"]
    assert gate["needs"] == "shard" and gate["permissions"]["pull-requests"] == "write"
    steps = "\n".join(step.get("run", "") for step in gate["steps"])
    assert "--format github --out merged/gate.md" in steps
    comment = next(s for s in gate["steps"] if "comment" in s.get("name", ""))
    assert comment["if"].startswith("always()")  # a regression is worth a comment too
    assert "--method PATCH" in comment["run"] and "--method POST" in comment["run"]
    assert 'startswith(\\"$marker\\")' in comment["run"]  # finds its own comment to edit


def test_gitlab_shards_gates_and_reports_where_gitlab_shows_them() -> None:
    pipeline = load(GITLAB)
    assert pipeline["stages"] == ["test", "shard", "gate"]
    assert pipeline["test"]["parallel"]["matrix"] == [{"PYTHON": ["3.11", "3.12", "3.13"]}]
    assert pipeline["shard"]["parallel"] == 4
    assert "$CI_NODE_INDEX/$CI_NODE_TOTAL" in " ".join(pipeline["shard"]["script"])
    gate = pipeline["gate"]
    assert gate["needs"] == ["shard"]
    assert gate["artifacts"]["reports"] == {
        "junit": "merged/junit.xml",
        "codequality": "merged/gl-code-quality.json",
    }
    script = "\n".join(gate["script"])
    assert "--format gitlab --out merged/gl-code-quality.json" in script
    assert gate["script"][-1] == "exit $code"  # the gate's exit code ends the job


class FakeGitLab(BaseHTTPRequestHandler):
    """The merge-request notes API, as far as the note step uses it."""

    notes: ClassVar[list[dict[str, Any]]] = []
    calls: ClassVar[list[tuple[str, str]]] = []

    def _answer(self, data: object) -> None:
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> dict[str, Any]:
        assert self.headers["PRIVATE-TOKEN"] == "note-token"
        data: dict[str, Any] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        return data

    def do_GET(self) -> None:
        url = urlparse(self.path)
        self.calls.append(("GET", url.path))
        page = int(parse_qs(url.query)["page"][0])
        self._answer(self.notes if page == 1 else [])

    def do_POST(self) -> None:
        self.calls.append(("POST", self.path))
        note = {"id": len(self.notes) + 1, "body": self._body()["body"]}
        self.notes.append(note)
        self._answer(note)

    def do_PUT(self) -> None:
        self.calls.append(("PUT", self.path))
        note_id = int(self.path.rsplit("/", 1)[1])
        note = next(n for n in self.notes if n["id"] == note_id)
        note["body"] = self._body()["body"]
        self._answer(note)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def gitlab() -> Iterator[str]:
    FakeGitLab.notes = [{"id": 1, "body": "a reviewer's note"}]
    FakeGitLab.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitLab)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/v4"
    server.shutdown()
    thread.join()


def test_the_merge_request_note_is_posted_once_then_edited_in_place(
    gitlab: str, tmp_path: Path
) -> None:
    script = "\n".join(load(GITLAB)["gate"]["script"])
    note_step = next(line for line in load(GITLAB)["gate"]["script"] if "CASEFORGE_NOTE" in line)
    assert note_step in script
    (tmp_path / "merged").mkdir()
    env = {
        **os.environ,
        "CI_API_V4_URL": gitlab,
        "CI_PROJECT_ID": "7",
        "CI_MERGE_REQUEST_IID": "3",
        "CASEFORGE_NOTE_TOKEN": "note-token",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    for verdict in ("regression", "pass"):
        (tmp_path / "merged" / "gate.md").write_text(f"### caseforge gate: {verdict}\n")
        (tmp_path / "merged" / "report.md").write_text("### caseforge: the run\n")
        done = subprocess.run(
            ["bash", "-e", "-c", note_step], cwd=tmp_path, env=env, capture_output=True,
            text=True, timeout=TIMEOUT_S,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    notes = "/api/v4/projects/7/merge_requests/3/notes"
    written = [call for call in FakeGitLab.calls if call[0] != "GET"]
    assert written == [("POST", notes), ("PUT", f"{notes}/2")]
    assert [n["body"].splitlines()[:2] for n in FakeGitLab.notes] == [
        ["a reviewer's note"],
        ["<!-- caseforge gate -->", "### caseforge gate: pass"],  # the same note, edited
    ]
    without = subprocess.run(
        ["bash", "-e", "-c", note_step], cwd=tmp_path, capture_output=True, text=True,
        env={k: v for k, v in env.items() if k != "CASEFORGE_NOTE_TOKEN"}, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert without.returncode == 0 and "the merge request gets no note" in without.stdout


def test_the_shell_recipe_runs_shards_merges_and_gates_the_support_example(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(
        REPO_ROOT / "examples" / "support-refund", root / "examples" / "support-refund",
        ignore=shutil.ignore_patterns(".caseforge", "__pycache__"),
    )  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CASEFORGE", "OPENAI"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
    )  # fmt: skip
    for argv in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "x"]):
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)

    def recipe(*argv: str, **settings: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(SHELL), *argv], cwd=root, env={**env, **settings},
            capture_output=True, text=True, timeout=TIMEOUT_S,
        )  # fmt: skip

    suite = "examples/support-refund"
    good = recipe(SHARDS="2", RUN_OPTIONS="--no-judge", OUT="good", BASELINE="none.json")
    assert good.returncode == 2, good.stdout + good.stderr  # no baseline yet: a usage error
    made = subprocess.run(
        [sys.executable, "-m", "caseforge", "baseline", "good/merged/report.json", "--write",
         f"{suite}/baseline.json"], cwd=root, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    again = recipe(SHARDS="2", RUN_OPTIONS="--no-judge", OUT="again")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "merged 2 shard(s) of run ci-" in again.stdout and "gate: pass" in again.stdout
    junit = (root / "again" / "junit.xml").read_text(encoding="utf-8")
    assert len(re.findall(r"<testcase ", junit)) == 86
    assert (
        (root / "again" / "gate.md")
        .read_text(encoding="utf-8")
        .startswith("### caseforge gate: ✅ pass")
    )
    # As separate jobs would: shard 1 of 2, shard 2 of 2, then the gate, with v1 (worse).
    jobs = {"CONFIG": "v1", "RUN_OPTIONS": "--no-judge", "OUT": "v1", "RUN_ID": "ci-78"}
    assert recipe("shard", "1", "2", **jobs).returncode == 0
    assert recipe("shard", "2", "2", **jobs).returncode == 0
    gated = recipe("gate", **jobs)
    assert gated.returncode == 1, gated.stdout + gated.stderr  # a regression
    assert "gate: regression (run ci-78 vs baseline" in gated.stdout
