"""The plugin while a suite is named (``--caseforge SUITE``): it collects the suite's cases as
items, runs the selected ones at once when the first of them is reached, and reports each
item from its case's trials.

The flow, for one process:

1. Collection: the suite's ``caseforge.yaml`` is added to what pytest collects, and yields
   an item per case (per configuration); ``-k``, ``-m``, ``--lf`` and ``--co`` select among
   them as among any tests.
2. The first selected item to run plans every selected item's case into one run of the
   library's :func:`~caseforge.api.run.execute_run` (:class:`~.drive.SuiteRun`): the same
   run as ``caseforge run``, stored under the suite's store with the suite's identity, its
   case-trials concurrent. A narrowed selection is recorded as ``--case`` of each case it
   kept, so reports call the run a *selection* and ``gate`` refuses it against a baseline
   of other cases.
3. Each item waits for its case's trials and passes, fails (the failing checks, as
   ``caseforge show`` prints them) or is skipped (judge checks not judged). ``-x``, Ctrl-C
   or an early end cancel the run: no case-trial starts after that, and it is stored as
   stopped.

Under pytest-xdist (``-n``) each worker runs its items' cases as a shard of one run
(``workers.py``), and the controller reports the run at the end.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from caseforge.api.run import RunSettings
from caseforge.case.load import LoadedCase, Suite, load_config, load_suite
from caseforge.errors import CaseforgeError, did_you_mean
from caseforge.pytest_plugin.drive import SuiteRun
from caseforge.pytest_plugin.items import CaseItem, SuiteFile
from caseforge.pytest_plugin.verdict import RULES, Outcome, decide, failure_text, skip_text
from caseforge.pytest_plugin.workers import (
    ShardScheduling,
    owner_of,
    shard_of,
)
from caseforge.results import trial_letters

RUN_ID_KEY = "caseforge_run_id"  # what the xdist controller tells each worker


class CaseforgePlugin:
    """Registered by the entry module once a suite is named; its methods are pytest hooks."""

    def __init__(self, config: pytest.Config, suite_dir: Path) -> None:
        self.config = config
        self.suite_dir = suite_dir.resolve()
        self.suite_file = self.suite_dir / "caseforge.yaml"
        if not self.suite_file.is_file():
            raise pytest.UsageError(
                f"--caseforge {suite_dir}: not a suite folder (it has no caseforge.yaml)"
            )
        self.rule: str = config.getoption("caseforge_pass")
        self.split: str = config.getoption("caseforge_split")
        self.trials: int | None = config.getoption("caseforge_trials")
        if self.trials is not None and self.trials < 1:
            raise pytest.UsageError(f"--caseforge-trials must be at least 1, not {self.trials}")
        self.config_names: list[str] = list(dict.fromkeys(config.getoption("caseforge_configs")))
        self.no_judge: bool = config.getoption("caseforge_no_judge")
        self.store: str | None = config.getoption("caseforge_store")
        self.run: SuiteRun | None = None
        self.assigned_run_id: str | None = None  # the xdist controller's, for every worker
        self.summary: list[str] = []
        self._suite: Suite | None = None
        self._collect_the_suite(config)

    def _collect_the_suite(self, config: pytest.Config) -> None:
        """Have pytest collect the suite's ``caseforge.yaml``.

        - ``--caseforge SUITE`` alone: the suite only; with paths beside it: those too.
        - ``caseforge_suite`` in the configuration and a plain ``pytest``: the suite beside
          what ``testpaths`` names. With paths or test ids on the command line (an IDE
          running one test), only those: the suite runs when a path given holds it, as
          pytest finds any test file, so one test never pays for the whole suite.
        """
        named = bool(config.getoption("caseforge"))
        from_command_line = config.args_source == pytest.Config.ArgsSource.ARGS
        if named and not from_command_line:
            config.args[:] = [str(self.suite_file)]
        elif (named or not from_command_line) and str(self.suite_file) not in config.args:
            config.args.append(str(self.suite_file))

    # -- the suite ------------------------------------------------------------------

    def load(self) -> Suite:
        if self._suite is None:
            self._suite = load_suite(self.suite_dir)
        return self._suite

    def configs(self, suite: Suite) -> list[str | None]:
        """The configurations named, else the suite's first (None: it has none)."""
        if self.config_names:
            return list(self.config_names)
        return [next(iter(suite.config.configs))] if suite.config.configs else [None]

    def selected_cases(self, suite: Suite) -> list[LoadedCase]:
        """The split's cases, in the suite's order."""
        return [c for c in suite.cases if self.split == "all" or c.case.split == self.split]

    def planned_trials(self) -> int:
        return self.trials if self.trials is not None else self.load().config.trials

    # -- hooks ----------------------------------------------------------------------

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """A configuration the suite does not have is a usage error (exit 4), said at once."""
        try:
            suite_config = load_config(self.suite_dir)
        except CaseforgeError:
            return  # an invalid suite: collection reports it, problem by problem
        unknown = [n for n in self.config_names if n not in suite_config.configs]
        if unknown:
            known = ", ".join(suite_config.configs) or "none"
            hint = did_you_mean(unknown[0], suite_config.configs) if len(unknown) == 1 else ""
            raise pytest.UsageError(
                f"--caseforge-config: unknown config {', '.join(unknown)}{hint} "
                f"(the suite has: {known})"
            )

    def pytest_report_header(self, config: pytest.Config) -> str:
        """``caseforge: SUITE · config v2 · 3 trial(s) a case · a case passes when …``"""
        try:
            suite_config = load_config(self.suite_dir)
        except CaseforgeError:  # collection says what is wrong with it
            return f"caseforge: {self._shown()}"
        configs = self.config_names or list(suite_config.configs)[:1]
        named = f" · config {', '.join(configs)}" if configs else ""
        trials = self.trials or suite_config.trials
        return (
            f"caseforge: {self._shown()}{named} · {trials} trial(s) a case · "
            f"{RULES[self.rule]} (--caseforge-pass {self.rule})"
        )

    def _shown(self) -> str:
        """The suite's folder from where pytest was started, when it is below it."""
        start = self.config.invocation_params.dir.resolve()
        if self.suite_dir.is_relative_to(start):
            return self.suite_dir.relative_to(start).as_posix()
        return str(self.suite_dir)

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> SuiteFile | None:
        if file_path.resolve() != self.suite_file:
            return None
        node: SuiteFile = SuiteFile.from_parent(parent, path=file_path)
        node.plugin = self
        return node

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        """After each item: a session told to stop (``-x``, ``--maxfail``) cancels the run's
        case-trials not yet started."""
        try:
            return (yield)
        finally:
            session = item.session
            if self.run is not None and (session.shouldfail or session.shouldstop):
                self.run.cancel(str(session.shouldfail or session.shouldstop))

    def pytest_keyboard_interrupt(self) -> None:
        if self.run is not None:
            self.run.cancel("SIGINT")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.run is not None:
            if (
                session.shouldfail
                or session.shouldstop
                or exitstatus == pytest.ExitCode.INTERRUPTED
            ):
                self.run.cancel(str(session.shouldfail or session.shouldstop or "interrupted"))
            self.run.finish()
            if not hasattr(self.config, "workerinput"):
                self.summary = self._summary(self.run)
        if self.assigned_run_id is not None:
            from caseforge.pytest_plugin.merge import merge_shards

            self.summary = merge_shards(self._store_url(), self.assigned_run_id)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.summary:
            return
        terminalreporter.section("caseforge")
        for line in self.summary:
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"{RULES[self.rule]} (--caseforge-pass {self.rule})")

    # -- xdist's controller ---------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Every worker fills the same run: the controller names it, and opens the store
        first, so that the workers do not all make (or upgrade) a new one at once."""
        if self.assigned_run_id is None:
            from caseforge.store.db import RunStore, new_run_id

            RunStore(self._store_url()).close()
            self.assigned_run_id = new_run_id()
        node.workerinput[RUN_ID_KEY] = self.assigned_run_id

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> ShardScheduling:
        return ShardScheduling(int(config.getoption("numprocesses")))

    # -- an item --------------------------------------------------------------------

    def check(self, item: CaseItem) -> None:
        """Report the item from its case's trials (the run starts with the first item)."""
        run = self.run or self._start(item)
        trials = run.wait(item.key)
        run_id = run.run_id(item.key.config)
        item.user_properties.append(("caseforge_run", run_id or ""))
        item.user_properties.append(("trials", trial_letters(t.record.status for t in trials)))
        if not trials and run.stopped is not None:  # the run ended before this case ran:
            item.session.shouldfail = f"caseforge: {run.stopped}"  # no other case will run
            pytest.fail(f"{item.key}: {run.stopped}", pytrace=False)
        planned = self.planned_trials()
        outcome = decide(trials, planned, self.rule)
        if outcome is Outcome.PASSED:
            return
        if outcome is Outcome.SKIPPED:  # located at the case file, as a failure is
            raise pytest.skip.Exception(skip_text(trials), _use_item_location=True)
        show = f"caseforge show {run_id}" if run_id is not None else None
        if show is not None and self.store is not None:
            show = f"caseforge show --store {self.store} {run_id}"
        text = failure_text(item.key, trials, planned, self.rule, show, run.stopped)
        pytest.fail(text, pytrace=False)  # the message is the whole report, no traceback

    def _start(self, first: CaseItem) -> SuiteRun:
        """Plan every selected item's case into one run, and start it."""
        session = first.session
        items = [i for i in session.items if isinstance(i, CaseItem)]
        suite = self.load()
        every = [c.case.id for c in self.selected_cases(suite)]
        chosen = {i.key.case_id for i in items}
        configs = list(dict.fromkeys(i.key.config for i in items))
        settings: RunSettings = {"split": self.split}
        if configs != [None]:
            settings["configs"] = [c for c in configs if c is not None]
        if self.trials is not None:
            settings["trials"] = self.trials
        if self.no_judge:
            settings["judge"] = False
        if self.store is not None:
            settings["store"] = self.store
        if chosen != set(every):  # -k, -m, --lf, node ids: a selection of the suite
            settings["cases"] = [case_id for case_id in every if case_id in chosen]
        mine = items
        workerinput = getattr(self.config, "workerinput", None)
        if workerinput is not None and RUN_ID_KEY in workerinput:
            nodeids = [i.nodeid for i in session.items]
            workers = int(workerinput["workercount"])
            shard = shard_of(nodeids, workers, owner_of(nodeids, workers, first.nodeid))
            settings["shard"] = shard
            settings["run_id"] = str(workerinput[RUN_ID_KEY])
            mine = [i for i in items if shard.cases is not None and i.key.case_id in shard.cases]
        self.run = SuiteRun(self.suite_dir, settings, [i.key for i in mine], self.planned_trials())
        self.run.start()
        return self.run

    def _summary(self, run: SuiteRun) -> list[str]:
        """What the run did, for the terminal: a line per configuration's run."""
        from caseforge.pytest_plugin.merge import report_line

        lines = []
        if run.result is not None:
            lines += [report_line(report) for report in run.result.reports]
            lines += [f"warning: {warning}" for warning in run.result.warnings]
            if run.result.error is not None:
                lines.append(str(run.result.error))
        elif run.stopped is not None:
            lines.append(run.stopped)
        return lines

    def _store_url(self) -> str:
        from caseforge.store.db import default_store_url

        return self.store or default_store_url(self.suite_dir)
