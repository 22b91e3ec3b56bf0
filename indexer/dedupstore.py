"""The dedup service's storage: payload digest → earliest capture, URL → latest capture, in RocksDB.

Why RocksDB (rocksdict's wheels) and not the SQLite file of :mod:`indexer.dedup`: at national scale the
index holds billions of captures, written in large batches by the indexer chain and read by point lookups
from every harvester. RocksDB is what OutbackCDX (IIPC; national libraries, Heritrix's dedup lookups) is
built on: an LSM tree writes sequentially, compresses its sorted blocks (ZSTD here; URLs of one host sort
together and share prefixes), and a bloom filter per table answers most misses (novel digests: the common
case) without reading a block. The bytes per capture and the lookups/s against SQLite, LMDB and
PostgreSQL are in docs/BENCHMARKS.md, "Dedup service"; the choice is argued in docs/DESIGN.md.

Keys: ``d`` + the 20 raw bytes of a ``sha1:`` base32 digest (``D`` + the text for any other algorithm);
``u`` + the URL. Values: NUL-separated fields (no header value, URL or file name holds a NUL). The rules
are those of :meth:`indexer.dedup.DedupIndex.add`: the earliest capture of a digest stays its referent, the
latest capture of a URL gives its validators, and adding the same captures again changes nothing.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path

from rocksdict import BlockBasedOptions, Cache, DBCompressionType, Options, Rdict, WriteBatch

from indexer.dedup import ADD_BATCH, Capture, OpenDb

#: Block cache shared by reads, in MiB (the bloom filters and index blocks live in it too).
BLOCK_CACHE_MIB = 256
SEP = "\x00"


def digest_key(digest: str) -> bytes:
    """``sha1:<32 base32>`` → ``b"d"`` + 20 bytes (11 fewer than the text); any other → ``b"D"`` + text."""
    if digest.startswith("sha1:") and len(digest) == 37:
        try:
            return b"d" + base64.b32decode(digest[5:])
        except (binascii.Error, ValueError):
            pass
    return b"D" + digest.encode("utf-8", "surrogatepass")


def url_key(url: str) -> bytes:
    return b"u" + url.encode("utf-8", "surrogatepass")


def _digest_value(c: Capture) -> bytes:
    return SEP.join((c.url, c.timestamp, c.filename, str(c.offset), c.mime)).encode("utf-8", "surrogatepass")


def _url_value(c: Capture) -> bytes:
    return SEP.join((c.digest, c.timestamp, c.filename, str(c.offset), c.etag, c.last_modified, c.mime)).encode(
        "utf-8", "surrogatepass"
    )


def _from_digest_value(digest: str, raw: bytes) -> Capture:
    url, ts, filename, offset, mime = raw.decode("utf-8", "surrogatepass").split(SEP)
    return Capture(digest, url, ts, filename, int(offset), mime)


def _from_url_value(url: str, raw: bytes) -> Capture:
    digest, ts, filename, offset, etag, last_modified, mime = raw.decode("utf-8", "surrogatepass").split(SEP)
    return Capture(digest, url, ts, filename, int(offset), mime, etag, last_modified)


def _options() -> Options:
    opts = Options(raw_mode=True)
    opts.create_if_missing(True)
    opts.set_compression_type(DBCompressionType.lz4())
    opts.set_bottommost_compression_type(DBCompressionType.zstd())
    table = BlockBasedOptions()
    table.set_bloom_filter(10, False)  # ~1 % false positives: a novel digest costs no block read
    table.set_block_cache(Cache(BLOCK_CACHE_MIB * 1024 * 1024))
    table.set_cache_index_and_filter_blocks(True)
    opts.set_block_based_table_factory(table)
    opts.increase_parallelism(2)
    return opts


class DedupStore(OpenDb):
    """One RocksDB directory, opened by one process (the dedup service): RocksDB locks it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.db = Rdict(str(self.path), _options())
        self._write_lock = threading.Lock()

    def by_digests(self, digests: Sequence[str]) -> dict[str, Capture]:
        """The earliest capture of each known digest (one RocksDB multi-get)."""
        raws = self.db.get([digest_key(d) for d in digests])
        return {d: _from_digest_value(d, raw) for d, raw in zip(digests, raws, strict=True) if raw is not None}

    def by_urls(self, urls: Sequence[str]) -> dict[str, Capture]:
        """The latest capture of each known URL, with its validators and MIME type."""
        raws = self.db.get([url_key(u) for u in urls])
        return {u: _from_url_value(u, raw) for u, raw in zip(urls, raws, strict=True) if raw is not None}

    def by_digest(self, digest: str) -> Capture | None:
        return self.by_digests([digest]).get(digest)

    def by_url(self, url: str) -> Capture | None:
        return self.by_urls([url]).get(url)

    def add(self, captures: Iterable[Capture]) -> int:
        """Record captures, ``ADD_BATCH`` at a time (read the current entries, write the winners in one
        atomic write batch). One writer at a time: the read-then-write must not interleave."""
        count = 0
        it = iter(captures)
        with self._write_lock:
            while batch := list(islice(it, ADD_BATCH)):
                self._add_batch(batch)
                count += len(batch)
        return count

    def _add_batch(self, batch: list[Capture]) -> None:
        digests: dict[str, Capture] = {}
        urls: dict[str, Capture] = {}
        for c in batch:  # within the batch first: earliest per digest, latest (or last equal) per URL
            d = digests.get(c.digest)
            if d is None or c.timestamp < d.timestamp:
                digests[c.digest] = c
            u = urls.get(c.url)
            if u is None or c.timestamp >= u.timestamp:
                urls[c.url] = c
        # Only the stored timestamps (the second field of both kinds of value) are compared: no decoding.
        d_keys = [digest_key(d) for d in digests]
        u_keys = [url_key(u) for u in urls]
        wb = WriteBatch(raw_mode=True)
        changed = False
        for key, c, raw in zip(d_keys, digests.values(), self.db.get(d_keys), strict=True):
            if raw is None or c.timestamp.encode() < raw.split(b"\0", 2)[1]:
                wb.put(key, _digest_value(c))
                changed = True
        for key, c, raw in zip(u_keys, urls.values(), self.db.get(u_keys), strict=True):
            value = _url_value(c)
            if raw is None or (c.timestamp.encode() >= raw.split(b"\0", 2)[1] and value != raw):
                wb.put(key, value)
                changed = True
        if changed:
            self.db.write(wb)

    def counts(self) -> dict[str, int]:
        """RocksDB's estimate of the keys held and the bytes of its live table files (for metrics)."""
        keys = self.db.property_int_value("rocksdb.estimate-num-keys") or 0
        size = self.db.property_int_value("rocksdb.total-sst-files-size") or 0
        return {"keys": int(keys), "sst_bytes": int(size)}


def disk_bytes(path: str | Path) -> int:
    """Bytes of every file under a store directory (tables, WAL, manifest)."""
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())
