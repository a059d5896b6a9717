"""pytest-xdist (``-n N``): each worker runs the cases of its items as one shard of one run.

The controller names the run (every worker gets its id, ``--run-id``'s way) and hands each
worker its share of the items at once (:class:`ShardScheduling`): the selected cases, in
collection order, go to the workers in turn, every configuration's item of a case to the
same worker, and the other tests in turn too. A worker runs its cases as shard I of M of
the run (``--shard``'s ledger, with the share named by its cases: see
:class:`~caseforge.run.plan.Shard`), M being the number of workers given a case. The run is
finished when its last shard is; at the end of the session the controller marks a shard
whose worker died ``stopped`` and reports the run.

Both sides compute the share from the same list of item ids (xdist checks that every
worker collected the same), so they agree without talking. A worker started to replace
one that died runs what is left of that worker's shard: its first item says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caseforge.run.plan import Shard

SUITE_FILE = "caseforge.yaml"


def case_of(nodeid: str) -> str | None:
    """The case id of a suite's item (``SUITE/caseforge.yaml[::CONFIG]::test[ID]``), or None
    for any other test."""
    parts = nodeid.split("::")
    last = parts[-1]
    if len(parts) < 2 or not parts[0].endswith(SUITE_FILE):
        return None
    if not (last.startswith("test[") and last.endswith("]")):
        return None
    return last[len("test[") : -1]


def share(nodeids: Sequence[str], workers: int) -> tuple[list[int], int]:
    """Each item's worker (0-based), and how many workers have cases (the shard count)."""
    owners: list[int] = []
    cases: dict[str, int] = {}
    others = 0
    for nodeid in nodeids:
        case_id = case_of(nodeid)
        if case_id is None:
            owners.append(others % workers)
            others += 1
        else:
            owners.append(cases.setdefault(case_id, len(cases) % workers))
    return owners, min(workers, len(cases))


def shard_of(nodeids: Sequence[str], workers: int, owner: int) -> Shard:
    """The shard of worker ``owner``: its cases, as shard ``owner + 1`` of the count."""
    owners, count = share(nodeids, workers)
    mine = frozenset(
        case_id
        for nodeid, who in zip(nodeids, owners, strict=True)
        if who == owner and (case_id := case_of(nodeid)) is not None
    )
    return Shard(owner + 1, count, cases=mine)


def owner_of(nodeids: Sequence[str], workers: int, nodeid: str) -> int:
    """The worker whose share holds ``nodeid``."""
    owners, _ = share(nodeids, workers)
    return owners[list(nodeids).index(nodeid)]


def worker_index(node: Any) -> int:
    """The 0-based number of an xdist worker (``gw3``: 3)."""
    return int(str(node.gateway.id).removeprefix("gw"))


class ShardScheduling:
    """xdist's scheduler while --caseforge is on (its ``Scheduling`` protocol): each worker
    of the first round gets its whole share at once, then is told to shut down when done; a
    worker started in place of one that died gets what that one had not finished."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.collections: dict[Any, list[str]] = {}
        self.pending: dict[Any, list[int]] = {}
        self.started: list[Any] = []
        self.orphaned: list[list[int]] = []  # what dead workers left, for replacements
        self.complete = False

    @property
    def nodes(self) -> list[Any]:
        return list(self.pending)

    @property
    def collection_is_completed(self) -> bool:
        return self.complete

    @property
    def tests_finished(self) -> bool:
        if not self.complete or self.orphaned:
            return False
        return all(len(pending) < 2 for pending in self.pending.values())

    @property
    def has_pending(self) -> bool:
        return any(self.pending.values())

    def add_node(self, node: Any) -> None:
        self.pending[node] = []

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        self.collections[node] = list(collection)
        if not self.complete:
            self.complete = len(self.collections) >= self.workers
        elif self.orphaned:
            self.pending[node] = self.orphaned.pop(0)

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        self.pending[node].remove(item_index)

    def mark_test_pending(self, item: str) -> None:
        raise NotImplementedError("caseforge's scheduler does not move tests between workers")

    def remove_pending_tests_from_node(self, node: Any, indices: Sequence[int]) -> None:
        raise NotImplementedError("caseforge's scheduler does not move tests between workers")

    def remove_node(self, node: Any) -> str | None:
        pending = self.pending.pop(node)
        if not pending:
            return None
        crashed = self.collections[node][pending.pop(0)]
        if pending:
            self.orphaned.append(pending)
        return crashed

    def schedule(self) -> None:
        for node, pending in self.pending.items():
            if node in self.started:
                continue
            self.started.append(node)
            if pending:  # a replacement: what its predecessor left
                node.send_runtest_some(pending)
                continue
            collection = self.collections[node]
            owners, _ = share(collection, self.workers)
            index = worker_index(node)
            pending[:] = [i for i, who in enumerate(owners) if who == index]
            if pending:
                node.send_runtest_some(list(pending))
            node.shutdown()
