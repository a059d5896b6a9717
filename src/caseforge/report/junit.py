"""The JUnit XML envelope shared by the run report (one testcase per case) and the gate (one
testcase per rule), so CI systems show both the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from xml.etree import ElementTree as ET

MESSAGE_LIMIT = 500

OutcomeKind = Literal["failure", "error", "skipped", "system-out"]
_COUNTED = {"failure": "failures", "error": "errors", "skipped": "skipped"}


@dataclass(frozen=True)
class JUnitOutcome:
    """Why a testcase did not simply pass: ``system-out`` is a pass with a note."""

    kind: OutcomeKind
    message: str
    text: str | None = None


@dataclass(frozen=True)
class JUnitCase:
    classname: str
    name: str
    outcome: JUnitOutcome | None = None
    time_s: float | None = None


def junit_xml(suite_name: str, cases: Sequence[JUnitCase]) -> str:
    """One ``<testsuite>`` in a ``<testsuites>`` root, with its counts and total time."""
    suite = ET.Element("testsuite", name=suite_name, tests=str(len(cases)))
    counts = dict.fromkeys(_COUNTED.values(), 0)
    total_time = 0.0
    for case in cases:
        attributes = {"classname": case.classname, "name": case.name}
        if case.time_s is not None:
            attributes["time"] = f"{case.time_s:.3f}"
            total_time += case.time_s
        element = ET.SubElement(suite, "testcase", attributes)
        outcome = case.outcome
        if outcome is None:
            continue
        if outcome.kind == "system-out":
            ET.SubElement(element, "system-out").text = outcome.message
            continue
        counts[_COUNTED[outcome.kind]] += 1
        child = ET.SubElement(element, outcome.kind, message=outcome.message[:MESSAGE_LIMIT])
        if outcome.text is not None:
            child.text = outcome.text
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{total_time:.3f}")
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
