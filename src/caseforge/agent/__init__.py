"""The agent protocol, the per-trial context, and the transports that reach an agent."""

from caseforge.agent.context import AgentContext
from caseforge.agent.protocol import (
    AgentProtocolError,
    AgentRequest,
    AgentResult,
    ToolCall,
    Usage,
    parse_response,
)

__all__ = [
    "AgentContext",
    "AgentProtocolError",
    "AgentRequest",
    "AgentResult",
    "ToolCall",
    "Usage",
    "parse_response",
]
