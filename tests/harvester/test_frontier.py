"""Frontier: queue states, politeness timing, valence, retries, persistence and resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from harvester.frontier import Frontier, Politeness
from harvester.politeness import MAX_RETRY_AFTER_S, politeness_delay, retry_after_seconds
from harvester.scope import canonical_key, host_key
from harvester.urimeta import UriMeta


def _frontier(db: Path | None = None, **p: float) -> Frontier:
    politeness = Politeness(
        p.get("delay_factor", 5.0),
        int(p.get("min_delay_ms", 3000)),
        int(p.get("max_delay_ms", 30000)),
        int(p.get("valence", 1)),
    )
    return Frontier(db, politeness, host_key)


def _add(f: Frontier, url: str, front: bool = False) -> None:
    f.add(url, canonical_key(url), UriMeta(path="L", via=None, hops=1, domain="d", seed=False), front=front)


def test_politeness_delay_is_duration_times_factor_clamped() -> None:
    assert politeness_delay(1.0, 5.0, 3000, 30000) == 5.0
    assert politeness_delay(0.1, 5.0, 3000, 30000) == 3.0  # min
    assert politeness_delay(20.0, 5.0, 3000, 30000) == 30.0  # max
    assert politeness_delay(0.5, 0.0, 0, 0) == 0.0


def test_retry_after() -> None:
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds(b"5") == 5.0
    assert retry_after_seconds("99999999") == MAX_RETRY_AFTER_S
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_one_host_waits_for_politeness_others_do_not() -> None:
    f = _frontier()
    for url in ("http://a.org/1", "http://a.org/2", "http://b.org/1"):
        _add(f, url)
    t = 1000.0
    first = f.next_ready(t)
    second = f.next_ready(t)
    assert {first.url, second.url} == {"http://a.org/1", "http://b.org/1"}
    assert f.next_ready(t) is None  # a.org is busy (valence 1)
    a = first if first.url.startswith("http://a.org") else second
    f.finished(a, t + 0.2, duration_s=0.2)  # 0.2 s × 5 = 1 s, clamped up to the 3 s minimum
    assert f.next_ready(t + 0.2) is None
    assert f.next_wake() == pytest.approx(t + 3.2)
    assert f.next_ready(t + 3.1) is None
    nxt = f.next_ready(t + 3.3)
    assert nxt is not None and nxt.url == "http://a.org/2"
    states = f.queue_states(t + 3.3)
    assert states["in-process"] == 2


def test_slow_fetch_gives_longer_delay() -> None:
    f = _frontier()
    _add(f, "http://a.org/1")
    _add(f, "http://a.org/2")
    e = f.next_ready(0.0)
    f.finished(e, 10.0, duration_s=2.0)  # 2 s × 5 = 10 s
    assert f.next_wake() == pytest.approx(20.0)


def test_valence_allows_parallel_fetches_per_queue() -> None:
    f = _frontier(valence=2, min_delay_ms=0, max_delay_ms=0, delay_factor=0)
    for i in range(4):
        _add(f, f"http://a.org/{i}")
    got = [f.next_ready(0.0), f.next_ready(0.0), f.next_ready(0.0)]
    assert [g is not None for g in got] == [True, True, False]
    f.finished(got[0], 0.0, 0.0)
    assert f.next_ready(0.0) is not None


def test_retry_goes_back_to_its_queue_after_the_delay() -> None:
    f = _frontier(min_delay_ms=0, max_delay_ms=0, delay_factor=0)
    _add(f, "http://a.org/1")
    _add(f, "http://a.org/2")
    e = f.next_ready(0.0)
    e.retries += 1
    f.schedule(e, 60.0)
    assert f.next_ready(30.0) is None  # the whole queue waits (Heritrix: retry delay snoozes it)
    again = f.next_ready(60.0)
    assert again is not None and again.url == "http://a.org/1" and again.retries == 1


def test_snooze_for_retry_after() -> None:
    f = _frontier(min_delay_ms=0, max_delay_ms=0, delay_factor=0)
    _add(f, "http://a.org/1")
    _add(f, "http://a.org/2")
    e = f.next_ready(0.0)
    f.finished(e, 1.0, 0.1, snooze_until=100.0)
    assert f.next_ready(50.0) is None
    assert f.next_ready(100.0) is not None


def test_seen_set_and_prerequisites_first() -> None:
    f = _frontier(min_delay_ms=0, max_delay_ms=0, delay_factor=0)
    _add(f, "http://a.org/x?b=1&a=2")
    assert f.add("http://A.org/x?b=1&a=2#top", canonical_key("http://A.org/x?b=1&a=2#top"), UriMeta()) is None
    _add(f, "http://a.org/robots.txt", front=True)
    assert f.next_ready(0.0).url == "http://a.org/robots.txt"


def test_round_robin_across_ready_queues() -> None:
    f = _frontier(min_delay_ms=0, max_delay_ms=0, delay_factor=0)
    for host in "abc":
        for i in range(2):
            _add(f, f"http://{host}.org/{i}")
    order = []
    for _ in range(6):
        e = f.next_ready(0.0)
        order.append(e.url)
        f.finished(e, 0.0, 0.0)
    assert [u.split("/")[2] for u in order[:3]] == ["a.org", "b.org", "c.org"]


def test_persistence_and_resume(tmp_path: Path) -> None:
    db = tmp_path / "state" / "frontier.sqlite"
    f = _frontier(db, min_delay_ms=0, max_delay_ms=0, delay_factor=0)
    for i in range(5):
        _add(f, f"http://a.org/{i}")
    done = f.next_ready(0.0)
    f.finished(done, 0.0, 0.0)
    retried = f.next_ready(0.0)
    retried.retries = 2
    f.schedule(retried, 0.0)
    in_flight = f.next_ready(0.0)  # emitted but never finished: the crash happens now
    f.set_state("budgets", {"d": {"objects": 1}})
    f.journal_add("digest", "sha1:AAA", ["http://a.org/0", "2026-01-01T00:00:00Z", "<urn:uuid:1>"])
    f.checkpoint()
    _add(f, "http://a.org/after-checkpoint")  # lost with the crash
    f.journal_add("digest", "sha1:BBB", ["http://a.org/9", "2026-01-01T00:00:01Z", "<urn:uuid:2>"])
    del f  # no close: as after kill -9

    g = _frontier(db, min_delay_ms=0, max_delay_ms=0, delay_factor=0)
    assert g.resumed
    assert g.kv["budgets"] == {"d": {"objects": 1}}
    assert dict(g.journal_items("digest")) == {"sha1:AAA": ["http://a.org/0", "2026-01-01T00:00:00Z", "<urn:uuid:1>"]}
    assert g.done == 1
    urls = []
    while (e := g.next_ready(0.0)) is not None:
        urls.append((e.url, e.retries))
        g.finished(e, 0.0, 0.0)
    assert done.url not in [u for u, _ in urls]
    assert (retried.url, 2) in urls
    assert in_flight.url in [u for u, _ in urls]  # emitted but unfinished: fetched again
    assert "http://a.org/after-checkpoint" not in [u for u, _ in urls]
    assert g.was_seen(canonical_key("http://a.org/0"))
    g.close()


def test_a_journal_written_before_urimeta_still_resumes(tmp_path: Path) -> None:
    """Queued URIs journalled as the plain ``nh`` dicts of an older harvester (any subset of the keys)
    come back as UriMeta; what is journalled now is the same JSON object an older harvester reads."""
    import json
    import sqlite3

    db = tmp_path / "state" / "frontier.sqlite"
    f = _frontier(db, min_delay_ms=0, max_delay_ms=0, delay_factor=0)
    _add(f, "http://a.org/full")
    _add(f, "http://a.org/partial")
    f.checkpoint()
    f.close()
    old_full = {
        "path": "LE",
        "via": "http://a.org/",
        "hops": 1,
        "domain": "d",
        "seed": False,
        "source": "http://a.org/",
    }
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE uris SET nh=? WHERE url=?", (json.dumps(old_full), "http://a.org/full"))
        conn.execute("UPDATE uris SET nh=? WHERE url=?", (json.dumps({"path": "LLP"}), "http://a.org/partial"))
    g = _frontier(db, min_delay_ms=0, max_delay_ms=0, delay_factor=0)
    entries = {}
    while (e := g.next_ready(0.0)) is not None:
        entries[e.url] = e.nh
        g.finished(e, 0.0, 0.0)
    g.close()
    assert entries["http://a.org/full"] == UriMeta("LE", "http://a.org/", 1, "d", False, "http://a.org/")
    assert entries["http://a.org/partial"] == UriMeta(path="LLP", hops=2)
    assert entries["http://a.org/partial"].prerequisite
    assert json.loads(entries["http://a.org/full"].to_json()) == old_full
    assert list(json.loads(UriMeta.for_seed("d").to_json())) == ["path", "via", "hops", "domain", "seed"]


def test_domain_politeness_scope_groups_hosts() -> None:
    from harvester.scope import registrable_domain

    f = Frontier(None, Politeness(0, 1000, 1000, 1), registrable_domain)
    _add(f, "http://www.a.org/1")
    _add(f, "http://img.a.org/1")
    assert f.next_ready(0.0) is not None
    assert f.next_ready(0.0) is None  # same politeness unit: a.org


def test_queue_tails_spill_to_the_journal_and_come_back_in_order(tmp_path: Path) -> None:
    """At most ``head_max`` URIs of a queue in memory; the tail is read back from the journal
    (committed or not), in FIFO order, each URI once, prerequisites still first."""
    db = tmp_path / "frontier.sqlite"

    def frontier() -> Frontier:
        return Frontier(db, Politeness(0, 0, 0, 1), host_key, group_of=lambda nh: nh.domain, head_max=3)

    f = frontier()
    for i in range(10):
        _add(f, f"http://a.org/{i}")
        if i == 5:
            f.checkpoint()  # 0-5 committed, 6-9 only in the pending batch
    assert len(f.queues["a.org"].items) == 3 and f.queued == 10
    assert f.remaining_by_group() == {"d": 10}
    _add(f, "http://a.org/robots.txt", front=True)  # a prerequisite while the tail is spilled
    got = []
    for _ in range(6):
        e = f.next_ready(0.0)
        got.append(e.url)
        f.finished(e, 0.0, 0.0)
    assert got == ["http://a.org/robots.txt"] + [f"http://a.org/{i}" for i in range(5)]
    assert f.remaining_by_group() == {"d": 5}
    f.checkpoint()
    del f  # as after kill -9

    g = frontier()
    assert g.queued == 5 and len(g.queues["a.org"].items) == 3
    assert g.remaining_by_group() == {"d": 5}
    rest = []
    while (e := g.next_ready(0.0)) is not None:
        rest.append(e.url)
        g.finished(e, 0.0, 0.0)
    assert rest == [f"http://a.org/{i}" for i in range(5, 10)]
    assert g.queued == 0 and g.remaining_by_group() == {}
    g.close()


def test_a_restart_keeps_each_hosts_politeness_wait(tmp_path: Path) -> None:
    """kill -9 just after a fetch, restart at once: the host still waits out its delay, a Retry-After is
    still honoured; a fetch may have gone out after the last checkpoint (here c.org's, still out at the
    kill), so every host waits at least its politeness delay from the restart; a wait long past is dropped
    from the journal."""
    import time

    db = tmp_path / "frontier.sqlite"
    f = _frontier(db, min_delay_ms=20_000)  # politeness 20-30 s
    urls = ("http://a.org/1", "http://a.org/2", "http://b.org/1", "http://b.org/2", "http://c.org/1", "http://d.org/1")
    for url in (*urls, "http://e.org/1"):
        _add(f, url)
    now = time.time()
    a, b, c, e = (f.next_ready(now) for _ in range(4))
    assert [a.queue, b.queue, c.queue, e.queue] == ["a.org", "b.org", "c.org", "d.org"]
    f.finished(a, now, duration_s=5.0)  # 5 s × 5 = 25 s politeness wait
    f.finished(b, now, duration_s=0.1, snooze_until=now + 600)  # a Retry-After of ten minutes
    e.retries = 1
    f.schedule(e, now + 300)  # a retry in five minutes
    f.checkpoint()  # c.org's fetch is still out
    f.db.execute("INSERT INTO wakes (queue, wake, delay) VALUES ('gone.org', ?, 3)", (now - 2 * 86_400,))
    f.db.close()  # as after kill -9: nothing more written

    g = _frontier(db, min_delay_ms=20_000)
    assert g.resumed
    assert g.next_ready(now + 19) is None  # no host before its delay from the restart
    ready = [g.next_ready(now + 21) for _ in range(4)]
    assert sorted(x.url for x in ready if x) == ["http://c.org/1", "http://e.org/1"]  # c.org's fetched again
    assert g.next_ready(now + 24) is None and g.next_ready(now + 26).queue == "a.org"  # its own 25 s
    assert g.next_ready(now + 299) is None and g.next_ready(now + 301).url == "http://d.org/1"  # the retry
    assert g.next_ready(now + 599) is None and g.next_ready(now + 601).queue == "b.org"
    assert [k for (k,) in g.db.execute("SELECT queue FROM wakes ORDER BY queue")] == ["a.org", "b.org", "d.org"]


def test_a_journal_with_the_first_wakes_table_still_opens(tmp_path: Path) -> None:
    """The first version of the ``wakes`` table had no ``delay`` column: such a journal gets one."""
    import sqlite3
    import time

    db = tmp_path / "frontier.sqlite"
    f = _frontier(db)
    _add(f, "http://a.org/1")
    f.checkpoint()
    f.db.execute("DROP TABLE wakes")
    f.db.execute("CREATE TABLE wakes (queue TEXT PRIMARY KEY, wake REAL NOT NULL) WITHOUT ROWID")
    f.db.execute("INSERT INTO wakes VALUES ('a.org', ?)", (time.time() + 100,))
    f.db.close()
    g = _frontier(db)
    assert g.next_ready(time.time() + 99) is None and g.next_ready(time.time() + 101).url == "http://a.org/1"
    assert sqlite3.connect(db).execute("SELECT delay FROM wakes").fetchall() == [(0.0,)]


def test_a_host_whose_queue_was_empty_at_the_restart_keeps_its_wait(tmp_path: Path) -> None:
    """A host's last URI fetched (a Retry-After of ten minutes), kill -9, restart: a link to it found after the
    restart still waits; and a retry's host waits at least the minimum delay from the restart."""
    import time

    db = tmp_path / "frontier.sqlite"
    f = _frontier(db, min_delay_ms=20_000)
    _add(f, "http://b.org/1")
    now = time.time()
    f.finished(f.next_ready(now), now, duration_s=0.1, snooze_until=now + 600)
    f.checkpoint()
    f.db.close()
    g = _frontier(db, min_delay_ms=20_000)
    _add(g, "http://b.org/2")  # found after the restart
    assert g.next_ready(now + 599) is None and g.next_ready(now + 601).url == "http://b.org/2"


def test_a_hosts_crawl_delay_outlives_the_pruning_of_old_wakes(tmp_path: Path) -> None:
    """A continuous crawl comes back to a host every few days: its queue still holds URIs when its last wake is
    long past, and its journalled delay (a Crawl-delay of 60 s) is kept by the pruning, so a restart two days
    later waits 60 s for it, not the minimum delay. An empty queue's row that old goes. The frontier runs on
    a clock of its own (a test's, the simulator's) and a restart counts from it."""
    db = tmp_path / "frontier.sqlite"
    clock = [1_000_000.0]

    def make() -> Frontier:
        return Frontier(db, Politeness(0, 3000, 3000, 1, crawl_delay_up_to_s=120), host_key, clock=lambda: clock[0])

    f = make()
    for url in ("http://a.org/1", "http://a.org/2", "http://b.org/1"):
        _add(f, url)
    now = clock[0]
    a, b = f.next_ready(now), f.next_ready(now)
    f.finished(a, now, 0.1, crawl_delay_s=60)
    f.finished(b, now, 0.1)  # b.org is empty now
    f.checkpoint()
    clock[0] = now + 2 * 86_400
    _add(f, "http://c.org/1")
    f.checkpoint()  # prunes: b.org's row goes, a.org's stays
    assert [k for (k,) in f.db.execute("SELECT queue FROM wakes")] == ["a.org"]
    f.db.close()

    g = make()
    t = clock[0]
    assert g.next_ready(t + 2) is None  # every host waits at least the minimum delay from the restart
    assert g.next_ready(t + 4).url == "http://c.org/1"
    assert g.next_ready(t + 59) is None and g.next_ready(t + 61).url == "http://a.org/2"
