"""The agent a suite imported from promptfoo runs: a stub to fill in.

``caseforge import promptfoo`` copies this file into a new suite as ``promptfoo_agent.py``
(and never rewrites it: it is yours to edit). caseforge itself never imports it.

promptfoo sent each test's prompt to each of its providers. caseforge calls
``run(input, ctx)`` once per case and trial:

- ``input`` holds the test's vars, and ``input["prompt"]`` the prompt rendered with them
  (when the config had one prompt that could be rendered);
- ``ctx.config`` is the configuration, one per provider (and prompt): ``provider``
  (promptfoo's id), ``model``, ``options`` (the provider's config) and ``prompt`` (the
  template, which :func:`prompt_of` renders when the input has no ``prompt``).

As written, ``run`` sends the prompt to ``ctx.config["model"]`` through ``ctx.llm()``, an
OpenAI-compatible endpoint (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``), and returns the reply
the checks grade. Fill in what that does not cover:

- a provider that is not OpenAI-compatible (Anthropic, Bedrock, Vertex…): call its SDK
  (report ``usage`` with ``cost_usd`` for the ``cost`` checks);
- a provider of your own (``file://provider.py``, ``exec:…``, an HTTP endpoint): call it;
- the agent under test itself, if promptfoo was testing a prompt of it.
"""

from __future__ import annotations

import json
import re
from typing import Any

_VAR = re.compile(r"\{\{\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[\d+\])*)\s*\}\}")
_STEP = re.compile(r"[A-Za-z_$][\w$]*|\d+")


def prompt_of(input: dict[str, Any], config: dict[str, Any]) -> str:
    """The case's prompt: ``input["prompt"]``, else the configuration's template with each
    ``{{ var }}`` (or ``{{ var.key }}``, ``{{ var[0] }}``) replaced by the input's value. A
    template that is JSON (a chat prompt) has them replaced inside its strings, as promptfoo
    does, so the prompt stays valid JSON."""
    prompt = input.get("prompt")
    if isinstance(prompt, str):
        return prompt
    template = config.get("prompt")
    if isinstance(template, str):
        try:
            parsed = json.loads(template)
        except ValueError:
            parsed = template
        if isinstance(parsed, str):
            return _fill(template, input)
        return json.dumps(_fill_in(parsed, input), ensure_ascii=False, indent=2)
    raise NotImplementedError(
        "this case has no prompt and its configuration no template: build the prompt from "
        "the input here (promptfoo_agent.prompt_of)"
    )


def _fill(template: str, input: dict[str, Any]) -> str:
    return _VAR.sub(lambda m: _text(_lookup(input, m.group(1))), template)


def _fill_in(value: object, input: dict[str, Any]) -> object:
    if isinstance(value, str):
        return _fill(value, input)
    if isinstance(value, list):
        return [_fill_in(item, input) for item in value]
    if isinstance(value, dict):
        return {key: _fill_in(item, input) for key, item in value.items()}
    return value


def _lookup(input: dict[str, Any], path: str) -> object:
    value: object = input
    for step in _STEP.findall(path):
        if isinstance(value, dict):
            value = value.get(step)
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return None
    return value


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def messages_of(prompt: str) -> list[dict[str, Any]]:
    """Chat messages: the prompt's own, when it is a JSON list of ``{role, content}`` (as
    promptfoo's chat prompts are), else one user message."""
    try:
        parsed = json.loads(prompt)
    except ValueError:
        parsed = None
    if (
        isinstance(parsed, list)
        and parsed
        and all(isinstance(m, dict) and "role" in m for m in parsed)
    ):
        return parsed
    return [{"role": "user", "content": prompt}]


async def run(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """One case-trial: the prompt to the configuration's model; its answer is the reply."""
    config: dict[str, Any] = ctx.config or {}
    model = config.get("model")
    if not model:
        raise NotImplementedError(
            f"the provider {config.get('provider')!r} names no model caseforge can call: call "
            "it in promptfoo_agent.run"
        )
    options = config.get("options") or {}
    client = ctx.llm(model=str(model))
    temperature = options.get("temperature")
    max_tokens = options.get("max_tokens", options.get("max_completion_tokens"))
    result = await client.chat(
        messages_of(prompt_of(input, config)),
        temperature=float(temperature) if isinstance(temperature, int | float) else 0.0,
        max_tokens=int(max_tokens) if isinstance(max_tokens, int) else None,
    )
    return {"reply": result.text}
