"""An agent that imports in the test's own processes but not on a Ray worker, which gets
only the environment caseforge passes it: for the test of a worker that cannot start."""

from __future__ import annotations

import os
from typing import Any

if "CASEFORGE_TEST_DRIVER" not in os.environ:
    raise ImportError("this agent imports only where CASEFORGE_TEST_DRIVER is set")


async def run(input: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {"output": {"category": "refund"}}
