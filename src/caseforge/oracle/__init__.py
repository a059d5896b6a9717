"""Registering suite oracles and recomputing their expectations."""

from caseforge.oracle.registry import OracleError, load_oracles, oracle, oracles_in

__all__ = ["OracleError", "load_oracles", "oracle", "oracles_in"]
