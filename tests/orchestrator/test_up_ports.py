"""`netharvest up` checks the demo site's ports before starting anything; a stack just stopped must not make it
refuse them (its connections linger in TIME_WAIT for a minute, which keeps out only a listener without
SO_REUSEADDR, and every server of the stack sets it)."""

from __future__ import annotations

import socket

from orchestrator.harvest.management.commands.up import _port_free


def _server_closed_first() -> int:
    """A port whose listener served one connection and closed it first (its side in TIME_WAIT), now closed."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    served, _ = listener.accept()
    served.close()  # the server closes first: its end of the connection waits in TIME_WAIT
    client.recv(1)
    client.close()
    listener.close()
    return port


def test_a_port_left_in_time_wait_by_a_stopped_server_is_free():
    port = _server_closed_first()
    plain = socket.socket()
    try:
        plain.bind(("127.0.0.1", port))
        lingering = False
    except OSError:
        lingering = True
    finally:
        plain.close()
    assert lingering, "no TIME_WAIT was left: this test would prove nothing"
    assert _port_free(port)


def test_a_port_with_a_listener_is_taken():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert not _port_free(listener.getsockname()[1])
