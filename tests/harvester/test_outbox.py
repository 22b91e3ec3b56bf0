"""The job's outbox: messages kept on disk in order until the broker takes them (harvester.outbox)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harvester.outbox import Outbox


class BrokerDown(ConnectionError):
    pass


def test_messages_wait_in_order_until_published_and_heartbeats_coalesce(tmp_path: Path) -> None:
    box = Outbox(tmp_path)
    box.put("started", [1, "h"])
    box.put("progress", [{"uris_done": 1}], coalesce=True)
    box.put("applied", [1, 7, "2026-01-01T00:00:00Z"])
    box.put("progress", [{"uris_done": 2}], coalesce=True)  # replaces the undelivered heartbeat
    sent: list[tuple[str, list[Any]]] = []

    def down(task: str, args: list[Any]) -> None:
        if len(sent) == 1:
            raise BrokerDown("the broker went away")
        sent.append((task, args))

    with pytest.raises(BrokerDown):
        box.flush(down)
    assert sent == [("started", [1, "h"])]  # delivered and removed; the rest waits
    assert len(box.pending()) == 2

    again = Outbox(tmp_path)  # a restarted worker carries on with the same files, numbering after them
    again.put("result", [{"status": "DONE"}])
    again.flush(lambda task, args: sent.append((task, args)))
    assert [t for t, _ in sent] == ["started", "applied", "progress", "result"]
    assert sent[2][1] == [{"uris_done": 2}]
    assert again.pending() == []


def test_a_progress_file_the_child_has_not_rewritten_is_still_a_heartbeat(tmp_path: Path) -> None:
    """The reaper fails a job after a minute without heartbeats: while the child lives the parent sends one
    every interval, even when the child's reactor was too busy to rewrite its progress file."""
    import json

    from harvester.defaults import PROGRESS_INTERVAL_S
    from harvester.process import PROGRESS_FILE
    from harvester.runjob import _ProgressRelay

    (tmp_path / PROGRESS_FILE).write_text(json.dumps({"job_id": 7, "uris_done": 3}))
    box = Outbox(tmp_path)
    relay = _ProgressRelay(tmp_path, box)
    sent: list[tuple[str, list[Any]]] = []
    relay.poll()
    box.flush(lambda task, args: sent.append((task, args)))
    relay.last_sent -= PROGRESS_INTERVAL_S  # an interval passes; the file is unchanged
    relay.poll()
    box.flush(lambda task, args: sent.append((task, args)))
    assert [args[0]["uris_done"] for _, args in sent] == [3, 3]


@pytest.mark.timeout(120)  # the old code waited for TCP to give up on the dead socket (~15 minutes)
def test_a_broker_that_answers_nothing_is_given_up_on_in_seconds(tmp_path: Path) -> None:
    """A broker host that vanished without a reset (powered off, cut off) looks like a socket that accepts and
    never answers. The harvester's link must fail over to its back-off, not hang: a hung parent sends no
    heartbeats, and the reaper would take its live crawl for dead."""
    import os
    import socket
    import subprocess
    import sys
    import threading

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    held: list[socket.socket] = []
    threading.Thread(target=lambda: [held.append(silent.accept()[0]) for _ in range(8)], daemon=True).start()
    script = (
        "from harvester.runjob import BrokerLink, publish\n"
        "link = BrokerLink(1)\n"
        "print('published' if link.attempt(lambda: publish('orchestrator.record_progress', [{}])) "
        "else 'gave up')\n"
    )
    env = {
        **os.environ,
        "NETHARVEST_BROKER_URL": f"redis://127.0.0.1:{silent.getsockname()[1]}/0",
        "NETHARVEST_DATA_DIR": str(tmp_path),
    }
    try:
        result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=100)
    finally:
        silent.close()
        for conn in held:
            conn.close()
    assert result.stdout.strip() == "gave up", result.stderr[-2000:]
