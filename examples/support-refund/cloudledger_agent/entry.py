"""The suite's callable (``agent: {callable: "cloudledger_agent.entry:run"}``).

It picks the agent by ``ctx.config["version"]``: ``llm`` runs the model-backed agent
(:mod:`cloudledger_agent.llm_agent`, async), anything else the offline reference agent
(:mod:`cloudledger_agent.agent`, sync, run in a worker thread so the event loop stays
free), which keeps its own check of the version (``v1``, ``v2``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from cloudledger_agent import agent, llm_agent

LLM_VERSION = "llm"


async def run(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Answer one ticket with the agent the configuration names."""
    config = getattr(ctx, "config", None)
    version = config.get("version") if isinstance(config, dict) else None
    if version == LLM_VERSION:
        return await llm_agent.run(input, ctx)
    return await asyncio.to_thread(agent.run, input, ctx)
