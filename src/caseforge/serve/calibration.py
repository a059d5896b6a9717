"""The calibration screen: ``caseforge calibrate`` on a served suite, replayed from the
judge's recorded answers. The web app never calls a judge model itself (that costs money,
and a page view should not), so a suite without recordings gets the command that makes
them. The result is kept until a label, a recording, a case or the config changes."""

from __future__ import annotations

import threading
from pathlib import Path

from caseforge.calibrate.agreement import Agreement
from caseforge.calibrate.calibrate import RECORDINGS, calibrate
from caseforge.calibrate.labels import labels_dir, load_labels
from caseforge.case.load import load_config
from caseforge.serve.views import AgreementView, CalibrationPage, DisagreementView, ProbeView

Fingerprint = tuple[tuple[str, int, int], ...]


class Calibrations:
    """The calibration result of each suite, computed on first view and kept while its
    inputs are unchanged."""

    def __init__(self) -> None:
        self._kept: dict[Path, tuple[Fingerprint, CalibrationPage]] = {}
        self._lock = threading.Lock()

    async def page(self, suite_dir: Path, index: int) -> CalibrationPage:
        suite = load_config(suite_dir).name
        problems: list[str] = []
        labeled = load_labels(suite_dir, problems)
        if problems:  # figures from the other files would pass for the whole: none, as the CLI
            return CalibrationPage(
                index=index,
                suite=suite,
                state="labels_unreadable",
                message=f"{len(problems)} labels file(s) in {labels_dir(suite_dir)} cannot be "
                "read: no agreement is computed until they are fixed, as `caseforge calibrate` "
                "refuses to.",
                problems=problems,
            )
        if not labeled:
            return CalibrationPage(
                index=index,
                suite=suite,
                state="no_labels",
                message=f"No labels in {labels_dir(suite_dir)} yet: label outputs on a run's "
                "label screen, or with `caseforge label RUN`.",
            )
        recordings = labels_dir(suite_dir) / RECORDINGS
        if not (recordings.is_dir() and any(recordings.glob("*.json"))):
            return CalibrationPage(
                index=index,
                suite=suite,
                state="no_recordings",
                message=f"No recorded judge answers in {recordings}. The web app only "
                f"replays them; record them with `caseforge calibrate {suite_dir} --record` "
                "(it calls the judge model, once per labeled output and probe).",
            )
        mark = _fingerprint(suite_dir)
        with self._lock:
            kept = self._kept.get(suite_dir)
        if kept is not None and kept[0] == mark:
            return kept[1]
        result = await calibrate(suite_dir)  # replays: the recordings exist
        page = CalibrationPage(
            index=index,
            suite=suite,
            state="ready",
            judge={k: v for k, v in result.judge.items() if isinstance(v, str | int | float)},
            mode=result.mode,
            outputs=result.outputs,
            overall=_agreement(result.overall),
            per_fact={fact: _agreement(a) for fact, a in result.per_fact.items()},
            disagreements=[DisagreementView(**d.__dict__) for d in result.disagreements],
            not_judged=result.not_judged,
            verbosity=_probe(result.verbosity, "probes"),
            position=_probe(result.position, "pairs"),
        )
        with self._lock:
            self._kept[suite_dir] = (mark, page)
        return page


def _agreement(a: Agreement) -> AgreementView:
    return AgreementView(
        n=a.n, agreement=a.agreement, kappa=a.kappa, labels=list(a.labels), confusion=a.confusion
    )


def _probe(found: dict[str, float | None], tried: str) -> ProbeView:
    return ProbeView(
        tried=int(found.get(tried) or 0),
        flips=int(found.get("flips") or 0),
        flip_rate=found.get("flip_rate"),
    )


def _fingerprint(suite_dir: Path) -> Fingerprint:
    """What a calibration depends on: the labels, the recordings, the cases and the config."""
    paths = [suite_dir / "caseforge.yaml"]
    paths += sorted(labels_dir(suite_dir).glob("*.yaml"))
    paths += sorted((labels_dir(suite_dir) / RECORDINGS).glob("*.json"))
    paths += sorted((suite_dir / "cases").rglob("*.y*ml"))
    found = []
    for path in paths:
        stat = path.stat()
        found.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(found)
