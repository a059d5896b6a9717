"""Start-up budgets: which modules a command imports before it does anything, read from
``sys.modules`` in a process of its own (deterministic, unlike a stopwatch). The heavy
packages are one shared set, ``caseforge.imports.HEAVY_MODULES``: a dependency added later
joins it, and these tests hold every command to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from caseforge.cli.root import COMMANDS
from caseforge.imports import HEAVY_MODULES
from tests.helpers import caseforge_process

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import contextlib, io, json, sys
sys.argv = ["caseforge", *json.loads(sys.argv[1])]
from caseforge.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def imported(*argv: str) -> set[str]:
    """The top-level packages `caseforge ARGV` has imported by the time it is done."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help_import_no_heavy_package(argv: list[str]) -> None:
    assert imported(*argv) & HEAVY_MODULES == set()


def test_help_lists_every_command_without_importing_one() -> None:
    loaded = imported("--help")
    assert "caseforge" in loaded
    done = caseforge_process("--help", env={"COLUMNS": "200"})
    for name, command in COMMANDS.items():
        assert name in done.stdout
        assert command.help.split("\n")[0][:40] in done.stdout


def test_each_commands_help_is_the_one_help_lists() -> None:
    """The root --help lists COMMANDS' texts: each must be its command's own help."""
    for name, command in COMMANDS.items():
        loaded = command.load()
        assert (loaded.help or "").split("\n\n")[0].strip() == command.help, name


def test_validate_of_the_starter_suite_imports_no_model_stats_server_or_cluster(
    tmp_path: Path,
) -> None:
    made = caseforge_process("init", str(tmp_path / "suite"))
    assert made.returncode == 0, made
    loaded = imported("validate", str(tmp_path / "suite"))
    assert "caseforge" in loaded and "ruamel" in loaded  # it did validate
    assert loaded & HEAVY_MODULES <= {"numpy", "datasketch"}  # near-duplicates at scale
    assert not loaded & {"openai", "scipy", "fastapi", "ray"}


def test_importers_load_pyarrow_and_inspect_ai_only_for_the_formats_that_need_them(
    tmp_path: Path,
) -> None:
    data = REPO / "tests" / "interop" / "data"
    loaded = imported("import", "inspect", str(data / "capitals.csv"), "--out", str(tmp_path / "a"))
    assert (tmp_path / "a" / "IMPORT.md").is_file()  # it did import
    assert not loaded & {"pyarrow", "inspect_ai"}
    loaded = imported("import", "table", str(data / "tickets.csv"), "--out",
                      str(tmp_path / "b"), "--map", "input.ticket=body")  # fmt: skip
    assert (tmp_path / "b" / "IMPORT.md").is_file()
    assert not loaded & {"pyarrow", "inspect_ai"}
    loaded = imported("import", "promptfoo", str(data / "promptfoo" / "travel"), "--out",
                      str(tmp_path / "c"))  # fmt: skip
    assert (tmp_path / "c" / "IMPORT.md").is_file()
    assert not loaded & {"pyarrow", "inspect_ai"}
    # Its javascript checks are compiled in the embedded V8 (a syntax error is the case's
    # mistake, said by validate), never run; a config without any loads no V8 at all.
    assert "py_mini_racer" in loaded
    plain = tmp_path / "plain.yaml"
    plain.write_text(
        "prompts: ['{{q}}']\nproviders: [echo]\n"
        "tests: [{vars: {q: hi}, assert: [{type: contains, value: hi}]}]\n",
        encoding="utf-8",
    )
    loaded = imported("import", "promptfoo", str(plain), "--out", str(tmp_path / "d"))
    assert (tmp_path / "d" / "IMPORT.md").is_file()
    assert not loaded & {"pyarrow", "inspect_ai", "py_mini_racer"}


PYTEST_PROBE = """
import json, os, sys

def test_probe():
    with open(os.environ["PROBE_OUT"], "w", encoding="utf-8") as out:
        json.dump(sorted(sys.modules), out)
"""
# What `import caseforge.pytest_plugin` loads of caseforge: the package root's own light
# modules (its public names load on first use) and the entry module.
PLUGIN_ROOT = {
    "caseforge", "caseforge._version", "caseforge.imports", "caseforge.errors",
    "caseforge.jsontypes", "caseforge.pytest_plugin",
}  # fmt: skip


def pytest_modules(tmp_path: Path, *argv: str, exit_code: int = 0) -> set[str]:
    """The modules a pytest run has loaded by the time its one test runs (no plugin is
    loaded from an entry point: the plugins come from ``-p``)."""
    (tmp_path / "test_probe.py").write_text(PYTEST_PROBE, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CASEFORGE"))}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PROBE_OUT=str(out), PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *argv, "test_probe.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == exit_code, done.stdout + done.stderr
    return set(json.loads(out.read_text(encoding="utf-8")))


def test_the_pytest_plugin_imports_nothing_beyond_pytest_until_a_suite_is_named(
    tmp_path: Path,
) -> None:
    """It loads in every pytest run of everyone who installs caseforge."""
    bare = pytest_modules(tmp_path)
    with_plugin = pytest_modules(tmp_path, "-p", "caseforge.pytest_plugin")
    added = with_plugin - bare
    assert {m for m in added if m.split(".")[0] == "caseforge"} == PLUGIN_ROOT
    others = {m.split(".")[0] for m in added} - {"caseforge"}
    assert others <= set(sys.stdlib_module_names), others  # no third-party package at all
    assert not {m.split(".")[0] for m in with_plugin} & HEAVY_MODULES


def test_the_pytest_plugin_loads_caseforge_once_a_suite_is_named(tmp_path: Path) -> None:
    made = caseforge_process("init", str(tmp_path / "suite"))
    assert made.returncode == 0, made
    loaded = pytest_modules(  # the starter's order-status case fails, as it is meant to
        tmp_path, "-p", "caseforge.pytest_plugin", "--caseforge", "suite", exit_code=1
    )
    assert "caseforge.pytest_plugin.session" in loaded


def test_a_run_imports_opentelemetry_only_when_something_asks_for_it(tmp_path: Path) -> None:
    """No OTLP endpoint and an agent that does not use OpenTelemetry: a run (the starter's
    stub agent) never imports it, though the otel extra is installed."""
    made = caseforge_process("init", str(tmp_path / "suite"))
    assert made.returncode == 0, made
    store = f"sqlite:///{tmp_path / 'store.db'}"
    loaded = imported("run", str(tmp_path / "suite"), "--store", store, "--trials", "1")
    assert "sqlalchemy" in loaded  # it did run
    assert "opentelemetry" not in loaded
