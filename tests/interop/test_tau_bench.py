"""`caseforge import tau-bench` on a small fictional domain in tau-bench's layout
(tests/interop/data/tau): the suite validates, a scripted agent doing each task's
ground-truth actions passes every case, and one that skips the writes fails them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from caseforge.api import run_suite
from tests.interop.helpers import DATA, cli, files_of

TAU = DATA / "tau"
AGENT = '''
"""A scripted agent: it does the task's ground-truth actions through the suite's tools."""

import json
from pathlib import Path

import tau_railshop

TASKS = json.loads(Path(__file__).with_name("tasks.json").read_text())
TASKS = {t["instruction"]: t for t in TASKS}
SKIP_WRITES = False


def run(input, ctx):
    task = TASKS[ctx.messages[-1]["content"]]
    calls, said = [], []
    for action in task["actions"]:
        if SKIP_WRITES and action["name"] != "get_order_details":
            continue
        answer = tau_railshop.call(ctx.workspace, action["name"], **action["kwargs"])
        calls.append({"name": action["name"], "args": action["kwargs"], "result": answer})
        said.append(answer)
    reply = " ".join(said + task["outputs"]) or "done"
    return {"output": {}, "reply": reply, "tool_calls": calls, "done": True}
'''


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tau") / "railshop"
    done = cli("import", "tau-bench", TAU, "--domain", "railshop", "--out", root)
    assert done.exit_code == 0, done.output
    shutil.copy(TAU / "envs" / "railshop" / "tasks.json", root / "tasks.json")
    (root / "scripted_agent.py").write_text(AGENT, encoding="utf-8")
    (root / "faulty_agent.py").write_text(
        AGENT.replace("SKIP_WRITES = False", "SKIP_WRITES = True"), encoding="utf-8"
    )
    return root


def test_the_suite_holds_the_domain(suite: Path) -> None:
    assert (suite / "tau" / "railshop" / "LICENSE").read_text().startswith("Fictional licence")
    schemas = json.loads((suite / "context" / "tau-railshop-tools.json").read_text())
    assert {s["function"]["name"] for s in schemas} == {
        "get_order_details", "cancel_pending_order", "update_email"
    }  # fmt: skip
    assert (suite / "context" / "tau-railshop-policy.md").is_file()
    config = YAML(typ="safe").load((suite / "caseforge.yaml").read_text())
    assert config["workspace_setup"] == "tau_railshop:setup"
    assert config["outcome_probe"] == "tau_railshop:probe"
    case = YAML(typ="safe").load((suite / "cases" / "railshop-0.yaml").read_text())
    assert case["group"] == "ada-lind-1"
    # Only the write is required, with its arguments; the read is not.
    assert case["expect"]["tool_calls"] == {
        "must_call": [
            {"name": "cancel_pending_order",
             "args": {"order_id": "#R100", "reason": "ordered by mistake"}}
        ]
    }  # fmt: skip
    assert case["expect"]["end_state"]["value"]["orders"]["#R100"]["status"] == "cancelled"
    assert case["expect"]["replies"] == {
        "mode": "must_include", "values": ["18.00"], "normalize": True, "case_sensitive": False
    }  # fmt: skip
    assert cli("validate", suite).exit_code == 0


def test_a_correct_agent_passes_every_case_and_a_faulty_one_does_not(
    suite: Path, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    [good] = run_suite(suite, agent="scripted_agent:run", trials=1, judge=False, store=store)
    assert good.summary.pass_rate == 1.0, [
        (c.id, [k.reason for t in c.trials for k in t.checks if k.status != "pass"])
        for c in good.cases
    ]
    [bad] = run_suite(suite, agent="faulty_agent:run", trials=1, judge=False, store=store)
    failing = {c.id for c in bad.cases if c.passed == 0}
    assert failing == {"railshop-0", "railshop-2"}  # the two tasks that write
    reasons = [k.reason for c in bad.cases for t in c.trials for k in t.checks
               if k.name == "end_state" and k.status == "fail"]  # fmt: skip
    assert any("status" in r and "cancelled" in r for r in reasons)  # a readable field diff


def test_reimport_and_dry_run(suite: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(suite, copy)
    before = files_of(copy)
    done = cli("import", "tau-bench", TAU, "--domain", "railshop", "--out", copy, "--dry-run")
    assert done.exit_code == 0, done.output
    assert files_of(copy) == before


def test_mistakes(tmp_path: Path) -> None:
    done = cli("import", "tau-bench", TAU, "--domain", "airline", "--out", tmp_path / "s")
    assert done.exit_code == 2 and "no tau-bench domain 'airline'" in done.output
    broken = tmp_path / "broken"
    shutil.copytree(TAU, broken)
    tasks = broken / "envs" / "railshop" / "tasks.json"
    data = json.loads(tasks.read_text())
    data[1]["actions"][0]["name"] = "refund_everything"
    tasks.write_text(json.dumps(data))
    done = cli("import", "tau-bench", broken, "--domain", "railshop", "--out", tmp_path / "s")
    assert done.exit_code == 1
    assert "task 1: actions.0: no tool named 'refund_everything'" in done.output
    assert not (tmp_path / "s").exists()


def test_the_tools_load_once_for_trials_that_start_together(suite: Path) -> None:
    """Trials run at once: a trial asking for the tools while another is loading them must
    wait and see every tool, never a half-loaded table (it got a KeyError)."""
    import importlib.util
    import threading
    import types

    spec = importlib.util.spec_from_file_location("tau_railshop_fresh", suite / "tau_railshop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    loading, asked = threading.Event(), threading.Event()
    real = importlib.util.spec_from_file_location
    files = {"n": 0}

    def slow_spec(name: str, path: Path) -> object:
        files["n"] += 1
        if files["n"] == 2:  # one tool loaded, more to come: the other trial asks now
            loading.set()
            asked.wait(timeout=2)  # it answers at once if not made to wait for the rest
        return real(name, path)

    module.importlib = types.SimpleNamespace(util=types.SimpleNamespace(
        spec_from_file_location=slow_spec, module_from_spec=importlib.util.module_from_spec
    ))  # fmt: skip
    seen: list[set[str]] = []

    def second() -> None:
        loading.wait(timeout=60)
        seen.append(set(module.tools()))
        asked.set()

    other = threading.Thread(target=second)
    other.start()
    first = set(module.tools())
    other.join(timeout=60)
    assert seen == [first] and "get_order_details" in first and len(first) == 3


def checkout_layout(tmp_path: Path) -> Path:
    """The fixture's domain laid out as tau-bench's own checkout is: the package's
    tau_bench/envs/DOMAIN/, tools gathered by a tools/__init__.py with relative imports, a
    data/__init__.py loader, the tasks as Task(...) objects in tasks_test.py and
    tasks_train.py, the licence at the checkout's root."""
    root = tmp_path / "tau-bench"
    domain = root / "tau_bench" / "envs" / "railshop"
    shutil.copytree(TAU / "envs" / "railshop", domain)
    shutil.copy(TAU / "LICENSE", root / "LICENSE")
    tasks = json.loads((domain / "tasks.json").read_text(encoding="utf-8"))
    (domain / "tasks.json").unlink()
    (domain / "data" / "__init__.py").write_text("import json\n\ndef load_data():\n    ...\n")
    gather = "".join(
        f"from .{p.stem} import *  # noqa\n" for p in sorted((domain / "tools").glob("*.py"))
    )
    (domain / "tools" / "__init__.py").write_text(gather + "ALL_TOOLS = []\n")

    def python(values: list[dict[str, object]], name: str) -> str:
        def task(t: dict[str, object]) -> str:
            actions = ", ".join(
                f"Action(name={a['name']!r}, kwargs={a['kwargs']!r})"
                for a in t["actions"]  # type: ignore[attr-defined]
            )
            return (
                f"    Task(annotator='0', user_id={t['user_id']!r}, "
                f"instruction={t['instruction']!r}, actions=[{actions}], "
                f"outputs={t['outputs']!r}),\n"
            )

        body = "".join(task(t) for t in values)
        return f"from tau_bench.types import Task, Action\n\n{name} = [\n{body}]\n"

    (domain / "tasks_test.py").write_text(python(tasks, "TASKS_TEST"), encoding="utf-8")
    (domain / "tasks_train.py").write_text(python(tasks[:1], "TASKS_TRAIN"), encoding="utf-8")
    return root


def test_tau_benchs_own_layout_imports_as_its_json_form_does(suite: Path, tmp_path: Path) -> None:
    root = checkout_layout(tmp_path)
    out = tmp_path / "from-checkout"
    done = cli("import", "tau-bench", root, "--domain", "railshop", "--out", out)
    assert done.exit_code == 0, done.output
    assert "tasks from tasks_test.py" in done.output
    for name in ("railshop-0", "railshop-1", "railshop-2"):
        mine = YAML(typ="safe").load((out / "cases" / f"{name}.yaml").read_text())
        theirs = YAML(typ="safe").load((suite / "cases" / f"{name}.yaml").read_text())
        for kept in (mine, theirs):
            kept["provenance"].pop("imported_from")
            kept.pop("split", None)
        assert mine == theirs, name
    assert (out / "tau" / "railshop" / "LICENSE").read_text().startswith("Fictional licence")
    assert not (out / "tau" / "railshop" / "tools" / "__init__.py").exists()
    trained = tmp_path / "train"
    done = cli("import", "tau-bench", root, "--domain", "railshop", "--tasks", "train",
               "--out", trained)  # fmt: skip
    assert done.exit_code == 0, done.output
    assert [p.name for p in (trained / "cases").iterdir()] == ["railshop-0.yaml"]
    done = cli("import", "tau-bench", root, "--domain", "railshop", "--tasks", "dev",
               "--out", tmp_path / "dev")  # fmt: skip
    assert done.exit_code == 2
    assert "--tasks dev: no" in done.output and "tasks_test.py, tasks_train.py" in done.output


def test_a_tool_that_does_not_load_is_named(tmp_path: Path) -> None:
    root = checkout_layout(tmp_path)
    tool = root / "tau_bench" / "envs" / "railshop" / "tools" / "update_email.py"
    tool.write_text("import not_a_module_anywhere\n" + tool.read_text(encoding="utf-8"))
    done = cli("import", "tau-bench", root, "--domain", "railshop", "--out", tmp_path / "s")
    assert done.exit_code == 1
    assert "update_email.py: ModuleNotFoundError" in done.output, done.output
    tasks = root / "tau_bench" / "envs" / "railshop" / "tasks_test.py"
    tasks.write_text("TASKS = [\n")
    done = cli("import", "tau-bench", root, "--domain", "railshop", "--out", tmp_path / "s")
    assert done.exit_code == 1
    assert "tasks_test.py: reading its tasks failed: SyntaxError" in done.output, done.output


CHATTY_USER = """
def user(messages, instruction, facts):
    \"\"\"Says the instruction, then asks one more thing before it stops.\"\"\"
    if not messages:
        return instruction
    return "Anything else I should know?" if len(messages) == 2 else None
"""
TALKATIVE = AGENT.replace(
    "def run(input, ctx):\n",
    """def run(input, ctx):
    if len(ctx.messages) > 1:  # the user's second message: the outputs were said already
        return {"output": {}, "reply": "No, that is all. Goodbye!", "done": True}
""",
).replace('"tool_calls": calls, "done": True}', '"tool_calls": calls}')


def test_an_output_said_in_the_first_of_several_replies_passes_as_tau_bench_has_it(
    suite: Path, tmp_path: Path
) -> None:
    """tau-bench's reward takes an output from any agent reply: the agent says it in its
    first reply and only says goodbye in its last, and the case passes."""
    copy = tmp_path / "chatty"
    shutil.copytree(suite, copy)
    (copy / "chatty_user.py").write_text(CHATTY_USER, encoding="utf-8")
    (copy / "talkative_agent.py").write_text(TALKATIVE, encoding="utf-8")
    for path in (copy / "cases").glob("*.yaml"):
        path.write_text(path.read_text().replace("tau_railshop:user", "chatty_user:user"))
    store = f"sqlite:///{tmp_path / 'store.db'}"
    [report] = run_suite(copy, agent="talkative_agent:run", trials=1, judge=False, store=store)
    said = {
        (c.id, k.name): (k.status, k.reason)
        for c in report.cases for t in c.trials for k in t.checks if k.name == "replies"
    }  # fmt: skip
    assert said[("railshop-0", "replies")] == ("pass", '"18.00" in reply 1')
    assert report.summary.pass_rate == 1.0
    assert all(len(t.transcript) == 4 for c in report.cases for t in c.trials)  # two turns
