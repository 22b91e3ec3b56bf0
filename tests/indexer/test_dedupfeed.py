"""The dedup index fed from WARCs: which records become referents, validators, idempotence."""

from __future__ import annotations

from indexer.dedup import DedupIndex
from indexer.dedupfeed import add_warc
from tests.indexer.warcs import build_warc, one_response


def test_feeds_2xx_responses_with_validators(tmp_path):
    warc = build_warc(tmp_path / "a.warc.gz")
    with DedupIndex(tmp_path / "dedup.sqlite") as idx:
        # 3 pages + the no-type 200; not the redirect, the revisit, the request, resource or metadata
        assert add_warc(idx, warc, "a.warc.gz") == 4
        cap = idx.by_url("http://example.com/p1?b=2&a=1")
        assert cap.etag == '"e1"' and cap.filename == "a.warc.gz" and len(cap.timestamp) == 14
        assert cap.mime == "text/html"  # the harvester's "may this be asked conditionally?"
        by_digest = idx.by_digest(cap.digest)
        assert by_digest.url == cap.url and by_digest.offset == cap.offset and by_digest.mime == "text/html"
        assert idx.by_url("http://example.com/old") is None
        assert idx.by_url("http://example.com/again") is None
        rows = idx.db.execute("SELECT count(*) FROM by_digest").fetchone()[0]
        assert add_warc(idx, warc, "a.warc.gz") == 4  # a re-run after a crash
        assert idx.db.execute("SELECT count(*) FROM by_digest").fetchone()[0] == rows


def test_earliest_referent_kept_latest_validators_win(tmp_path):
    old = one_response(tmp_path / "old.warc.gz", "2025-01-01T00:00:00Z", '"v1"')
    new = one_response(tmp_path / "new.warc.gz", "2026-01-01T00:00:00Z", '"v2"')
    with DedupIndex(tmp_path / "d.sqlite") as idx:
        add_warc(idx, new, "new.warc.gz")
        add_warc(idx, old, "old.warc.gz")  # indexed late (a resubmitted job): still the earliest referent
        cap = idx.by_url("http://example.com/x")
        assert cap.etag == '"v2"' and cap.last_modified == "Mon, 01 Jan 2024 00:00:00 GMT"
        assert idx.by_digest(cap.digest).filename == "old.warc.gz"


def test_an_index_from_before_by_url_had_a_mime_gets_it_and_reads_unknown_meanwhile(tmp_path):
    """An index written before ``by_url.mime`` existed: a harvester (read-only) reads its types as
    unknown (fetched in full, never a lost link); the chain's writer adds the column, and a fed URL
    then has its type."""
    import sqlite3

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE by_digest (digest TEXT PRIMARY KEY, url TEXT NOT NULL, timestamp TEXT NOT NULL,
            filename TEXT NOT NULL, offset INTEGER NOT NULL, mime TEXT NOT NULL DEFAULT '') WITHOUT ROWID;
        CREATE TABLE by_url (url TEXT PRIMARY KEY, digest TEXT NOT NULL, timestamp TEXT NOT NULL,
            filename TEXT NOT NULL, offset INTEGER NOT NULL, etag TEXT NOT NULL DEFAULT '',
            last_modified TEXT NOT NULL DEFAULT '') WITHOUT ROWID;
        INSERT INTO by_url VALUES ('http://example.com/x', 'sha1:A', '20250101000000', 'w.warc.gz', 0, '"e"', '');
    """)
    db.commit()
    db.close()
    with DedupIndex(path, readonly=True) as idx:
        assert idx.by_url("http://example.com/x").mime == ""
    warc = build_warc(tmp_path / "a.warc.gz")
    with DedupIndex(path) as idx:
        assert idx.by_url("http://example.com/x").mime == ""
        add_warc(idx, warc, "a.warc.gz")
        assert idx.by_url("http://example.com/p1?b=2&a=1").mime == "text/html"
