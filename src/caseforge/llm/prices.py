"""What model calls cost: tokens × a price table shipped as data (``prices.json``), which a
suite can override or extend under ``prices:`` in caseforge.yaml."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


@lru_cache(maxsize=1)
def _shipped() -> dict[str, dict[str, float]]:
    """The shipped table, read once per process."""
    data = json.loads(files("caseforge.llm").joinpath("prices.json").read_text("utf-8"))
    models: dict[str, dict[str, float]] = data["models"]
    return models


class PriceTable:
    """Prices by model name; a dated suffix (``gpt-4.1-mini-2025-04-14``) matches its base."""

    def __init__(self, overrides: Mapping[str, Mapping[str, float]] | None = None) -> None:
        table = {**_shipped(), **(overrides or {})}
        self.prices = {
            name: Price(float(p["input"]), float(p["output"])) for name, p in table.items()
        }

    def get(self, model: str) -> Price | None:
        if model in self.prices:
            return self.prices[model]
        # Longest known name that prefixes the model (dated or fine-tuned variants).
        matches = [name for name in self.prices if model.startswith(name + "-")]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """The cost in USD, or None when the model has no price."""
        price = self.get(model)
        return price.cost(input_tokens, output_tokens) if price else None
