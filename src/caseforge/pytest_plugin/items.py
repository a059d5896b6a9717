"""What pytest collects from a suite: its ``caseforge.yaml`` as a file node, a node per
configuration when several are named, and an item per case, ``test[CASE_ID]``.

An item's keywords are its case's tags, so ``-k must-pass`` keeps the cases
tagged ``must-pass``; every item carries the ``caseforge`` mark (``-m caseforge``). The item
itself runs nothing: :class:`~caseforge.pytest_plugin.session.CaseforgePlugin` runs every
selected case at once, and the item waits for its own case's trials.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from caseforge.case.load import Suite
from caseforge.errors import CaseforgeError
from caseforge.pytest_plugin.verdict import CaseKey

if TYPE_CHECKING:
    from caseforge.pytest_plugin.session import CaseforgePlugin


class SuiteFile(pytest.File):
    """The suite's ``caseforge.yaml``: its cases (or its configurations) below it."""

    plugin: CaseforgePlugin

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        plugin = self.plugin
        suite = plugin.load()
        configs = plugin.configs(suite)
        if len(configs) == 1:
            yield from case_items(self, suite, configs[0], plugin)
            return
        for name in configs:
            node = ConfigNode.from_parent(self, name=str(name))
            node.suite, node.config_name = suite, name
            yield node

    def repr_failure(  # type: ignore[override]  # pytest's Collector narrows it the same way
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str | Any:
        """An invalid suite is its one-line problems, as ``caseforge validate`` says them."""
        if isinstance(excinfo.value, CaseforgeError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ConfigNode(pytest.Collector):
    """One configuration of a matrix (``--caseforge-config a --caseforge-config b``)."""

    suite: Suite
    config_name: str | None

    def collect(self) -> Iterator[pytest.Item]:
        parent = self.parent
        assert isinstance(parent, SuiteFile)
        yield from case_items(self, self.suite, self.config_name, parent.plugin)


def case_items(
    parent: pytest.Collector, suite: Suite, config: str | None, plugin: CaseforgePlugin
) -> Iterator[CaseItem]:
    for loaded in plugin.selected_cases(suite):
        case = loaded.case
        name = f"test[{case.id}]"
        # The id spelled out: pytest reads a stored id's [...] as parameters (--lf's cache),
        # and a node named with brackets must be given the same reading to match it.
        item = CaseItem.from_parent(parent, name=name, nodeid=f"{parent.nodeid}::{name}")
        item.key = CaseKey(config, case.id)
        item.case_path = loaded.path
        item.plugin = plugin
        item.extra_keyword_matches.update(case.tags)
        item.add_marker(pytest.mark.caseforge)
        yield item


class CaseItem(pytest.Item):
    """One case (under one configuration): it passes as ``--caseforge-pass`` says."""

    key: CaseKey
    case_path: Path
    plugin: CaseforgePlugin

    def runtest(self) -> None:
        self.plugin.check(self)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where pytest says the item is: its case file (the headline of a failure names
        the item as its id does)."""
        return self.case_path, 0, self.nodeid.split("::", 1)[1]
