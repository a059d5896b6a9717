"""Adapters that turn agents written with other frameworks into caseforge agents.

Each adapter imports its framework lazily, so importing this package never needs the
optional dependencies; see :mod:`caseforge.adapters.langgraph`.
"""

from caseforge.adapters.langgraph import INTERCEPTED, langgraph_agent

__all__ = ["INTERCEPTED", "langgraph_agent"]
