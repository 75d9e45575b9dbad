"""A free loopback TCP port, for the servers rotbench starts (Prefect, a world's PostgreSQL,
the test stack)."""

from __future__ import annotations

import socket


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that no socket holds at the moment of the call (the kernel's
    choice for a bind to port 0). Another process may take it before the caller binds, so a
    caller that starts a server on it retries on a new port when the start fails."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


__all__ = ["free_loopback_port"]
