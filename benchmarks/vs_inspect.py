"""caseforge against Inspect AI: the same cases, the same instant answers, one machine, one run.

Both tools get N cases (default 2,000), one trial each, and an agent that answers at once
with a text derived from the case's input; each case is graded by one substring check on
that text. Every figure is the median of --repeat (default 3) measurements; each
measurement is one whole command in a fresh process, the two tools alternating (and which
goes first alternating too), so a busy moment of the shared machine falls on both. Printed:
each tool's wall time, CPU time and peak RSS, the ratios Inspect / caseforge (target: at
least 20× on wall time), and the start-up of `caseforge --version` and `inspect --version`
beside `python -c pass`, measured in the same run.

How each is measured. A small wrapper process starts the command, times it from start to
exit, then reads `resource.getrusage(RUSAGE_CHILDREN)`: peak RSS (`ru_maxrss`, the largest
process it waited for) and CPU (user + system). The wrapper has no other children, so
nothing measured earlier counts (as in tests/run/test_misbehaving_agents.py).

caseforge (the project's .venv python, i.e. the python running this script):
  a suite folder in a temp dir with `caseforge.yaml`, the agent module and N case files,
  one YAML file each as users keep them (`cases/case-00042.yaml`: input `{message: Please
  confirm order ORD-00042.}`, `expect: {reply: {must_include: [ORD-00042]}}`), `trials: 1`;
  the agent is an in-process Python callable that finds the order number in the message and
  returns `{"output": {"order": ...}, "reply": "Your order ORD-00042 is confirmed."}`. The
  command is `python -m caseforge run SUITE --quiet --no-judge --store sqlite:///TMP/store.db`,
  start-up included, as a user pays it; every result goes into the SQLite store (a fresh
  store each time). Afterwards the store must hold N passing results.

Inspect AI (a separate venv, benchmarks/.venv-inspect, made here when missing: inspect-ai
must not become one of caseforge's dependencies, and it raises the pydantic floor):
  the same N samples (`input` the same message, `target` the same order number) in one
  JSONL file read by `json_dataset`, which is how Inspect users keep a dataset (Inspect
  reads a dataset from one file, or from code; this only makes its loading cheaper);
  the solver `generate()`; the `mockllm/model` model with `custom_outputs=` a callable that
  finds the order number in the last user message and returns
  `ModelOutput.from_content("mockllm", "Your order ORD-00042 is confirmed.")`; the scorer
  `includes()`. The command is the CLI, `inspect eval task.py --log-dir TMP/logs
  --display none` (from the task's folder), in a fresh process, start-up included.
  Everything else is Inspect's default: its concurrency (max_connections 10; caseforge's
  default is 8; neither matters for an instant agent) and its log, one `.eval` file holding
  every sample (input, messages, output, score, events), written as the run goes: what a
  default user run writes, and the counterpart of caseforge's store of every result.
  `--display none` matches caseforge's `--quiet` (no progress display); with Inspect's
  default display, one 2,000-case run took the same time within noise (30.9 s vs 31.2 s).
  Afterwards the log's header must say `success`, N samples and accuracy 1.0.

What had to be worked around in Inspect:
  - mockllm fills in token usage when an output has none by counting tokens with tiktoken's
    o200k_base encoding, which tiktoken downloads from the internet on first use. Offline,
    the first sample fails with a ConnectionError, the task stops, and `inspect eval` still
    exits 0 (hence the check of the log's header). Each mock output therefore carries its
    usage (10 in, 6 out), as a real provider's answer does; nothing is counted or fetched.
  - On Python 3.11, `inspect eval /absolute/path/task.py` fails ("Non-relative patterns are
    unsupported": it globs the path under the working directory), so it runs from the
    task's folder as `inspect eval task.py`, as a user would.
  - `custom_outputs` cannot be given on the command line (`-M` takes strings), so the task
    file names its model: `Task(..., model=get_model("mockllm/model", custom_outputs=...))`.

Both live in temp folders outside any git repository (so caseforge warns that it knows the
suite by its name alone). benchmarks/run_phases.py times the phases of caseforge's side.

Usage: python benchmarks/vs_inspect.py [--cases N] [--repeat R] [--startup-repeat S]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
INSPECT_VENV = HERE / ".venv-inspect"
INSPECT_SPEC = "inspect-ai==0.3.285"  # the version measured for benchmarks/RESULTS.md

# Started by the wrapper: times the command and reads its peak RSS and CPU once it exited.
WRAPPER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], cwd=sys.argv[1], capture_output=True, text=True)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mb": usage.ru_maxrss / 1024, "code": done.returncode,
                  "stdout": done.stdout[-4000:], "stderr": done.stderr[-4000:]}))
"""

CASEFORGE_AGENT = '''
import re

ORDER = re.compile(r"ORD-[0-9]+")


def run(input, ctx):
    """Answers at once: the order number it was asked about, in a sentence."""
    order = ORDER.search(input["message"]).group(0)
    return {"output": {"order": order}, "reply": f"Your order {order} is confirmed."}
'''

CASE_YAML = """id: case-{i:05d}
input:
  message: Please confirm order ORD-{i:05d}.
expect:
  reply: {{must_include: [ORD-{i:05d}]}}
"""

INSPECT_TASK = '''
import re
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

ORDER = re.compile(r"ORD-[0-9]+")


def answer(input, tools, tool_choice, config):
    """Answers at once: the order number it was asked about, in a sentence."""
    order = ORDER.search(input[-1].text).group(0)
    output = ModelOutput.from_content(model="mockllm", content=f"Your order {order} is confirmed.")
    # Without usage, mockllm counts tokens with tiktoken, which downloads its encoding.
    output.usage = ModelUsage(input_tokens=10, output_tokens=6, total_tokens=16)
    return output


@task
def vs_caseforge():
    return Task(
        dataset=json_dataset(str(Path(__file__).parent / "samples.jsonl")),
        solver=generate(),
        scorer=includes(),
        model=get_model("mockllm/model", custom_outputs=answer),
    )
'''

# Run with the Inspect venv's python after a measurement: what the log says about the run.
INSPECT_CHECK = """
import json, sys
from pathlib import Path
from inspect_ai.log import read_eval_log
[path] = Path(sys.argv[1]).glob("*.eval")
log = read_eval_log(str(path), header_only=True)
print(json.dumps({"status": log.status, "samples": log.results.completed_samples,
                  "accuracy": log.results.scores[0].metrics["accuracy"].value,
                  "bytes": path.stat().st_size}))
"""


def make_caseforge_suite(root: Path, n: int) -> None:
    cases = root / "cases"
    cases.mkdir(parents=True)
    (root / "caseforge.yaml").write_text(
        "name: vs-inspect\nagent: {callable: 'bench_vs_inspect_agent:run'}\ntrials: 1\n"
    )
    (root / "bench_vs_inspect_agent.py").write_text(CASEFORGE_AGENT)
    for i in range(n):
        (cases / f"case-{i:05d}.yaml").write_text(CASE_YAML.format(i=i))


def make_inspect_task(root: Path, n: int) -> None:
    root.mkdir(parents=True)
    (root / "task.py").write_text(INSPECT_TASK)
    with (root / "samples.jsonl").open("w") as f:
        for i in range(n):
            sample = {"input": f"Please confirm order ORD-{i:05d}.", "target": f"ORD-{i:05d}"}
            f.write(json.dumps(sample) + "\n")


def ensure_inspect_venv() -> Path:
    """The Inspect venv's python, with INSPECT_SPEC installed (made or updated if need be)."""
    python = INSPECT_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {INSPECT_VENV.relative_to(HERE.parent)} ...", flush=True)
        # From the base interpreter: the same Python as the project's venv, none of its packages.
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(INSPECT_VENV)], check=True)
    wanted = INSPECT_SPEC.split("==")[1]
    if version_in(python, "inspect-ai") != wanted:
        print(f"installing {INSPECT_SPEC} into it ...", flush=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             INSPECT_SPEC],
            check=True,
        )  # fmt: skip
    return python


def version_in(python: Path, package: str) -> str | None:
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def measured(argv: list[str], cwd: Path) -> dict[str, float]:
    """One command in a fresh process: its wall time, CPU time and peak RSS."""
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(cwd), *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout)
    if result["code"] != 0:
        raise SystemExit(f"{argv} exited {result['code']}:\n{result['stdout']}{result['stderr']}")
    return {key: result[key] for key in ("wall", "cpu", "rss_mb")}


def caseforge_once(suite: Path, n: int, warm: bool = False) -> dict[str, float]:
    """One run: cold (the suite's `.caseforge/` removed first, as on a fresh CI checkout)
    or warm (parsed case files kept from the run before, as when iterating locally)."""
    if not warm:
        shutil.rmtree(suite / ".caseforge", ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store.db"
        argv = [sys.executable, "-m", "caseforge", "run", str(suite), "--quiet", "--no-judge",
                "--store", f"sqlite:///{store}"]  # fmt: skip
        figures = measured(argv, Path(tmp))
        with sqlite3.connect(store) as db:
            passed = db.execute("SELECT count(*) FROM results WHERE status = 'pass'").fetchone()
        if passed[0] != n:
            raise SystemExit(f"caseforge stored {passed[0]} passing results, not {n}")
    return figures


def inspect_once(python: Path, task: Path, n: int) -> dict[str, float]:
    inspect = str(python.parent / "inspect")
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "logs"
        # From the task's folder, as a user runs it: on Python 3.11 `inspect eval /abs/task.py`
        # fails (it globs the path under the working directory: "Non-relative patterns").
        argv = [inspect, "eval", "task.py", "--log-dir", str(logs), "--display", "none"]
        figures = measured(argv, task)
        done = subprocess.run(
            [str(python), "-c", INSPECT_CHECK, str(logs)], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"could not read Inspect's log:\n{done.stderr}")
        log = json.loads(done.stdout)
        if (log["status"], log["samples"], log["accuracy"]) != ("success", n, 1.0):
            raise SystemExit(f"Inspect's run was not {n} correct samples: {log}")
        figures["log_mb"] = log["bytes"] / 1e6
    return figures


def median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3, help="fresh-process runs per figure")
    parser.add_argument("--startup-repeat", type=int, default=5)
    args = parser.parse_args()
    n, r = args.cases, args.repeat

    inspect_python = ensure_inspect_venv()
    project = Path(sys.executable)
    caseforge_version = version_in(project, "caseforge")
    print(
        f"caseforge {caseforge_version} ({project.parent.parent}), Inspect AI "
        f"{version_in(inspect_python, 'inspect-ai')} ({INSPECT_VENV}), Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} cores"
    )

    with tempfile.TemporaryDirectory() as tmp:
        suite, task = Path(tmp) / "suite", Path(tmp) / "inspect-task"
        make_caseforge_suite(suite, n)
        make_inspect_task(task, n)

        # Start-up, interleaved in the same way.
        commands: dict[str, list[str]] = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "caseforge --version": [str(project.parent / "caseforge"), "--version"],
            "inspect --version": [str(inspect_python.parent / "inspect"), "--version"],
        }
        startup: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
        for _ in range(args.startup_repeat):
            for name, argv in commands.items():
                startup[name].append(measured(argv, Path(tmp)))

        sides: dict[str, Callable[[], dict[str, float]]] = {
            "caseforge": lambda: caseforge_once(suite, n),
            "caseforge (warm)": lambda: caseforge_once(suite, n, warm=True),
            "inspect": lambda: inspect_once(inspect_python, task, n),
        }
        runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
        for i in range(r):
            order = list(sides) if i % 2 == 0 else ["inspect", "caseforge", "caseforge (warm)"]
            for side in order:
                runs[side].append(sides[side]())
                last = runs[side][-1]
                print(
                    f"  run {i + 1}/{r} {side:<16} wall {last['wall']:6.2f} s  cpu "
                    f"{last['cpu']:6.2f} s  peak RSS {last['rss_mb']:4.0f} MB",
                    flush=True,
                )

    cf, ins = median(runs["caseforge"]), median(runs["inspect"])
    warm = median(runs["caseforge (warm)"])
    print(f"\n{n:,} cases × 1 trial, instant agent, one substring check each; median of {r}:")
    print(f"  {'':<34}{'wall':>9}{'CPU':>10}{'peak RSS':>11}")
    rows = [
        ("caseforge run (.venv), cold", cf),
        ("caseforge run, warm (cases parsed)", warm),
        ("inspect eval (.venv-inspect)", ins),
    ]
    for name, row in rows:
        print(f"  {name:<34}{row['wall']:>7.2f} s{row['cpu']:>8.2f} s{row['rss_mb']:>8.0f} MB")
    ratio = ins["wall"] / cf["wall"]
    print(
        f"  {'Inspect / caseforge':<34}{ratio:>8.1f}×{ins['cpu'] / cf['cpu']:>9.1f}×"
        f"{ins['rss_mb'] / cf['rss_mb']:>10.2f}×"
    )
    print(f"  {'Inspect / caseforge, warm':<34}{ins['wall'] / warm['wall']:>8.1f}×")
    print(
        f"  target: Inspect / caseforge ≥ 20× on wall time (cold): "
        f"{'met' if ratio >= 20 else 'not met'} ({ratio:.1f}×); per case "
        f"{1000 * cf['wall'] / n:.2f} ms vs {1000 * ins['wall'] / n:.2f} ms; Inspect's log "
        f"{ins['log_mb']:.1f} MB"
    )
    s = {name: median(figures) for name, figures in startup.items()}
    print(f"start-up, median of {args.startup_repeat}:")
    for name, row in s.items():
        print(f"  {name:<34}{row['wall']:>7.3f} s{row['cpu']:>8.3f} s{row['rss_mb']:>8.0f} MB")
    floor = s["python -c pass"]["wall"]
    print(
        f"  caseforge --version beyond python -c pass: "
        f"{s['caseforge --version']['wall'] - floor:.3f} s; "
        f"inspect --version beyond it: {s['inspect --version']['wall'] - floor:.3f} s"
    )


if __name__ == "__main__":
    main()
