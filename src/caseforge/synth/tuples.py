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
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from caseforge.case.load import load_config, parse_model, read_yaml
from caseforge.errors import CaseforgeError
from caseforge.oracle import expectation, load_oracles

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
    expect: dict[str, Any] = Field(default_factory=dict, description="Extra fixed checks.")
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


def draw_tuples(suite_dir: Path, n: int, seed: int, pairwise: bool = False) -> list[dict[str, Any]]:
    """Tuples with their input and oracle-computed expectations, ready for ``synth write``."""
    config = load_config(suite_dir)  # first: a path that is no suite folder says so
    dims = load_dimensions(suite_dir)
    axes = dims.axes()
    rows = pairwise_tuples(axes, seed) if pairwise else []
    if len(rows) < n:
        rows += sample_tuples(axes, n - len(rows), seed + 1)
    rng = random.Random(seed + 2)
    oracles = load_oracles(suite_dir / config.oracles) if config.oracles else {}
    drawn = []
    for index, row in enumerate(rows, start=1):
        scenario = dims.scenarios[row["scenario"]]
        case_input = {name: rng.choice(values) for name, values in dims.input_fields.items()}
        expect: dict[str, object] = {"category": {"mode": "exact", "value": scenario.category}}
        if scenario.oracle is not None:
            fn = oracles.get(scenario.oracle.name)
            if fn is None:
                raise CaseforgeError(
                    f"{suite_dir / DIMENSIONS_FILE}: scenario {row['scenario']!r} names oracle "
                    f"{scenario.oracle.name!r}, which {config.oracles or 'no oracles module'} lacks"
                )
            try:
                value = fn(dict(case_input), **scenario.oracle.args)
            except Exception as exc:
                raise CaseforgeError(
                    f"oracle {scenario.oracle.name!r} failed on tuple {row} with input "
                    f"{case_input}: {type(exc).__name__}: {exc}"
                ) from None
            right, others = expectation(value)
            check: dict[str, object] = {
                "mode": "outcome",
                "oracle": scenario.oracle.name,
                "args": scenario.oracle.args,
                "value": right,
            }
            if others:
                check["any_of"] = others
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
