"""A TCP port nothing listens on, for a throw-away server (PostgreSQL, Ray, uvicorn)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port on 127.0.0.1 the system just handed out and released again."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
