"""The dedup service as a real process on 127.0.0.1: the SQLite index's answers, batches, idempotent feeding,
migration from SQLite, a clean SIGTERM and a restart; and a harvester's Deduplicator when it is away."""

from __future__ import annotations

import dataclasses
import json
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harvester.revisit import Deduplicator
from indexer import dedupclient, dedupservice
from indexer.dedup import Capture, DedupIndex
from indexer.dedupclient import DedupClient
from indexer.dedupfeed import add_warc, iter_captures
from indexer.dedupservice import load_sqlite
from tests.conftest import free_port
from tests.dedupsvc import ServiceProcess
from tests.indexer.warcs import build_warc, one_response


@pytest.fixture()
def warcs(tmp_path: Path) -> list[tuple[Path, str]]:
    """The existing dedup tests' cases: one WARC of every record kind, and one URL captured twice with the
    later capture indexed first."""
    return [
        (build_warc(tmp_path / "a.warc.gz"), "a.warc.gz"),
        (one_response(tmp_path / "new.warc.gz", "2026-01-01T00:00:00Z", '"v2"'), "new.warc.gz"),
        (one_response(tmp_path / "old.warc.gz", "2025-01-01T00:00:00Z", '"v1"'), "old.warc.gz"),
        (one_response(tmp_path / "same.warc.gz", "2026-01-01T00:00:00Z", '"v3"', b"other body"), "same.warc.gz"),
    ]


@pytest.fixture()
def service(tmp_path: Path) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path / "store")
    yield svc
    svc.stop(signal.SIGKILL)


def _answers(source: object, digests: list[str], urls: list[str]) -> tuple[dict, dict]:
    if isinstance(source, DedupClient):
        return source.lookup(digests, urls)
    assert isinstance(source, DedupIndex)
    return ({d: c for d in digests if (c := source.by_digest(d))}, {u: c for u in urls if (c := source.by_url(u))})


def test_the_service_answers_as_the_sqlite_index_and_a_second_feed_changes_nothing(tmp_path, warcs, service):
    client = DedupClient(service.url)
    with DedupIndex(tmp_path / "d.sqlite") as idx:
        for path, name in warcs:
            add_warc(idx, path, name)
            assert client.add(iter_captures(path, name)) == len(list(iter_captures(path, name)))
        digests = [r[0] for r in idx.db.execute("SELECT digest FROM by_digest")] + ["sha1:" + "A" * 32, "md5:x"]
        urls = [r[0] for r in idx.db.execute("SELECT url FROM by_url")] + ["http://example.com/old"]
        expected = _answers(idx, digests, urls)
    assert _answers(client, digests, urls) == expected
    assert expected[1]["http://example.com/x"].etag == '"v3"'  # the latest of equal timestamps: fed last
    assert expected[0][expected[1]["http://example.com/p1?b=2&a=1"].digest].mime == "text/html"
    for path, name in warcs:  # a re-run after a crash
        client.add(iter_captures(path, name))
    assert _answers(client, digests, urls) == expected

    # The migration path: the SQLite file loaded into a second, empty service gives the same answers, twice.
    other = ServiceProcess(tmp_path / "store2")
    try:
        fresh = DedupClient(other.url)
        n = load_sqlite(fresh, tmp_path / "d.sqlite")
        assert n == len(expected[0]) + len(expected[1]) and load_sqlite(fresh, tmp_path / "d.sqlite") == n
        assert _answers(fresh, digests, urls) == expected
    finally:
        assert other.stop() == 0  # SIGTERM: a clean exit


def test_batches_bad_requests_and_a_restart_keeps_everything(tmp_path, service, monkeypatch):
    monkeypatch.setattr(dedupclient, "LOOKUP_CHUNK", 700)
    monkeypatch.setattr(dedupclient, "ADD_CHUNK", 900)
    client = DedupClient(service.url)
    caps = [
        Capture(
            f"sha1:{i:032d}", f"http://h{i % 7}.example/{i}", "20260101000000", "f.warc.gz", i, "image/png", f'"{i}"'
        )
        for i in range(2500)
    ]
    assert client.add(caps) == 2500  # three requests
    digests, urls = client.lookup([c.digest for c in caps] + ["sha1:nope"], [c.url for c in caps])  # eight
    assert len(digests) == len(urls) == 2500 and urls[caps[9].url] == caps[9]
    assert digests[caps[9].digest] == dataclasses.replace(caps[9], etag="")  # the digest side keeps no validators

    for body, words in (
        (b"[1]", "JSON object"),
        (b"{nope", "not JSON"),
        (b'{"digests": [1]}', "lists of strings"),
        (b'{"captures": [["x"]]}', "8 fields"),
    ):
        path = "/add" if b"captures" in body else "/lookup"
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(urllib.request.Request(service.url + path, data=body), timeout=5)
        assert err.value.code == 400 and words in json.loads(err.value.read())["error"]
    assert client.health()["ok"]  # bad requests never stop the service

    client.close()
    assert service.stop() == 0
    again = ServiceProcess(service.store)
    try:
        assert DedupClient(again.url).lookup([], [caps[2499].url])[1][caps[2499].url] == caps[2499]
    finally:
        again.stop()


def test_a_harvester_goes_on_within_its_job_while_the_service_is_away_and_uses_it_when_back(tmp_path, monkeypatch):
    import harvester.revisit as revisit

    monkeypatch.setattr(revisit, "SERVICE_RETRY_S", 0.0)
    earlier = Capture(
        "sha1:" + "B" * 32, "http://example.com/a", "20250101000000", "old.warc.gz", 5, "image/png", '"e"'
    )
    port = free_port()  # nobody answers there yet
    dedup = Deduplicator(True, f"http://127.0.0.1:{port}")
    assert dedup.lookup(earlier.digest) is None  # refused at once: no referent, no exception, no wait
    dedup.prefetch(["http://example.com/a"])
    assert dedup.conditional_headers("http://example.com/a") == ({}, None)
    dedup.remember("sha1:" + "C" * 32, "http://example.com/c", "2026-01-01T00:00:00Z", "<urn:uuid:1>")
    assert dedup.lookup("sha1:" + "C" * 32).record_id == "<urn:uuid:1>"  # within the job: unaffected
    assert dedup.alert and "unreachable" in dedup.alert and "within-job dedup goes on" in dedup.alert
    assert "dedup service last error" in dedup.report_lines()[1]

    svc = ServiceProcess(tmp_path / "store", port=port)  # the service comes back
    try:
        DedupClient(svc.url).add([earlier])
        dedup.prefetch(["http://example.com/a", "http://example.com/unknown"])
        assert dedup.prefetched == {"http://example.com/a": earlier, "http://example.com/unknown": None}
        headers, capture = dedup.conditional_headers("http://example.com/a")
        assert capture == earlier and headers[b"If-None-Match"] == b'"e"'  # from the prefetch
        assert dedup.lookup(earlier.digest).target_uri == "http://example.com/a"
        assert "was unreachable" in (dedup.alert or "")
    finally:
        dedup.close()
        svc.stop()


def test_sigterm_answers_the_last_lookups_then_stops(tmp_path):
    """A stack stops its processes together: after SIGTERM the service answers the harvesters' lookups as
    long as they keep coming (a refused one would store a full copy of a known page), then exits 0 once none
    came for DRAIN_IDLE_S, even with a keep-alive connection left open and idle."""
    svc = ServiceProcess(tmp_path / "store")
    client = DedupClient(svc.url)
    try:
        client.add([Capture("sha1:" + "B" * 32, "http://example.com/", "20260101000000", "a.warc.gz", 0, "text/html")])
        svc.proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        while time.monotonic() - signalled < 3 * dedupservice.DRAIN_IDLE_S:  # a crawl ending its last pages
            digests, _ = client.lookup(["sha1:" + "B" * 32], [])
            assert "sha1:" + "B" * 32 in digests
            time.sleep(0.2)
        assert svc.proc.poll() is None  # still serving while asked
        last = time.monotonic()
        assert svc.proc.wait(timeout=10) == 0  # the client's connection is still open, and idle
        assert time.monotonic() - last < dedupservice.DRAIN_IDLE_S + 3
    finally:
        client.close()
        svc.stop(signal.SIGKILL)


def test_a_request_on_a_kept_alive_connection_after_the_stop_gets_503_not_a_closed_store(tmp_path):
    """Review: shutdown() stops only the accept loop; a harvester's keep-alive connection has a thread of its
    own, and a lookup on it while the store closed failed inside RocksDB (500). Now requests are refused with
    503 once the service closes, and the store closes only after those under way."""
    import http.client
    import threading

    from indexer.dedupstore import DedupStore

    store = DedupStore(tmp_path / "store")
    server = dedupservice.DedupServer(f"127.0.0.1:{free_port()}", store)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=5)
    try:
        body = json.dumps({"digests": ["sha1:" + "C" * 32], "urls": []})
        conn.request("POST", "/lookup", body, {"Content-Type": "application/json"})
        first = conn.getresponse()
        assert first.status == 200 and json.loads(first.read()) == {"digests": {}, "urls": {}}
        server.shutdown()
        thread.join(5)
        server.close_requests()
        store.close()
        conn.request("POST", "/lookup", body, {"Content-Type": "application/json"})  # the same connection
        late = conn.getresponse()
        assert late.status == 503 and "stopping" in json.loads(late.read())["error"]
    finally:
        conn.close()
        server.server_close()


def test_a_harvester_killed_on_a_kept_alive_connection_is_one_line_not_a_traceback(tmp_path, capsys, caplog):
    """A crawl process killed (kill -9, the OOM killer) resets its keep-alive connection: socketserver printed
    a ConnectionResetError traceback, as if the dedup service had failed. One line now; the service answers on."""
    import http.client
    import socket
    import struct
    import threading

    from indexer.dedupstore import DedupStore

    store = DedupStore(tmp_path / "store")
    server = dedupservice.DedupServer(f"127.0.0.1:{free_port()}", store)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        with caplog.at_level("INFO", logger="netharvest.dedup"):
            killed = socket.create_connection(server.server_address[:2], timeout=5)
            killed.sendall(b"POST /lookup HTTP/1.1\r\n")  # a request under way, then the process is gone
            killed.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            killed.close()  # SO_LINGER 0: a reset, as the kernel sends for a killed process's sockets
            for _ in range(100):
                if "ended by the client" in caplog.text:
                    break
                time.sleep(0.05)
        assert "ended by the client" in caplog.text
        assert "Traceback" not in capsys.readouterr().err
        conn = http.client.HTTPConnection(*server.server_address[:2], timeout=5)
        conn.request("POST", "/lookup", json.dumps({"digests": [], "urls": []}), {"Content-Type": "application/json"})
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        server.shutdown()
        thread.join(5)
        server.close_requests()
        server.server_close()
        store.close()
