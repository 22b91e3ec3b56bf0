"""What a job hands back of a file it produced: name, path, size, SHA-256 (:class:`FileResult`).

Used at the end of a job for every WARC and the metadata WARC (:mod:`harvester.archive`), and by a
continuous job for each WARC as it closes (:mod:`harvester.continuous`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from harvester.contracts import FileResult
from harvester.crawllogsegments import metadata_number, metadata_order


def file_result(path: Path, kind: str) -> FileResult:
    """Name, path, size and SHA-256 of a produced file (streamed, never read whole)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return FileResult(name=path.name, path=str(path), size=path.stat().st_size, sha256=h.hexdigest(), kind=kind)


def is_metadata_warc(path: Path) -> bool:
    """A ``{job}-metadata-N.warc.gz``: the end of a job's, or a segment of a continuous job's crawl.log."""
    return metadata_number(path) is not None


def produced_files(warc_dir: Path, metadata: Path) -> list[FileResult]:
    """Every WARC in the directory (this job's, and those taken over from a job it continues), then the
    metadata WARCs: a continuous job's crawl.log segments in their order, the one written at the end last."""
    warcs = sorted(warc_dir.glob("*.warc.gz"))
    files = [file_result(p, "warc") for p in warcs if not is_metadata_warc(p)]
    segments = sorted((p for p in warcs if is_metadata_warc(p) and p != metadata), key=metadata_order)
    files += [file_result(p, "metadata") for p in (*segments, metadata)]
    return files
