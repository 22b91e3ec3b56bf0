"""K-way external merge of sorted CDX or PATH files into one sorted file, replaced atomically.

The BnF chain's ``merge`` (the day's files) and ``bigmerge`` (the day into the master index) are
both this one operation. Memory is bounded whatever the sizes: one read buffer per input and one
batch of output lines; ``heapq.merge`` does the k-way selection, ``itertools.groupby`` collapses
identical lines (a file indexed twice after a crash adds nothing), and the whole pipeline runs in
C-implemented iterators so it keeps up with ``LC_ALL=C sort -m`` (docs/BENCHMARKS.md, "Indexer").

Order is ``LC_ALL=C`` byte order of lines *without* their newline, as ``sort`` compares them (so
``a.warc.gz<TAB>/x`` comes before ``a.warc.gz<TAB>/x<TAB>/y``, which plain byte comparison of the
lines with their newline would invert). The output is written under a temporary name in the
destination directory, fsynced and renamed over the target: readers (pywb's binary search) see
the old index or the new one, never half of one. An input that turns out not to be sorted is an
error and leaves the target untouched.
"""

from __future__ import annotations

import heapq
import os
import tempfile
from collections.abc import Iterable, Iterator
from itertools import chain, groupby, islice
from operator import itemgetter, methodcaller
from pathlib import Path
from typing import BinaryIO

from indexer.fsutil import atomic_output

#: Output batch: lines joined and written at once (bounded: at most this many lines in memory).
BATCH_LINES = 1 << 15
READ_BUFFER = 1 << 16
#: Lines held in memory by ``sorted_lines`` before a sorted run is spilled to a temporary file.
SORT_RUN_LINES = 200_000

_strip_newline = methodcaller("rstrip", b"\r\n")


class UnsortedInputError(ValueError):
    """An input of a merge is not in LC_ALL=C byte order."""


def _lines(f: BinaryIO, header: bytes | None) -> Iterator[bytes]:
    """Lines of one sorted input, without newlines and blank lines; a leading header line is dropped."""
    lines = filter(None, map(_strip_newline, f))
    if header is None:
        return lines
    first = next(lines, None)
    if first is None:
        return iter(())
    if first == header:
        return lines
    return chain((first,), lines)


def _merged(files: list[BinaryIO], head: bytes | None) -> Iterator[bytes]:
    """The inputs' lines (without newlines) merged in byte order, identical lines collapsed."""
    return map(itemgetter(0), groupby(heapq.merge(*(_lines(f, head) for f in files))))


def merge_sorted(inputs: list[Path], output: Path, header: bytes | None = None) -> int:
    """Merge sorted ``inputs`` into ``output`` (which may be one of the inputs: it is replaced only
    at the end). ``header`` (e.g. ``CDX_HEADER``) is written first and dropped from the inputs.
    Returns the number of lines written, header excluded."""
    output = Path(output)
    head = header.rstrip(b"\r\n") if header else None
    files: list[BinaryIO] = []
    count = 0
    try:
        for p in inputs:
            files.append(open(p, "rb", buffering=READ_BUFFER))
        unique = _merged(files, head)
        with atomic_output(output) as out:
            if head:
                out.write(head + b"\n")
            last: bytes | None = None
            while batch := list(islice(unique, BATCH_LINES)):
                # Cheap order check (timsort on sorted data is one linear pass in C): an unsorted
                # input would otherwise give a silently unsorted index that binary search misreads.
                if (last is not None and batch[0] < last) or batch != sorted(batch):
                    raise UnsortedInputError(
                        f"merge into {output}: an input is not sorted in LC_ALL=C byte order "
                        f"(near {_first_disorder(last, batch)!r}); inputs: {', '.join(map(str, inputs))}")
                out.write(b"\n".join(batch))
                out.write(b"\n")
                count += len(batch)
                last = batch[-1]
    finally:
        for f in files:
            f.close()
    return count


def _first_disorder(last: bytes | None, batch: list[bytes]) -> bytes:
    previous = last
    for line in batch:
        if previous is not None and line < previous:
            return line[:200]
        previous = line
    return batch[0][:200]


def sorted_lines(lines: Iterable[bytes], work_dir: str | Path, run_lines: int | None = None) -> Iterator[bytes]:
    """Sort lines (each ending in a newline) in LC_ALL=C order within bounded memory: runs of
    ``run_lines`` are sorted in memory and, if there is more than one, spilled to temporary files in
    ``work_dir`` and k-way merged. Identical lines collapse."""
    run_lines = run_lines or SORT_RUN_LINES
    run: list[bytes] = []
    spilled: list[Path] = []
    files: list[BinaryIO] = []
    try:
        for line in lines:
            run.append(line)
            if len(run) >= run_lines:
                spilled.append(_spill(run, work_dir))
                run = []
        if not spilled:
            run.sort(key=_sort_key)
            yield from map(itemgetter(0), groupby(run))
            return
        if run:
            spilled.append(_spill(run, work_dir))
            run = []
        for p in spilled:
            files.append(open(p, "rb", buffering=READ_BUFFER))
        for line in _merged(files, None):
            yield line + b"\n"
    finally:
        for f in files:
            f.close()
        for p in spilled:
            p.unlink(missing_ok=True)


def _sort_key(line: bytes) -> bytes:
    """``sort`` compares lines without their newline: strip it, so ``a`` sorts before ``a<TAB>b``."""
    return line[:-1] if line.endswith(b"\n") else line


def _spill(run: list[bytes], work_dir: str | Path) -> Path:
    run.sort(key=_sort_key)
    fd, name = tempfile.mkstemp(prefix=".sortrun-", dir=work_dir)
    with os.fdopen(fd, "wb", buffering=1 << 20) as f:
        f.writelines(run)
    return Path(name)


def write_sorted(lines: Iterable[bytes], out_path: str | Path, header: bytes | None = None) -> int:
    """Sort ``lines`` (each ending in a newline) into ``out_path`` in bounded memory, identical lines
    collapsed, ``header`` first, all or nothing (:func:`indexer.fsutil.atomic_output`). Returns the
    number of lines written, header excluded."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with atomic_output(out_path) as f:
        if header:
            f.write(header)
        for line in sorted_lines(lines, out_path.parent):
            f.write(line)
            count += 1
    return count
