"""A throw-away Ray cluster on loopback for the tests, one per test session.

`ray start --head --block` runs in a process group of its own: two CPUs, a 100 MB object
store, no dashboard, usage stats off, token authentication with a token of the session's
own, and its files in a temporary folder. Ray's servers listen on 127.0.0.1 only because
`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` makes it take the node for a laptop. The workers
inherit `PYTHONPATH`, so they import the tests' agents. Ending the group stops the cluster.

Without Ray the Ray tests are skipped, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import free_port

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class RayCluster:
    address: str
    env: dict[str, str]  # what a driver needs to reach it (RAY_ADDRESS and the token)


def start_ray() -> Iterator[RayCluster]:
    ray = Path(sys.executable).with_name("ray")
    if not ray.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("Ray is needed in CI: `make test` installs caseforge[dev], which has it")
        pytest.skip("Ray not installed (pip install 'caseforge[ray]')")
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="cfray-"))
    env = {
        "RAY_ADDRESS": f"127.0.0.1:{port}",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(16),
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    log = (folder / "start.log").open("wb")
    head = subprocess.Popen(
        [
            str(ray), "start", "--head", "--block", f"--port={port}",
            "--node-ip-address=127.0.0.1", "--num-cpus=2", "--include-dashboard=false",
            "--object-store-memory=100000000", "--disable-usage-stats",
            f"--temp-dir={folder}",
        ],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while b"Ray runtime started" not in (folder / "start.log").read_bytes():
            if head.poll() is not None or time.monotonic() > deadline:
                text = (folder / "start.log").read_text(errors="replace")[-2000:]
                pytest.fail(f"the test Ray cluster did not start:\n{text}")
            time.sleep(0.2)
        yield RayCluster(env["RAY_ADDRESS"], env)
    finally:
        # The group holds `ray start`, the GCS, the raylet and every worker: a throw-away
        # cluster has nothing to save, so they are killed at once.
        os.killpg(head.pid, signal.SIGKILL)
        head.wait(timeout=30)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
