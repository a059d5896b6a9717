"""Registering suite oracles and recomputing their expectations."""

from caseforge.oracle.registry import (
    AnyOf,
    OracleError,
    expectation,
    load_oracles,
    oracle,
    oracles_in,
)

__all__ = ["AnyOf", "OracleError", "expectation", "load_oracles", "oracle", "oracles_in"]
