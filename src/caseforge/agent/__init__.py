"""The agent protocol, the per-trial context, and the transports that reach an agent.

Names are imported on first use, so importing one module of the package does not
load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caseforge.imports import lazy_names

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.agent.context import AgentContext as AgentContext
    from caseforge.agent.protocol import AgentProtocolError as AgentProtocolError
    from caseforge.agent.protocol import AgentRequest as AgentRequest
    from caseforge.agent.protocol import AgentResult as AgentResult
    from caseforge.agent.protocol import ToolCall as ToolCall
    from caseforge.agent.protocol import Usage as Usage
    from caseforge.agent.protocol import parse_response as parse_response

_WHERE = {
    "AgentContext": "caseforge.agent.context",
    "AgentProtocolError": "caseforge.agent.protocol",
    "AgentRequest": "caseforge.agent.protocol",
    "AgentResult": "caseforge.agent.protocol",
    "ToolCall": "caseforge.agent.protocol",
    "Usage": "caseforge.agent.protocol",
    "parse_response": "caseforge.agent.protocol",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_names("caseforge.agent", _WHERE)
