"""The suite's callable: ``run(input, ctx) -> dict`` (docs/reference/agent-protocol.md).

An offline, rule-based simulation of an LLM reviewer, in two configurations picked by
``ctx.config["mode"]``:

- ``checklist``: AC by AC, each against the description and against every other AC.
- ``holistic``: the card read as a whole. Once an AC is flagged ``conflict`` it is not
  read against the description again, so the ``mismatch`` on an AC that is both is lost
  (the failure this suite was built around). The other three blocks are unchanged.

Like a sampled model, each review can slip: with a small seeded probability
(``random.Random(ctx.seed)``) it overlooks one vague AC. The slip rate is
``ctx.config["slip_rate"]`` when given, else 0.02 for checklist and 0.2 for holistic.
Usage is estimated from text lengths at a fictional price, so cost tracking has numbers.
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import Any

from clarifier_agent.card import parse_card
from clarifier_agent.review import review_card
from clarifier_agent.scope import goal, scope_in, scope_out

MODES = ("checklist", "holistic")
DEFAULT_SLIP_RATE = {"checklist": 0.02, "holistic": 0.2}

# A fictional model price (USD per million tokens) and prompt size.
PRICE_IN_PER_M = 0.40
PRICE_OUT_PER_M = 1.60
SYSTEM_PROMPT_TOKENS = 420
NOTE_TOKENS_PER_AC = 38

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    """About one token per CJK character and one per four other characters."""
    cjk = len(CJK.findall(text))
    other = len(re.sub(r"\s", "", CJK.sub("", text)))
    return cjk + math.ceil(other / 4)


def _usage(
    card_text: str, description: str, output: dict[str, Any], acs: int, mode: str
) -> dict[str, Any]:
    card_tokens = estimate_tokens(card_text)
    out_tokens = estimate_tokens(json.dumps(output, ensure_ascii=False))
    if mode == "checklist":
        # One read of the card, then one short pass per AC with the description beside it.
        passes = acs * (SYSTEM_PROMPT_TOKENS // 4 + estimate_tokens(description) + 40)
        input_tokens = SYSTEM_PROMPT_TOKENS + card_tokens + passes
        output_tokens = out_tokens + acs * NOTE_TOKENS_PER_AC
    else:
        input_tokens = SYSTEM_PROMPT_TOKENS + card_tokens
        output_tokens = out_tokens + acs * NOTE_TOKENS_PER_AC // 3
    cost = (input_tokens * PRICE_IN_PER_M + output_tokens * PRICE_OUT_PER_M) / 1_000_000
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": round(cost, 6),
    }


def _mode(config: dict[str, Any] | None) -> str:
    mode = (config or {}).get("mode", "checklist")
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; this agent knows {', '.join(MODES)}")
    return str(mode)


def run(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Review one card and return the four blocks, usage and a trace of the review."""
    card_text = input.get("card")
    if not isinstance(card_text, str) or not card_text.strip():
        raise ValueError("input.card must be the card's text")
    config = getattr(ctx, "config", None) or {}
    mode = _mode(config)
    rng = random.Random(getattr(ctx, "seed", 0))

    card = parse_card(card_text)
    review = review_card(card, mode)
    # Scope in leaves out every AC the thorough review doubts, in both modes: a slip in
    # the flags does not change the other blocks.
    doubted = {flag.number for flag in review_card(card, "checklist").flags}

    trace: list[dict[str, Any]] = [
        {"step": "read", "mode": mode, "acs": len(card.acs), "chat": len(card.chat)},
        *review.notes,
    ]
    slip_rate = float(config.get("slip_rate", DEFAULT_SLIP_RATE[mode]))
    vague = [f for f in review.flags if f.kind == "unverifiable"]
    if vague and rng.random() < slip_rate:
        missed = rng.choice(vague)
        review.drop(missed)
        trace.append({"step": "slip", "missed": missed.label, "why": "overlooked a vague AC"})
    trace += [{"step": "flag", "flag": f.label, "why": f.why} for f in review.flags]

    output = {
        "goal": goal(card),
        "scope_in": scope_in(card, doubted),
        "scope_out": scope_out(card),
        "ac_flags": review.labels(),
    }
    return {
        "output": output,
        "reply": "",
        "usage": _usage(card_text, card.description_text, output, len(card.acs), mode),
        "trace": trace,
    }
