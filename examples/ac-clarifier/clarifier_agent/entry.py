"""The suite's callable (``agent: {callable: "clarifier_agent.entry:run"}``).

A configuration with a ``model`` key runs the model-backed reviewer
(:mod:`clarifier_agent.llm_agent`, async); any other the offline rule-based reviewer
(:mod:`clarifier_agent.agent`, sync, run in a worker thread so the event loop stays
free). Both read ``mode`` (``checklist`` or ``holistic``) from the configuration.
"""

from __future__ import annotations

import asyncio
from typing import Any

from clarifier_agent import agent, llm_agent


def uses_model(config: Any) -> bool:
    """Whether a configuration names a model (e.g. ``{mode: checklist, model: gpt-4.1-mini}``)."""
    return isinstance(config, dict) and bool(config.get("model"))


async def run(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Review one card with the reviewer the configuration names."""
    if uses_model(getattr(ctx, "config", None)):
        return await llm_agent.run(input, ctx)
    return await asyncio.to_thread(agent.run, input, ctx)
