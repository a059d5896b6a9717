"""Types for JSON data: what the agent sends back, the store keeps and the reports print.

``JSONValue`` is exact for data that was parsed from JSON or YAML; code that only passes a
value through (to ``same``, to ``json.dumps``) takes ``object`` instead.
"""

from __future__ import annotations

from typing import TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSONValue: TypeAlias = "JSONScalar | list[JSONValue] | dict[str, JSONValue]"
JSONObject: TypeAlias = "dict[str, JSONValue]"

__all__ = ["JSONObject", "JSONScalar", "JSONValue"]
