"""The chain's index step in one read of a WARC: its sorted CDX and its dedup captures together.

Why: the CDX and the dedup feed need the same per-record facts (offset, length, headers, HTTP head,
payload digest), and parsing a WARC — inflating every gzip member, hashing payloads that lack a digest —
is nearly all of the step's cost. Reading the file twice (once per output) doubled it. Here every record
is parsed once (:func:`indexer.warcscan.iter_records`) and handed to both sinks: its CDX line
(:func:`indexer.cdx.cdx_line`) goes to the bounded-memory sort, its capture
(:func:`indexer.dedupfeed.capture_of`) to a :class:`CaptureSpool`. Both outputs are byte for byte
what the two separate passes (:func:`indexer.cdx.write_cdx`, :func:`indexer.dedupfeed.iter_captures`)
give.

The captures are fed to the dedup index only after the scan, so the cross-worker dedup lock is held for
the few milliseconds of the SQLite transaction, not for the whole scan; meanwhile they wait in a spool
that keeps at most ``SPOOL_BATCH`` in memory and spills the rest to a temporary file (memory stays bounded
whatever the WARC's size). A WARC that fails to parse leaves no CDX and feeds nothing, as before.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from indexer.cdx import CDX_HEADER, cdx_line, cdx_name, is_indexed
from indexer.dedup import Capture
from indexer.dedupfeed import capture_of
from indexer.merge import write_sorted
from indexer.warcscan import iter_records

#: Captures held in memory by a :class:`CaptureSpool` before a batch is spilled to its temporary file.
SPOOL_BATCH = 10_000


class CaptureSpool:
    """Captures in arrival order, at most ``batch`` of them in memory; iterate it as often as needed."""

    def __init__(self, batch: int | None = None) -> None:
        self.batch = batch or SPOOL_BATCH
        self.pending: list[Capture] = []
        self.spill: IO[bytes] | None = None
        self.count = 0

    def append(self, capture: Capture) -> None:
        self.pending.append(capture)
        self.count += 1
        if len(self.pending) >= self.batch:
            if self.spill is None:
                self.spill = tempfile.TemporaryFile(prefix="nh-captures-")
            pickle.dump(self.pending, self.spill, protocol=pickle.HIGHEST_PROTOCOL)
            self.pending = []

    def __iter__(self) -> Iterator[Capture]:
        if self.spill is not None:
            self.spill.flush()
            self.spill.seek(0)
            while True:
                try:
                    batch: list[Capture] = pickle.load(self.spill)
                except EOFError:
                    break
                yield from batch
            self.spill.seek(0, 2)  # appending again stays possible
        yield from self.pending

    def __len__(self) -> int:
        return self.count

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()
            self.spill = None
        self.pending = []

    def __enter__(self) -> CaptureSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class IndexedWarc:
    """What one pass over a file gives: the CDX line count and, if asked for, the dedup captures."""

    records: int
    captures: CaptureSpool = field(default_factory=CaptureSpool)


def index_warc(
    warc_path: str | Path, cdx_out: str | Path, filename: str | None = None, captures: bool = True
) -> IndexedWarc:
    """Write the sorted CDX of ``warc_path`` to ``cdx_out`` (as :func:`indexer.cdx.write_cdx`) and collect
    its dedup captures (as :func:`indexer.dedupfeed.iter_captures`, ``g``/filename = ``filename`` or the
    file's name) in the same read of the file. ``captures=False`` (a metadata WARC) collects none. The
    caller closes the returned spool (``with result.captures:``)."""
    name = cdx_name(warc_path, filename)
    capture_name = filename if filename is not None else Path(warc_path).name
    spool = CaptureSpool()

    def lines() -> Iterator[bytes]:
        for rec in iter_records(warc_path):
            if captures:
                capture = capture_of(rec, capture_name)
                if capture is not None:
                    spool.append(capture)
            if is_indexed(rec):
                yield cdx_line(rec, name)

    try:
        records = write_sorted(lines(), cdx_out, CDX_HEADER)
    except BaseException:
        spool.close()
        raise
    return IndexedWarc(records, spool)
