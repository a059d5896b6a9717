"""A toy agent for the runner tests; ``input.behaviour`` picks what it does."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
import time
from typing import Any

from caseforge.agent import AgentContext
from caseforge.agent.transports import TransientAgentError

ATTEMPTS: dict[str, int] = {}
CALLS: list[str] = []  # every in-process call, as "case/trial"


def answer(input: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
    # A configuration can name cases to get wrong: {"fail": [case ids]}.
    wrong = ctx.case_id in ctx.config.get("fail", [])
    flags = input.get("flags", [])
    return {
        "output": {
            "category": "other" if wrong else input.get("want", "refund"),
            "flags": flags[:-1] if wrong and ctx.config.get("drop_flag") else flags,
        },
        "reply": f"seed {ctx.seed} clock {ctx.now().isoformat()}",
        "usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": input.get("cost", 0.001)},
    }


async def run(input: dict[str, Any], ctx: AgentContext) -> Any:
    CALLS.append(f"{ctx.case_id}/{ctx.trial}")
    behaviour = input.get("behaviour", "ok")
    if behaviour == "hang":
        await asyncio.sleep(60)
    if behaviour == "crash":
        raise RuntimeError("the agent fell over")
    if behaviour == "bad_output":
        return {"reply": "no output here"}
    if behaviour == "not_a_dict":
        return ["nope"]
    if behaviour == "transient":
        key = f"{ctx.case_id}/{ctx.trial}"
        ATTEMPTS[key] = ATTEMPTS.get(key, 0) + 1
        if ATTEMPTS[key] < input.get("fail_times", 2):
            raise TransientAgentError("HTTP 429 from the model")
    if behaviour == "always_transient":
        raise ConnectionResetError("connection reset by peer")
    if behaviour == "external":
        weather = await ctx.external(
            "weather", {"city": input["city"]}, lambda: {"temp": random.randint(0, 40)}
        )
        result = answer(input, ctx)
        result["output"]["temp"] = weather["temp"]
        return result
    if behaviour == "llm":  # input.calls model calls through ctx.llm(); no usage reported
        client = ctx.llm(model="gpt-4.1-mini")
        for _ in range(input.get("calls", 1)):
            await client.chat([{"role": "user", "content": "hi"}])
        result = answer(input, ctx)
        del result["usage"]
        return result
    if behaviour == "worker":  # for the Ray tests: which process ran it
        if input.get("llm"):
            await ctx.llm(model="gpt-4.1-mini").chat([{"role": "user", "content": ctx.case_id}])
        marker = input.get("kill_once")  # the first to get here kills its own process
        if marker and ctx.trial == 1 and not os.path.exists(marker):
            open(marker, "w").close()
            await asyncio.sleep(input.get("kill_after", 0.2))
            os.kill(os.getpid(), signal.SIGKILL)
        await asyncio.sleep(input.get("sleep", 0))
        result = answer(input, ctx)
        result["output"]["pid"] = os.getpid()
        del result["usage"]  # the ctx.llm() call's, if any
        return result
    if behaviour == "slow":
        await asyncio.sleep(input.get("sleep", 0.05))
    if behaviour == "flip":
        ok = random.Random(ctx.seed).random() < 0.5
        result = answer(input, ctx)
        result["output"]["category"] = "refund" if ok else "other"
        return result
    if behaviour == "tools":
        result = answer(input, ctx)
        result["tool_calls"] = [
            {"name": "get_invoice", "args": {"id": "INV-7"}, "result": {"amount": 12.5}}
        ]
        return result
    if behaviour == "clock":
        result = answer(input, ctx)
        result["output"]["wall"] = time.time()
        return result
    return answer(input, ctx)


def run_sync(input: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
    if input.get("behaviour") == "hang":
        time.sleep(600)  # a thread Python cannot stop
    return answer(input, ctx)


def main() -> None:
    """The same agent as a command: one JSON request on stdin, one response on stdout."""
    request = json.load(sys.stdin)
    behaviour = request["input"].get("behaviour", "ok")
    if behaviour == "crash":
        print("Traceback: something broke", file=sys.stderr)
        sys.exit(3)
    if behaviour == "bad_output":
        print("this is not json")
        return
    if behaviour == "hang":
        time.sleep(60)
    if behaviour == "echo":  # hand back the request exactly as it arrived
        print(json.dumps({"output": {"category": "refund", "request": request}}))
        return
    print(
        json.dumps({"output": {"category": request["input"].get("want", "refund")}, "reply": "ok"})
    )


if __name__ == "__main__":
    main()
