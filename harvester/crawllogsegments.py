"""A continuous job's crawl.log, archived in segments while it runs (docs/FORMATS.md, "Metadata WARC").

A job that runs for months cannot keep its crawl.log out of the archive until it stops: the WARCs it
hands over while it runs would have no record of how they were made, and a lost spool would take that
record with it. So each time a continuous job closes a content WARC it also writes the crawl.log lines
not yet archived into a metadata WARC of their own, ``{job}-metadata-N.warc.gz`` (N = 1, 2, …; the
numbering NetarchiveSuite's metadata files have), handed to the orchestrator with the WARC. The metadata
WARC written when the job stops holds the rest of the crawl.log, the reports, the JobSpec and the seeds,
numbered next. Reading a job's crawl.log from its metadata WARCs is reading their ``crawl.log`` records in
the order of N. Jobs of the other kinds write one metadata WARC, ``-metadata-1``, as before.

The spool's crawl.log is never cut (the job page, the reports and a take-over read it whole); what is
archived is counted in bytes, in ``logs/crawl.log.handed`` (JSON ``{"number": N, "offset": bytes}``),
written after the segment's file. A crash between the two leaves a complete segment (files are written
under a temporary name, then renamed) that :meth:`CrawlLogSegments.load` finds and counts, so no line is
archived twice and none is skipped.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from harvester.crawllog import line_end

logger = logging.getLogger(__name__)

STATE = "crawl.log.handed"
_METADATA = re.compile(r"^(?P<job>[^/]+)-metadata-(?P<n>\d+)\.warc\.gz$")


def metadata_name(job_id: str, number: int) -> str:
    return f"{job_id}-metadata-{number}.warc.gz"


def metadata_number(path: Path) -> int | None:
    """N of a ``{job}-metadata-N.warc.gz`` name; None for any other file."""
    m = _METADATA.match(path.name)
    return int(m["n"]) if m else None


def metadata_order(path: Path) -> tuple[int, str, int]:
    """Sort key of metadata WARCs: by job (as a number), then N (a taken-over job's segments come first)."""
    job = path.name.rsplit("-metadata-", 1)[0]
    return (int(job) if job.isdigit() else -1, job, metadata_number(path) or 0)


def crawl_log_length(warc: Path) -> int:
    """Bytes of crawl.log a segment holds (the length of its crawl.log record)."""
    with open(warc, "rb") as f:
        for record in ArchiveIterator(f):
            uri = record.rec_headers.get_header("WARC-Target-URI") or ""
            if record.rec_type == "metadata" and uri.split("?", 1)[0].endswith("/crawl/logs/crawl.log"):
                return int(record.rec_headers.get_header("Content-Length") or 0)
    raise ValueError(f"{warc.name} holds no crawl.log record")


def save_state(crawl_log: Path, number: int, offset: int) -> None:
    """Write what is archived of ``crawl_log`` (fsynced, then renamed: whole or not at all)."""
    state = crawl_log.with_name(STATE)
    tmp = state.with_name(state.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"number": number, "offset": offset}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, state)


def archived_log(crawl_log: Path) -> tuple[int, int]:
    """(segments counted, crawl.log bytes they hold) of a job's crawl.log, as its state file says (a job that
    wrote none: (0, 0))."""
    try:
        data = json.loads(crawl_log.with_name(STATE).read_text(encoding="utf-8"))
        return int(data.get("number", 0)), int(data.get("offset", 0))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0, 0


class CrawlLogSegments:
    """Which part of a job's crawl.log is archived: ``number`` metadata WARCs holding its first ``offset``
    bytes. ``cut`` archives the lines written since."""

    def __init__(self, crawl_log: Path, warc_dir: Path, job_id: str) -> None:
        self.crawl_log = crawl_log
        self.warc_dir = warc_dir
        self.job_id = job_id
        self.number = 0
        self.offset = 0
        self.load()

    def load(self) -> None:
        self.number, self.offset = archived_log(self.crawl_log)
        # A segment written before a crash that came before its count was saved.
        while (path := self.warc_dir / metadata_name(self.job_id, self.number + 1)).exists():
            self._save(self.number + 1, self.offset + crawl_log_length(path))
        size = self.crawl_log.stat().st_size if self.crawl_log.exists() else 0
        if size < self.offset:
            # The file lost its end after it was archived (a power cut before the OS wrote it; CrawlLog cut
            # the torn line): the lines written from now on are archived from its end, never from inside one.
            logger.warning("crawl.log is shorter (%d bytes) than its archived part (%d)", size, self.offset)
            self._save(self.number, line_end(self.crawl_log, size))

    def cut(self, write: Callable[[int, int, int], Path]) -> Path | None:
        """Archive the whole lines written since the last cut: ``write(number, start, end)`` writes metadata
        WARC N holding crawl.log bytes [start, end); returns its path, None when nothing is new."""
        size = self.crawl_log.stat().st_size if self.crawl_log.exists() else 0
        end = line_end(self.crawl_log, size) if size > self.offset else self.offset
        if end <= self.offset:
            return None
        path = write(self.number + 1, self.offset, end)
        self._save(self.number + 1, end)
        return path

    def _save(self, number: int, offset: int) -> None:
        save_state(self.crawl_log, number, offset)
        self.number, self.offset = number, offset
