"""The embedded broker under concurrent producers and consumers: no torn read, no loss, no duplicate."""

from __future__ import annotations

import multiprocessing
import queue as queue_mod
from pathlib import Path

from kombu import Connection

import harvester.runtime  # noqa: F401  (registers the filesystem:// alias)

PER_PRODUCER = 400
TRANSPORT = "filesystem"  # what harvester.runtime registers: harvester.fsbroker


def _options(root: Path) -> dict[str, object]:
    for name in ("queue", "control", "processed"):
        (root / name).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(root / "queue"),
        "data_folder_out": str(root / "queue"),
        "control_folder": str(root / "control"),
        "processed_folder": str(root / "processed"),
        "store_processed": False,
        "polling_interval": 0.01,
    }


def _produce(root: str, producer: int) -> None:
    with Connection("filesystem://", transport=TRANSPORT, transport_options=_options(Path(root))) as conn:
        q = conn.SimpleQueue("work")
        for i in range(PER_PRODUCER):
            q.put({"producer": producer, "i": i, "padding": "x" * 2000})
        q.close()


def _consume(root: str, out: multiprocessing.Queue, expected: int) -> None:
    got = []
    with Connection("filesystem://", transport=TRANSPORT, transport_options=_options(Path(root))) as conn:
        q = conn.SimpleQueue("work")
        idle = 0
        while idle < 30:
            try:
                message = q.get(timeout=0.1)
            except queue_mod.Empty:
                idle += 1
                continue
            idle = 0
            got.append((message.payload["producer"], message.payload["i"]))
            message.ack()
        q.close()
    out.put(got)


def test_concurrent_producers_and_consumers_lose_and_duplicate_nothing(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue = ctx.Queue()
    consumers = [ctx.Process(target=_consume, args=(str(tmp_path), results, 2 * PER_PRODUCER)) for _ in range(2)]
    producers = [ctx.Process(target=_produce, args=(str(tmp_path), n)) for n in range(2)]
    for p in consumers + producers:
        p.start()
    received = [results.get(timeout=120) for _ in consumers]
    for p in consumers + producers:
        p.join(timeout=30)
        assert p.exitcode == 0
    everything = [item for part in received for item in part]
    assert len(everything) == len(set(everything)) == 2 * PER_PRODUCER
    assert sorted(everything) == sorted((p, i) for p in range(2) for i in range(PER_PRODUCER))
    assert not [name for name in (tmp_path / "queue").iterdir()]


def test_a_hostless_url_connects_without_kombus_no_hostname_warning(tmp_path, caplog):
    """`filesystem://` has no host: kombu warned "No hostname was supplied" on stderr for each connection, so every
    `netharvest` command on the embedded default (`harvests run-now` …) printed a WARNING a newcomer cannot act on."""
    options = _options(tmp_path)
    with caplog.at_level("WARNING"), Connection("filesystem://", transport=TRANSPORT, transport_options=options) as c:
        with c.clone() as conn:  # as Celery's producer pool does (kombu warned while copying the settings)
            q = conn.SimpleQueue("work")
            q.put({"hello": 1})
            message = q.get(timeout=5)
            message.ack()
            assert message.payload == {"hello": 1}
            q.close()
    assert not [r for r in caplog.records if "hostname" in r.getMessage()]
