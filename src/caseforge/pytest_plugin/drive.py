"""The selected items' case-trials, run at once and concurrently, while pytest reports the
items one by one.

:class:`SuiteRun` hands the whole selection to :func:`~caseforge.api.run.execute_run`, the
library's run (the same run, store and identity as ``caseforge run``), on a thread of its
own with an event loop of its own; each graded case-trial is filed under its item as it
arrives, and an item's test waits for its case's trials only. Stopping (``-x``, Ctrl-C, the
end of the session) cancels the run through its :class:`~caseforge.run.cancel.Cancellation`:
no case-trial starts after that, and the run is stored as stopped (``--resume`` finishes
it). Nothing here installs a signal handler.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from pathlib import Path

from caseforge.api.run import RunResult, RunSettings, execute_run
from caseforge.errors import CaseforgeError, Interrupted
from caseforge.pytest_plugin.verdict import CaseKey, Trial
from caseforge.results import TrialRecord
from caseforge.run.cancel import Cancellation
from caseforge.run.executor import TrialOutcome
from caseforge.run.plan import Progress, RunHandle


class SuiteRun:
    """One invocation of the library's run over the selected items, on a thread."""

    def __init__(self, suite_dir: Path, settings: RunSettings, keys: list[CaseKey], trials: int):
        self.suite_dir = suite_dir
        self.settings = settings
        self.trials = trials
        self.cancellation = Cancellation()
        self.run_ids: dict[str | None, str] = {}  # config name -> its run's id
        self.result: RunResult | None = None
        self.error: BaseException | None = None  # what ended the run early, if anything
        self._lock = threading.Lock()
        self._arrived: dict[CaseKey, list[Trial]] = defaultdict(list)
        self._ready = {key: threading.Event() for key in keys}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._main, name="caseforge-run", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _main(self) -> None:
        try:
            self.result = asyncio.run(
                execute_run(
                    self.suite_dir,
                    self.settings,
                    cancellation=self.cancellation,
                    on_start=self._started,
                    on_trial=self._graded,
                )
            )
        except BaseException as exc:  # kept for the items and the summary, never lost
            self.error = exc
        finally:
            self._done.set()
            for event in self._ready.values():
                event.set()

    def _started(self, handles: list[RunHandle], _progress: Progress) -> None:
        with self._lock:
            self.run_ids.update({h.config_name: h.run_id for h in handles})

    def _graded(self, outcome: TrialOutcome, record: TrialRecord) -> None:
        task = outcome.task
        key = CaseKey(task.config_name, task.case.id)
        reply = outcome.result.reply if outcome.result is not None else None
        with self._lock:
            found = self._arrived[key]
            found.append(Trial(record, reply))
            ready = len(found) >= self.trials
        event = self._ready.get(key)
        if ready and event is not None:
            event.set()

    def wait(self, key: CaseKey) -> list[Trial]:
        """The case's graded trials, once all are in (or the run has ended without them)."""
        event = self._ready.get(key)
        if event is None:
            raise KeyError(f"{key} is not in this run")
        event.wait()
        with self._lock:
            return list(self._arrived.get(key, []))

    def run_id(self, config: str | None) -> str | None:
        with self._lock:
            return self.run_ids.get(config)

    @property
    def stopped(self) -> str | None:
        """Why the run ended early, in a line, or None while it runs or once it finished."""
        if self.error is None:
            return None
        if isinstance(self.error, Interrupted):
            return f"the run was stopped: {self.error.text}"
        if isinstance(self.error, CaseforgeError):
            return str(self.error)
        return f"the run failed: {self.error!r}"

    def cancel(self, reason: str) -> None:
        """Start no more case-trials; the run stores what finished, as stopped."""
        self.cancellation.cancel(reason)

    def finish(self) -> None:
        """Wait for the run to end (having cancelled it, if it should not go on)."""
        if self._thread.is_alive():
            self._done.wait()
            self._thread.join()
