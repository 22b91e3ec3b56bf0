"""A continuous job's crawl.log archived in segments (harvester.crawllogsegments): whole lines only, each
byte once, through a crash between a segment's file and its count, and through a take-over."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from crawlhelp import make_spec
from warcio.archiveiterator import ArchiveIterator

from harvester.contracts import JobSpec
from harvester.crawllogsegments import STATE, CrawlLogSegments
from harvester.fileresults import produced_files
from harvester.metadatawarc import write_metadata_warc
from harvester.takeover import take_over


def _writer(warc_dir: Path, crawl_log: Path, job_id: str) -> Callable[[int, int, int], Path]:
    spec = JobSpec.from_dict(make_spec(["http://a.example/"], job_id=int(job_id)))

    def write(number: int, start: int, end: int) -> Path:
        return write_metadata_warc(
            warc_dir,
            spec=spec,
            job_id=job_id,
            harvest_id="7",
            crawl_log=crawl_log,
            reports=[],
            seeds=[],
            warcinfo=[],
            number=number,
            log_range=(start, end),
            setup=False,
        )

    return write


def _archived(warc_dir: Path, job_id: str, upto: int = 1 << 30) -> bytes:
    """The crawl.log records of the job's metadata WARCs 1 … ``upto`` in the directory, in the order of N."""
    out = b""
    numbered = {int(p.name.split("-")[2].removesuffix(".warc.gz")): p for p in warc_dir.glob(f"{job_id}-metadata-*")}
    for _, path in sorted((n, p) for n, p in numbered.items() if n <= upto):
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type == "metadata":
                    out += rec.content_stream().read()
    return out


def _job(tmp_path: Path, name: str = "5") -> tuple[Path, Path, Path]:
    job = tmp_path / name
    (job / "logs").mkdir(parents=True)
    (job / "warcs").mkdir()
    return job, job / "logs" / "crawl.log", job / "warcs"


def test_each_cut_archives_the_whole_lines_written_since_the_last(tmp_path: Path) -> None:
    _, log, warcs = _job(tmp_path)
    write = _writer(warcs, log, "5")
    log.write_bytes(b"line 1\nline 2\n")
    segments = CrawlLogSegments(log, warcs, "5")
    assert segments.cut(write) == warcs / "5-metadata-1.warc.gz"
    assert segments.cut(write) is None  # nothing new: no file
    with open(log, "ab") as f:
        f.write(b"line 3\nline 4 being writ")  # a line not yet whole stays for the next cut
    assert segments.cut(write) == warcs / "5-metadata-2.warc.gz"
    assert _archived(warcs, "5") == b"line 1\nline 2\nline 3\n"
    with open(log, "ab") as f:
        f.write(b"ten\n")
    segments.cut(write)
    assert _archived(warcs, "5") == log.read_bytes()
    assert json.loads((log.parent / STATE).read_text()) == {"number": 3, "offset": log.stat().st_size}


def test_a_segment_written_before_a_crash_that_lost_its_count_is_counted_not_written_again(tmp_path: Path) -> None:
    _, log, warcs = _job(tmp_path)
    write = _writer(warcs, log, "5")
    log.write_bytes(b"a\nb\n")
    CrawlLogSegments(log, warcs, "5").cut(write)
    saved = (log.parent / STATE).read_text()
    with open(log, "ab") as f:
        f.write(b"c\n")
    CrawlLogSegments(log, warcs, "5").cut(write)
    (log.parent / STATE).write_text(saved)  # the crash: segment 2's file is there, its count is not

    with open(log, "ab") as f:
        f.write(b"d\n")
    segments = CrawlLogSegments(log, warcs, "5")  # the restart
    assert (segments.number, segments.offset) == (2, len(b"a\nb\nc\n"))
    assert segments.cut(write) == warcs / "5-metadata-3.warc.gz"
    assert _archived(warcs, "5") == b"a\nb\nc\nd\n"


def test_a_resubmitted_job_archives_only_what_the_failed_one_had_not(tmp_path: Path) -> None:
    """The failed job handed segments 1 and 2 over; segment 3 it wrote but did not hand over (it moves, with
    the failed job's name); its last metadata WARC (4, uncounted: written as it ended) is superseded."""
    old, log, warcs = _job(tmp_path, "401")
    (old / "state").mkdir()
    db = sqlite3.connect(str(old / "state" / "frontier.sqlite"))
    db.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)")
    db.commit()
    db.close()
    write = _writer(warcs, log, "401")
    segments = CrawlLogSegments(log, warcs, "401")
    for n in range(3):
        with open(log, "ab") as f:
            f.write(f"old {n}\n".encode())
        segments.cut(write)
    (old / "files-closed.jsonl").write_text(
        "".join(json.dumps({"name": f"401-metadata-{n}.warc.gz"}) + "\n" for n in (1, 2))
    )
    with open(log, "ab") as f:
        f.write(b"old tail\n")
    write(4, segments.offset, log.stat().st_size)  # the failed job's last metadata WARC

    new = tmp_path / "402"
    spec = JobSpec.from_dict({**make_spec(["http://a.example/"], job_id=402), "continues_job": 401})
    assert take_over(old, new, spec)
    assert sorted(p.name for p in (new / "warcs").iterdir()) == ["401-metadata-3.warc.gz"]
    left = ["401-metadata-1.warc.gz", "401-metadata-2.warc.gz", "401-metadata-4.warc.gz"]
    assert sorted(p.name for p in warcs.iterdir()) == left

    new_log = new / "logs" / "crawl.log"
    with open(new_log, "ab") as f:
        f.write(b"new 1\n")
    mine = CrawlLogSegments(new_log, new / "warcs", "402")
    mine.cut(_writer(new / "warcs", new_log, "402"))
    # Handed over by 401, moved to 402, written by 402: the crawl.log once, in order.
    archived = _archived(warcs, "401", upto=2) + _archived(new / "warcs", "401") + _archived(new / "warcs", "402")
    assert archived == new_log.read_bytes() == b"old 0\nold 1\nold 2\nold tail\nnew 1\n"


def _failed_job(root: Path, segments: int, listed: tuple[int, ...]) -> tuple[Path, Path, Path]:
    """Job 401's spool: a frontier, ``segments`` crawl.log segments ("old 0", "old 1", …), those numbered
    ``listed`` listed in files-closed.jsonl as handed over."""
    job, log, warcs = _job(root, "401")
    (job / "state").mkdir()
    db = sqlite3.connect(str(job / "state" / "frontier.sqlite"))
    db.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)")
    db.commit()
    db.close()
    cuts = CrawlLogSegments(log, warcs, "401")
    for n in range(segments):
        with open(log, "ab") as f:
            f.write(f"old {n}\n".encode())
        cuts.cut(_writer(warcs, log, "401"))
    (job / "files-closed.jsonl").write_text(
        "".join(json.dumps({"name": f"401-metadata-{n}.warc.gz"}) + "\n" for n in listed)
    )
    return job, log, warcs


def test_a_segment_taken_over_twice_before_it_was_handed_over_moves_on(tmp_path: Path) -> None:
    """401 wrote segments 1-3 and handed 1-2 over; 402 took over (401's segment 3 moved to it) and failed before
    handing it over; 403 takes over 402: segment 3 must move on, or its lines are never archived."""
    old, log, warcs = _failed_job(tmp_path, segments=3, listed=(1, 2))
    spec = make_spec(["http://a.example/"], job_id=402)
    assert take_over(old, tmp_path / "402", JobSpec.from_dict({**spec, "continues_job": 401}))
    assert take_over(
        tmp_path / "402", tmp_path / "403", JobSpec.from_dict({**spec, "job_id": 403, "continues_job": 402})
    )
    assert sorted(p.name for p in (tmp_path / "403" / "warcs").iterdir()) == ["401-metadata-3.warc.gz"]
    new_log = tmp_path / "403" / "logs" / "crawl.log"
    with open(new_log, "ab") as f:
        f.write(b"new\n")
    CrawlLogSegments(new_log, tmp_path / "403" / "warcs", "403").cut(
        _writer(tmp_path / "403" / "warcs", new_log, "403")
    )
    archived = _archived(warcs, "401") + _archived(tmp_path / "403" / "warcs", "401")
    archived += _archived(tmp_path / "403" / "warcs", "403")
    assert archived == new_log.read_bytes() == b"old 0\nold 1\nold 2\nnew\n"


def test_the_files_of_a_job_list_metadata_warcs_by_job_number_then_n(tmp_path: Path) -> None:
    _, log, warcs = _job(tmp_path, "100")
    log.write_bytes(b"x\n")
    for job, number in (("99", 1), ("100", 1), ("100", 2), ("100", 10)):
        _writer(warcs, log, job)(number, 0, 2)
    end = _writer(warcs, log, "100")(11, 0, 2)
    names = [f.name for f in produced_files(warcs, end)]
    assert names == [
        f"{j}-metadata-{n}.warc.gz" for j, n in (("99", 1), ("100", 1), ("100", 2), ("100", 10), ("100", 11))
    ]


def test_a_crawl_log_that_lost_its_end_is_archived_from_its_end_after_a_restart(tmp_path: Path) -> None:
    """A power cut can take the end of a file the OS had not written yet, after it was archived: the lines
    written after the restart are archived from the file's end then, never from inside a line."""
    _, log, warcs = _job(tmp_path)
    write = _writer(warcs, log, "5")
    log.write_bytes(b"one\ntwo\nthree\n")
    CrawlLogSegments(log, warcs, "5").cut(write)
    log.write_bytes(b"one\n")  # what the disk kept
    segments = CrawlLogSegments(log, warcs, "5")  # the restart
    with open(log, "ab") as f:
        f.write(b"four\nfive\nsix\n")  # past the old offset before the next cut
    segments.cut(write)
    assert _archived(warcs, "5") == b"one\ntwo\nthree\nfour\nfive\nsix\n"


def test_a_file_listed_as_handed_over_that_the_archive_never_recorded_moves_on(tmp_path: Path) -> None:
    """The failed job listed segments 1 and 2 as handed over, but its worker died with 2's message still in its
    outbox: the orchestrator says it has only 1 (``continues_files``), so 2 moves to the job taking over."""
    old, log, warcs = _failed_job(tmp_path, segments=2, listed=(1, 2))
    spec = {**make_spec(["http://a.example/"], job_id=402), "continues_job": 401}
    assert take_over(old, tmp_path / "402", JobSpec.from_dict({**spec, "continues_files": ["401-metadata-1.warc.gz"]}))
    assert [p.name for p in (tmp_path / "402" / "warcs").iterdir()] == ["401-metadata-2.warc.gz"]
    assert [p.name for p in warcs.iterdir()] == ["401-metadata-1.warc.gz"]


def test_a_lost_count_and_a_shortened_crawl_log_together_still_cut_at_a_line(tmp_path: Path) -> None:
    """Both at once after a power cut: segment 2's count is lost and the file lost lines after it. The orphan is
    counted first, then the offset goes back to the file's end, so the next segment starts at a line."""
    _, log, warcs = _job(tmp_path)
    write = _writer(warcs, log, "5")
    log.write_bytes(b"a\n")
    CrawlLogSegments(log, warcs, "5").cut(write)
    saved = (log.parent / STATE).read_text()
    with open(log, "ab") as f:
        f.write(b"b\nc\n")
    CrawlLogSegments(log, warcs, "5").cut(write)
    (log.parent / STATE).write_text(saved)
    log.write_bytes(b"a\nb\n")  # what the disk kept
    segments = CrawlLogSegments(log, warcs, "5")
    assert (segments.number, segments.offset) == (2, 4)
    with open(log, "ab") as f:
        f.write(b"d\n")
    segments.cut(write)
    assert _archived(warcs, "5") == b"a\nb\nc\nd\n"
