"""``caseforge import tau-bench``: a tau-bench-style agent benchmark's domain as a suite.

The checkout is read as tau-bench lays a domain out, under ``PATH/tau_bench/envs/DOMAIN``
(tau-bench's own checkout), ``PATH/envs/DOMAIN`` or ``PATH/DOMAIN``:

- ``data/*.json``: the database, one table a file (``orders.json``: ``{key: record}``);
  ``data/__init__.py`` (tau-bench's loader) is not needed;
- ``tools/*.py``: the tools, each a class with ``invoke(data, **kwargs)`` and ``get_info()``
  (its function schema), as tau-bench writes them (``from tau_bench.envs.tool import Tool``
  works without tau-bench installed: the import finds a stand-in); ``tools/__init__.py``,
  which only gathers them, is not read;
- the tasks: ``tasks_test.py`` (or ``tasks_train.py``, ``tasks_dev.py``: ``--tasks``), a list
  of tau-bench's ``Task(user_id, instruction, actions=[Action(name, kwargs)], outputs)``
  read in a process of its own with ``tau_bench.types`` stood in, or ``tasks.json``, the
  same as JSON objects;
- ``wiki.md``, the policy (optional), and ``LICENSE`` at ``PATH`` (or above the domain).

What the suite gets:

- the database and the tools under ``SUITE/tau/DOMAIN/``, with the source's licence beside
  them, and a module ``SUITE/tau_DOMAIN.py``: ``setup`` copies the database into each
  trial's workspace (``workspace_setup``), ``call(workspace, name, **kwargs)`` runs a tool
  on it for the user's agent, ``probe`` reads the records that changed (``outcome_probe``),
  ``user`` is the scripted user; the tools' schemas and the policy in ``SUITE/context/``;
- per task, a case: its ground-truth actions replayed on the database (in a process of its
  own: the checkout's code never runs in caseforge's) give the end state, an ``outcome``
  check on ``end_state`` (the records the task changes, compared field by field); the
  actions that changed the database become argument-level ``must_call``s (only those: a
  read the end state does not depend on is not required); the expected outputs a
  normalised, case-insensitive ``must_include`` on ``replies`` (each output said in any
  agent reply, as tau-bench accepts it); the instruction is said by
  the scripted user; ``group`` is the benchmark user, so one user's tasks stay on one side
  of the split.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caseforge.errors import DatasetError, UsageError
from caseforge.interop.ids import join, slugify
from caseforge.interop.report import ImportReport
from caseforge.interop.suite import SuiteWriter, source_name

FORMAT = "tau-bench"
MAX_TURNS = 30


@dataclass(frozen=True)
class TauImport:
    """What ``caseforge import tau-bench`` was asked for (``tasks``: ``test``, ``train``,
    ``dev`` or a file of the domain; None: ``tasks.json``, else ``tasks_test.py``)."""

    path: Path
    domain: str
    suite: Path
    tasks: str | None = None


def tool_files(folder: Path) -> list[Path]:
    """The domain's tool modules: ``tools/*.py`` but ``__init__.py`` (which only gathers
    them, with relative imports)."""
    return sorted(p for p in (folder / "tools").glob("*.py") if not p.name.startswith("_"))


def task_file(folder: Path, chosen: str | None) -> Path:
    """Where the tasks are: ``chosen`` (a split's name or a file of the domain), else
    ``tasks.json``, else ``tasks_test.py``."""
    if chosen is not None:
        named = folder / (f"tasks_{chosen}.py" if "." not in chosen else chosen)
        if not named.is_file():
            found = ", ".join(sorted(p.name for p in _task_files(folder))) or "none"
            raise UsageError(f"--tasks {chosen}: no {named} (the domain's task files: {found})")
        return named
    for name in ("tasks.json", "tasks_test.py"):
        if (folder / name).is_file():
            return folder / name
    return _task_files(folder)[0]


def _task_files(folder: Path) -> list[Path]:
    return sorted([*folder.glob("tasks.json"), *folder.glob("tasks_*.py")])


def domain_folder(path: Path, domain: str) -> Path:
    """Where the domain is in the checkout: ``envs/DOMAIN``, ``DOMAIN``, or ``path``."""
    for folder in (
        path / "tau_bench" / "envs" / domain,
        path / "envs" / domain,
        path / domain,
        path,
    ):
        if _task_files(folder) and (folder / "data").is_dir():
            return folder
    raise UsageError(
        f"{path}: no tau-bench domain {domain!r} here (looked for tau_bench/envs/{domain}/, "
        f"envs/{domain}/ and {domain}/ holding data/ and tasks_test.py or tasks.json)"
    )


def import_tau_bench(request: TauImport, dry_run: bool = False) -> ImportReport:
    """Read the domain, replay each task's actions, write the suite (unless ``dry_run``).

    Raises:
        UsageError: no such domain in the checkout.
        DatasetError: a task or table that is not what the layout says, a tool that fails
            on a task's own actions (named by task and action).
    """
    if not request.path.is_dir():
        raise UsageError(f"{request.path}: not found, or not a folder; check the path")
    domain = slugify(request.domain).replace("-", "_")
    folder = domain_folder(request.path, request.domain)
    source = task_file(folder, request.tasks)
    tasks = _tasks(source)
    tables = {
        p.stem: p.read_text(encoding="utf-8") for p in sorted((folder / "data").glob("*.json"))
    }
    tools = {p.name: p.read_text(encoding="utf-8") for p in tool_files(folder)}
    if not tools:
        raise UsageError(f"{folder / 'tools'}: no tools (*.py) here")
    replayed = _replay(folder, tasks)
    module = f"tau_{domain}"
    report = ImportReport(FORMAT, f"{request.path} ({request.domain})", str(request.suite))
    files: dict[str, str] = {
        f"tau/{domain}/data/{name}.json": text for name, text in tables.items()
    }
    files.update({f"tau/{domain}/tools/{name}": text for name, text in tools.items()})
    files[f"{module}.py"] = HOOKS.replace("DOMAIN", domain)
    files[f"context/tau-{domain}-tools.json"] = json.dumps(replayed["tools"], indent=2) + "\n"
    if (folder / "wiki.md").is_file():
        files[f"context/tau-{domain}-policy.md"] = (folder / "wiki.md").read_text(encoding="utf-8")
    above = [folder, *folder.parents][: len(folder.relative_to(request.path).parts) + 1]
    licence = next((p / "LICENSE" for p in reversed(above) if (p / "LICENSE").is_file()), None)
    if licence is not None:
        files[f"tau/{domain}/LICENSE"] = licence.read_text(encoding="utf-8")
    else:
        report.notes.append("no LICENSE in the checkout: check the benchmark's terms yourself")
    policy = " and the policy" if (folder / "wiki.md").is_file() else ""
    report.notes.append(
        f"tasks from {source.name}; the database, tools and licence are in tau/{domain}/, the "
        f"hooks in {module}.py, the tool schemas{policy} in context/; agents call a tool "
        f"with {module}.call(ctx.workspace, name, **kwargs)"
    )
    report.notes.append(
        "the user is scripted: it says the instruction, then stops. For tau-bench's "
        "model-played user, write `user: {model: true, instruction: ...}` and set `simulator:` "
        "in caseforge.yaml"
    )
    writer = SuiteWriter(
        request.suite,
        FORMAT,
        source_name(request.path, request.suite) + f"#{request.domain}",
        report,
        config={
            "description": f"tau-bench-style domain {request.domain}, imported.",
            "workspace_setup": f"{module}:setup",
            "outcome_probe": f"{module}:probe",
        },
        files=files,
    )
    if writer.existing:
        report.notes.append(
            f"an existing suite: its caseforge.yaml needs workspace_setup: {module}:setup and "
            f"outcome_probe: {module}:probe (not changed here)"
        )
    for number, (task, truth) in enumerate(zip(tasks, replayed["tasks"], strict=True)):
        item = report.item(f"task {number}", number)
        writes = [task["actions"][i] for i in truth["writes"]]
        expect: dict[str, object] = {"end_state": {"mode": "outcome", "value": truth["end_state"]}}
        item.map(
            f"end state: {sum(len(v) for v in truth['end_state'].values())} record(s) changed "
            "-> outcome end_state"
        )
        if writes:
            expect["tool_calls"] = {
                "must_call": [{"name": a["name"], "args": a.get("kwargs", {})} for a in writes]
            }
        others = len(task["actions"]) - len(writes)
        wrote = f"{len(writes)} write(s) -> must_call with their arguments" if writes else ""
        rest = (
            f"{others} that change nothing (reads, or refused), not required: the end state "
            "does not depend on them"
        )
        parts = [p for p in (wrote, rest if others else "") if p]
        item.map("actions: " + "; ".join(parts) if parts else "actions: none")
        outputs = [str(o) for o in task.get("outputs") or []]
        if outputs:
            # tau-bench accepts an output said in any agent reply, and only there: not the
            # last reply alone, nor the transcript, which holds the user's instruction too.
            expect["replies"] = {
                "mode": "must_include",
                "values": outputs,
                "normalize": True,
                "case_sensitive": False,
            }
            item.map(f"outputs: {len(outputs)} -> must_include on every agent reply, normalised")
        case: dict[str, object] = {
            "input": {},
            "conversation": {
                "max_turns": MAX_TURNS,
                "user": {
                    "callable": f"{module}:user",
                    "instruction": task["instruction"],
                    "facts": {"user_id": task["user_id"]},
                },
            },
            "expect": expect,
            "group": slugify(task["user_id"]),
            "provenance": {"actions": task["actions"], "user_id": task["user_id"]},
        }
        writer.add(item, join(slugify(request.domain), str(number)), case, number)
    return writer.write(dry_run)


def _tasks(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".py":
        tasks: object = _python_tasks(path)
    else:
        try:
            tasks = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    if not isinstance(tasks, list):
        raise DatasetError(f"{path}: expected an array of tasks")
    for number, task in enumerate(tasks):
        if not isinstance(task, dict):
            raise DatasetError(f"{path}: task {number}: expected an object")
        for key, kind in (("user_id", str), ("instruction", str), ("actions", list)):
            if not isinstance(task.get(key), kind):
                raise DatasetError(f"{path}: task {number}: {key}: expected a {kind.__name__}")
        for index, action in enumerate(task["actions"]):
            if not (isinstance(action, dict) and isinstance(action.get("name"), str)):
                raise DatasetError(f"{path}: task {number}: actions.{index}: needs a name")
    return tasks


def _python_tasks(path: Path) -> object:
    """tau-bench's tasks module, as JSON objects: read in a process of its own, with
    ``tau_bench.types``' ``Task`` and ``Action`` stood in."""
    return _child(LOAD_TASKS, path, None, "reading its tasks failed")


def _child(script: str, path: Path, given: str | None, failure: str) -> Any:
    """What ``script`` prints as JSON, run on ``path`` in a process of its own (the
    checkout's code never runs in caseforge's); its last line of stderr if it fails."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        input=given,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["it failed"])[-1]
        raise DatasetError(f"{path}: {failure}: {last}")
    return json.loads(done.stdout)


# Run in a child process: a tasks_*.py module's first list of tasks, as JSON.
LOAD_TASKS = textwrap.dedent(
    """
    import importlib.util, json, sys, types
    from pathlib import Path

    path = Path(sys.argv[1])

    class _Record:
        def __init__(self, **fields):
            self.fields = fields

    class Action(_Record):
        pass

    class Task(_Record):
        pass

    for name in ("tau_bench", "tau_bench.types"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["tau_bench.types"].Action = Action
    sys.modules["tau_bench.types"].Task = Task
    spec = importlib.util.spec_from_file_location("tau_tasks", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.exit(f"{type(exc).__name__}: {exc}")

    def plain(value):
        if isinstance(value, _Record):
            return {k: plain(v) for k, v in value.fields.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        return value

    for name, value in vars(module).items():
        if isinstance(value, list) and value and all(isinstance(v, Task) for v in value):
            json.dump(plain(value), sys.stdout)
            break
    else:
        sys.exit("no list of Task(...) in it")
    """
)


def _replay(folder: Path, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """The tools' schemas and, per task, its end state and the actions that wrote: computed
    by the checkout's own code in a process of its own."""
    result: dict[str, Any] = _child(
        REPLAY, folder, json.dumps(tasks), "replaying the tasks' actions failed"
    )
    return result


# Run in a child process: the checkout's tools, its database, each task's actions.
REPLAY = textwrap.dedent(
    """
    import copy, importlib.util, json, sys, types
    from pathlib import Path

    folder = Path(sys.argv[1])

    class Tool:  # tau-bench's base class, for `from tau_bench.envs.tool import Tool`
        pass

    for name in ("tau_bench", "tau_bench.envs", "tau_bench.envs.tool"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["tau_bench.envs.tool"].Tool = Tool

    tools = {}
    for path in sorted((folder / "tools").glob("*.py")):
        if path.name.startswith("_"):  # tools/__init__.py only gathers them
            continue
        spec = importlib.util.spec_from_file_location(f"tau_tool_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.exit(f"{path}: {type(exc).__name__}: {exc}")
        for value in vars(module).values():
            if isinstance(value, type) and hasattr(value, "invoke") and hasattr(value, "get_info"):
                info = value.get_info()
                name = info.get("function", info).get("name")
                tools[name] = (value, info)

    tables = sorted((folder / "data").glob("*.json"))
    seed = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in tables}

    def changed(before, after):
        out = {}
        for table in sorted(set(before) | set(after)):
            old, new = before.get(table, {}), after.get(table, {})
            diff = {k: new.get(k) for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)}
            if diff:
                out[table] = diff
        return out

    results = []
    for number, task in enumerate(json.load(sys.stdin)):
        data = copy.deepcopy(seed)
        writes = []
        for index, action in enumerate(task["actions"]):
            if action["name"] not in tools:
                sys.exit(f"task {number}: actions.{index}: no tool named {action['name']!r}")
            before = copy.deepcopy(data)
            try:
                tools[action["name"]][0].invoke(data, **action.get("kwargs", {}))
            except Exception as exc:
                sys.exit(f"task {number}: actions.{index} ({action['name']}): {exc!r}")
            if data != before:
                writes.append(index)
        results.append({"end_state": changed(seed, data), "writes": writes})
    json.dump({"tools": [info for _, info in tools.values()], "tasks": results}, sys.stdout)
    """
)

# SUITE/tau_DOMAIN.py: the hooks and the tool caller, standard library only.
HOOKS = '''"""The tau-bench-style domain DOMAIN, as `caseforge import tau-bench` wrote it: the hooks
caseforge.yaml names, the tools for the agent, and the scripted user. Rewritten by every
import; the database and the tools are in tau/DOMAIN/."""

import copy
import importlib.util
import json
import shutil
import sys
import threading
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent / "tau" / "DOMAIN"
DB = "tau-DOMAIN-db"
_TOOLS = {}
_LOADING = threading.Lock()  # trials run at once: one loads the tools, the others wait


def tools():
    """The tools by name: each a class with invoke(data, **kwargs) and get_info()."""
    with _LOADING:
        if not _TOOLS:
            base = types.ModuleType("tau_bench.envs.tool")
            base.Tool = type("Tool", (), {})
            for name in ("tau_bench", "tau_bench.envs"):
                sys.modules.setdefault(name, types.ModuleType(name))
            sys.modules.setdefault("tau_bench.envs.tool", base)
            found = {}
            for path in sorted((HERE / "tools").glob("*.py")):
                if path.name.startswith("_"):  # tools/__init__.py only gathers them
                    continue
                spec = importlib.util.spec_from_file_location(f"tau_DOMAIN_{path.stem}", path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                for value in vars(module).values():
                    if isinstance(value, type) and hasattr(value, "get_info"):
                        info = value.get_info()
                        found[info.get("function", info).get("name")] = value
            _TOOLS.update(found)  # all at once: never seen half loaded
    return _TOOLS


def _read(folder):
    tables = sorted(folder.glob("*.json"))
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in tables}


def setup(workspace, case):
    """workspace_setup: a fresh copy of the database in the trial's workspace."""
    shutil.copytree(HERE / "data", Path(workspace) / DB)


def call(workspace, name, **kwargs):
    """Run the tool `name` on the workspace's database, as the benchmark does; its answer."""
    folder = Path(workspace) / DB
    data = _read(folder)
    answer = tools()[name].invoke(data, **kwargs)
    for table, records in data.items():
        (folder / f"{table}.json").write_text(json.dumps(records, indent=2), encoding="utf-8")
    return answer


def probe(workspace, result, case):
    """outcome_probe: end_state, the records that differ from the seed database."""
    seed, now = _read(HERE / "data"), _read(Path(workspace) / DB)
    end = {}
    for table in sorted(set(seed) | set(now)):
        old, new = seed.get(table, {}), now.get(table, {})
        diff = {k: new.get(k) for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)}
        if diff:
            end[table] = copy.deepcopy(diff)
    return {"end_state": end}


def user(messages, instruction, facts):
    """The scripted user: says the instruction, then ends the conversation."""
    return instruction if not messages else None
'''
