"""Loopback servers a benchmark starts for itself (a moto S3, a pywb): a free port, and waiting until the
server listens on it."""

from __future__ import annotations

import socket
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, seconds: float) -> None:
    """Return once 127.0.0.1:``port`` accepts a connection, or after ``seconds`` (the benchmark's first request
    then says what is wrong); polled every 0.1 s."""
    for _ in range(int(seconds * 10)):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
