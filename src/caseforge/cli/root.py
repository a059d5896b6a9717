"""The ``caseforge`` typer app: the root options, and every command loaded only when it runs.

A command's module is imported when that command is invoked (or its own ``--help`` is
asked for), so ``caseforge --version`` and ``--help`` pay for none of them, and each command
for its own only (the budgets are ``imports.HEAVY_MODULES``, held by a test). ``--help``
lists every command from :data:`COMMANDS`, whose one-line help a test keeps equal to each
command's own.
"""

from __future__ import annotations

from typing import Annotated

import typer

from caseforge._version import __version__
from caseforge.cli.command import App, LazyCommand, LazyGroup

# name: (module under caseforge.cli, attribute, the first paragraph of its help). A command
# is a function; `synth` and `store` are typer apps of their own.
COMMANDS: dict[str, LazyCommand] = {
    command.name: command
    for command in (
        LazyCommand("schema", "dataset_cmd", "schema",
                    "Print the JSON Schema of a case file (point your editor's YAML plugin at "
                    "it)."),
        LazyCommand("validate", "dataset_cmd", "validate",
                    "Check every case file and the suite as a whole; exit 1 on any error."),
        LazyCommand("split", "dataset_cmd", "split",
                    "Assign a stable dev/test split (≈70/30 by id hash, every category on both "
                    "sides);\ncases that have a split keep it."),
        LazyCommand("retire", "dataset_cmd", "retire",
                    "Move a case to SUITE/retired.yaml with the reason and today's date."),
        LazyCommand("init", "dataset_cmd", "init",
                    "Write a working suite to start from: config, two cases, an agent stub, an "
                    "oracle and\na pin test (or, with --example, one of the shipped example "
                    "suites)."),
        LazyCommand("run", "run_cmd", "run",
                    "Run the agent over the suite: trials, configurations, grading, the run "
                    "store."),
        LazyCommand("report", "runs_cmd", "report",
                    "Render a stored run (or a report.json) as text, JSON, Markdown, JUnit XML or "
                    "HTML."),
        LazyCommand("merge", "runs_cmd", "merge",
                    "Combine the reports of a run's shards (--shard I/N, each in its own store) "
                    "into one."),
        LazyCommand("show", "runs_cmd", "show",
                    "Print one case-trial whole: input, output, reply, tool calls, every check, "
                    "the error."),
        LazyCommand("runs", "runs_cmd", "runs",
                    "List the newest runs in the store (a suite's, given its folder)."),
        LazyCommand("compare", "measure_cmd", "compare",
                    "Pair two runs case by case: newly passing/failing, McNemar or paired t, the "
                    "MDE."),
        LazyCommand("baseline", "measure_cmd", "baseline",
                    "Write a small, reviewable JSON baseline of a run, fit to commit."),
        LazyCommand("gate", "measure_cmd", "gate",
                    "Apply the suite's gate rules to a run against a baseline; exit 1 only on "
                    "regression."),
        LazyCommand("history", "measure_cmd", "history_cmd",
                    "Each case's outcomes across runs and trials, and the flaky cases with their "
                    "flip rate."),
        LazyCommand("plan", "measure_cmd", "plan",
                    "How many cases a difference needs, and what the suite's size can detect."),
        LazyCommand("rescore", "run_cmd", "rescore_cmd",
                    "Re-grade a run's stored outputs with today's expectations; store it as a new "
                    "run."),
        LazyCommand("label", "calibrate_cmd", "label",
                    "Label agent outputs fact by fact, saved to SUITE/labels/ as you go "
                    "(resumable)."),
        LazyCommand("calibrate", "calibrate_cmd", "calibrate_cmd",
                    "Judge–human agreement, Cohen's κ, the confusion matrix, disagreements, bias "
                    "probes."),
        LazyCommand("review", "synth_cmd", "review",
                    "Accept (a), edit in $EDITOR (e), reject with a reason (r), skip (s) or quit "
                    "(q)."),
        LazyCommand("serve", "serve_cmd", "serve",
                    "Serve runs, trials, comparisons and labels in a browser (needs "
                    "caseforge[serve])."),
        LazyCommand("scan", "audit_cmd", "scan",
                    "Print every identifier span found, with its class and character offsets."),
        LazyCommand("resynth", "audit_cmd", "resynth",
                    "Re-synthesise a sensitive failed case into a new domain, keeping what made it "
                    "fail."),
        LazyCommand("verify", "audit_cmd", "verify",
                    "Check a rewritten case against its original, whatever its goal state: no "
                    "shared run,\nnumber, date, name or identifier in any fold, and no redaction "
                    "mark. Exit 1 on a finding;\nthe original is never printed."),
        LazyCommand("audit", "audit_cmd", "audit",
                    "Fail on loosened criteria without a Criteria-change reason, and on private "
                    "data leaks."),
        LazyCommand("synth", "synth_cmd", "synth_app",
                    "Two-step synthesis: dimension tuples, then one model call each."),
        LazyCommand(
            "store", "store_cmd", "store_app", "The run store: migrate its schema, prune old runs."
        ),
        LazyCommand("import", "interop_cmd", "import_app",
                    "Bring tests in from another tool: promptfoo configs, Inspect AI datasets, "
                    "tables (CSV, JSONL, Parquet, Hugging Face), tau-bench domains."),
        LazyCommand("export", "interop_cmd", "export_app",
                    "Write a suite or a run for another tool: a promptfoo config or results file, "
                    "an Inspect AI log, a table (CSV or Parquet)."),
    )
}  # fmt: skip

app = App(
    name="caseforge",
    help=(
        "An agent's golden dataset as code: validate, run, grade, measure, gate, "
        "synthesize and audit."
    ),
    epilog=(
        "Exit codes, the same for every command: 0 success · 1 a regression, an invalid "
        "dataset or audit findings · 2 a usage error (a bad flag, an unknown run) · 3 stopped "
        "by budget · 4 too many agent errors · 5 an environment error (store, I/O, permission, "
        "a missing optional dependency) · 130 SIGINT · 143 SIGTERM. When several apply: "
        "interrupted, environment, usage, budget, agent errors, regression."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=LazyGroup.of(COMMANDS),
)


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
) -> None:
    if version:
        print(f"caseforge {__version__}")
        raise typer.Exit()
