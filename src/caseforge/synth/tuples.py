"""Two-step synthesis, step one: dimension tuples with oracle-computed expectations.

A suite's ``dimensions.yaml`` names scenarios (each with a default category and, where a
refund or other outcome follows, the oracle that computes it), personas and shapes; each
value may say which error-analysis finding it came from (``from: F3``). ``input_fields``
lists values drawn per tuple for the case input (e.g. customer ids).

``caseforge synth tuples`` draws tuples — a seeded sample, or pairwise coverage so every
pair of values of two dimensions appears in some tuple — and computes each tuple's
expectations with the suite's oracles. Step two (``synth write``) has a model write one
ticket per tuple.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field

from caseforge.case.load import load_config, parse_model, read_yaml
from caseforge.errors import CaseforgeError
from caseforge.oracle.pool import OracleAnswer, OracleCall, OraclePool, pool_size

DIMENSIONS_FILE = "dimensions.yaml"


class OracleRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    args: dict[str, object] = Field(default_factory=dict)
    field: str | None = Field(default=None, description="The expect key; default `refund`.")


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    category: str
    oracle: OracleRef | None = None
    expect: dict[str, object] = Field(default_factory=dict, description="Extra fixed checks.")
    from_: str | None = Field(default=None, alias="from")


class Value(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    from_: str | None = Field(default=None, alias="from")


class Dimensions(BaseModel):
    """``SUITE/dimensions.yaml``."""

    model_config = ConfigDict(extra="forbid")

    findings: dict[str, dict[str, object]] = Field(default_factory=dict)
    scenarios: dict[str, Scenario]
    personas: dict[str, Value]
    shapes: dict[str, Value]
    input_fields: dict[str, list[object]] = Field(default_factory=dict)
    text_field: str = Field(default="ticket", description="The input field the model writes.")

    def axes(self) -> dict[str, list[str]]:
        return {
            "scenario": list(self.scenarios),
            "persona": list(self.personas),
            "shape": list(self.shapes),
        }


def load_dimensions(suite_dir: Path) -> Dimensions:
    path = suite_dir / DIMENSIONS_FILE
    if not path.is_file():
        raise CaseforgeError(f"{path}: no dimensions file (scenarios, personas, shapes)")
    text, data = read_yaml(path)
    return parse_model(path, text, data, Dimensions, "the dimensions file")


def sample_tuples(axes: dict[str, list[str]], n: int, seed: int) -> list[dict[str, str]]:
    """``n`` tuples, each value drawn uniformly (seeded)."""
    rng = random.Random(seed)
    return [{axis: rng.choice(values) for axis, values in axes.items()} for _ in range(n)]


def pairs_of(row: dict[str, str]) -> set[tuple[str, str, str, str]]:
    """The (axis, value, axis, value) pairs a tuple covers."""
    names = sorted(row)
    return {(a, row[a], b, row[b]) for a, b in itertools.combinations(names, 2)}


def all_pairs(axes: dict[str, list[str]]) -> set[tuple[str, str, str, str]]:
    names = sorted(axes)
    return {
        (a, va, b, vb)
        for a, b in itertools.combinations(names, 2)
        for va in axes[a]
        for vb in axes[b]
    }


def pairwise_tuples(
    axes: dict[str, list[str]], seed: int, candidates: int = 60
) -> list[dict[str, str]]:
    """Tuples covering every pair of values of every two axes (greedy, seeded).

    Each step builds ``candidates`` random tuples seeded with one uncovered pair and keeps
    the one covering the most uncovered pairs; the result is typically within a few tuples
    of the product of the two largest axes, the lower bound.
    """
    rng = random.Random(seed)
    uncovered = all_pairs(axes)
    rows: list[dict[str, str]] = []
    while uncovered:
        target = sorted(uncovered)[rng.randrange(len(uncovered))]
        best: dict[str, str] | None = None
        best_gain = -1
        for _ in range(candidates):
            row = {axis: rng.choice(values) for axis, values in axes.items()}
            row[target[0]], row[target[2]] = target[1], target[3]
            gain = len(pairs_of(row) & uncovered)
            if gain > best_gain:
                best, best_gain = row, gain
        assert best is not None
        rows.append(best)
        uncovered -= pairs_of(best)
    return rows


# A drawn tuple, as synth/tuples.jsonl keeps it for ``synth write``.
DrawnTuple = TypedDict(
    "DrawnTuple",
    {
        "tuple_id": str,
        "tuple": dict[str, str],  # axis -> value
        "input": dict[str, object],
        "expect": dict[str, object],
        "from": list[str],  # the findings the values came from
    },
)


def draw_tuples(suite_dir: Path, n: int, seed: int, pairwise: bool = False) -> list[DrawnTuple]:
    """Tuples with their input and oracle-computed expectations, ready for ``synth write``."""
    config = load_config(suite_dir)  # first: a path that is no suite folder says so
    dims = load_dimensions(suite_dir)
    axes = dims.axes()
    rows = pairwise_tuples(axes, seed) if pairwise else []
    if len(rows) < n:
        rows += sample_tuples(axes, n - len(rows), seed + 1)
    rng = random.Random(seed + 2)
    inputs: list[dict[str, object]] = [
        {name: rng.choice(values) for name, values in dims.input_fields.items()} for _ in rows
    ]
    answers = _oracle_answers(
        suite_dir, config.oracles, config.oracle_timeout_s, dims, rows, inputs
    )
    drawn: list[DrawnTuple] = []
    for index, (row, case_input) in enumerate(zip(rows, inputs, strict=True), start=1):
        scenario = dims.scenarios[row["scenario"]]
        expect: dict[str, object] = {"category": {"mode": "exact", "value": scenario.category}}
        if scenario.oracle is not None:
            answer = answers[index]
            check: dict[str, object] = {
                "mode": "outcome",
                "oracle": scenario.oracle.name,
                "args": scenario.oracle.args,
                "value": answer.value,
            }
            if answer.others:
                check["any_of"] = answer.others
            expect[scenario.oracle.field or "refund"] = check
        expect.update(scenario.expect)
        drawn.append(
            {
                "tuple_id": f"t{seed}-{index:03d}",
                "tuple": row,
                "input": case_input,
                "expect": expect,
                "from": [
                    v
                    for v in (
                        scenario.from_,
                        dims.personas[row["persona"]].from_,
                        dims.shapes[row["shape"]].from_,
                    )
                    if v
                ],
            }
        )
    return drawn


def _oracle_answers(
    suite_dir: Path,
    module: str | None,
    timeout_s: float,
    dims: Dimensions,
    rows: list[dict[str, str]],
    inputs: list[dict[str, object]],
) -> dict[int, OracleAnswer]:
    """Each oracle-backed tuple's expectation, computed in worker processes (the suite's
    code never runs in caseforge's own: ``oracle/pool.py``); the first failure is an error
    naming the oracle and the tuple."""
    calls = []
    for index, (row, case_input) in enumerate(zip(rows, inputs, strict=True), start=1):
        wanted = dims.scenarios[row["scenario"]].oracle
        if wanted is not None:
            calls.append(OracleCall(index, wanted.name, dict(case_input), dict(wanted.args)))
    if not calls:
        return {}
    if module is None:
        raise CaseforgeError(
            f"{suite_dir / DIMENSIONS_FILE}: scenario {rows[calls[0].key - 1]['scenario']!r} "
            f"names oracle {calls[0].name!r}, but caseforge.yaml sets no `oracles` module"
        )
    path = suite_dir / module
    if not path.is_file():
        raise CaseforgeError(f"{path}: oracles module not found")
    answers: dict[int, OracleAnswer] = {}
    with OraclePool(path, suite_dir, timeout_s, pool_size(len(calls))) as pool:
        info = pool.module_info()
        if info.names is None:
            raise CaseforgeError(info.error or f"{path}: the oracles module did not load")
        for call in calls:
            if call.name not in info.names:
                row = rows[call.key - 1]
                raise CaseforgeError(
                    f"{suite_dir / DIMENSIONS_FILE}: scenario {row['scenario']!r} names oracle "
                    f"{call.name!r}, which {module} lacks"
                )
        for call, answer in pool.run(calls):
            if answer.error is not None:
                raise CaseforgeError(
                    f"oracle {call.name!r} {answer.error} on tuple {rows[call.key - 1]} with "
                    f"input {call.input}"
                )
            answers[call.key] = answer
    return answers
