"""K-way external merge of sorted CDX or PATH files into one sorted file, replaced atomically.

The BnF chain's ``merge`` (the day's files) and ``bigmerge`` (the day into the master index) are
both this one operation. Memory is bounded whatever the sizes: each input is read in blocks of
``READ_BLOCK`` bytes split into lines, so at most one block of lines per input is held, plus one
output batch.

How the merge stays close to ``LC_ALL=C sort -m`` in Python (docs/BENCHMARKS.md, "Indexer"):
instead of choosing the next line among k inputs one line at a time (``heapq.merge``: a Python
step per line), it works block by block. Every buffered line that is ≤ the smallest of the
inputs' *last buffered* lines can be written now: no later line of any input can sort before it.
Those lines (found with ``bisect``) are gathered, sorted with ``list.sort`` (timsort merging the
k already-sorted runs in C), identical lines collapsed (``groupby``: a file indexed twice after a
crash adds nothing), joined and written; then the input whose block ran out is refilled. The
Python-level work is per block, not per line.

Order is ``LC_ALL=C`` byte order of lines *without* their newline, as ``sort`` compares them (so
``a.warc.gz<TAB>/x`` comes before ``a.warc.gz<TAB>/x<TAB>/y``, which plain byte comparison of the
lines with their newline would invert). Lines are nevertheless kept with their newline while no byte
of the inputs sorts below it (CDX lines: the comparison is then the same, and finding newlines with
``memchr`` is cheaper than cutting them off); a TAB or CR makes the merge start again cutting lines
(:class:`_Run`). Blank lines are dropped. Each block is checked to be in
order as it is read (one linear pass in C), so an unsorted input is an error naming the file that
leaves the target untouched, instead of a master that binary search misreads. The output is
written under a temporary name in the destination directory, fsynced and renamed over the target:
readers (pywb's binary search) see the old index or the new one, never part of one.
"""

from __future__ import annotations

import io
import os
import tempfile
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from itertools import groupby, islice
from operator import eq, itemgetter
from pathlib import Path
from typing import BinaryIO

from indexer.fsutil import atomic_output

#: Bytes read from an input at a time (measured: 64 KiB blocks keep the merge in the CPU cache).
READ_BLOCK = 1 << 16
#: Lines held in memory by ``sorted_lines`` before a sorted run is spilled to a temporary file.
SORT_RUN_LINES = 200_000


#: Bytes that sort below the newline: a line holding none of them (nor a CR) sorts the same with its
#: newline as without it, so such lines can be kept with their newline (see :class:`_Run`).
_BELOW_NEWLINE = tuple(bytes([c]) for c in range(10)) + (b"\r",)


class UnsortedInputError(ValueError):
    """An input of a merge is not in LC_ALL=C byte order."""


class _LinesNeedCutting(Exception):
    """A block holds a byte that sorts below the newline (a TAB in a PATH index, a CR): the merge must
    compare lines without their newlines."""


class _Run:
    """One sorted input, read in blocks of whole lines, blank lines dropped.

    Two ways to cut a block into lines, chosen per merge (``keep_newlines``): with their newlines
    (``BytesIO.readlines``, which finds each newline with ``memchr``: a third of the time of
    ``bytes.split``, which tests byte after byte), valid while no byte of the input sorts below the
    newline, else :class:`_LinesNeedCutting` is raised and the merge starts again cutting; or without
    newlines and CRs (``bytes.split``), which sorts as ``sort`` compares, whatever the bytes."""

    __slots__ = ("f", "name", "lines", "pos", "rest", "eof", "last", "head", "keep_newlines")

    def __init__(self, f: BinaryIO, name: str, head: bytes | None, keep_newlines: bool = False) -> None:
        self.f, self.name, self.keep_newlines = f, name, keep_newlines
        self.head = head + b"\n" if head is not None and keep_newlines else head
        self.lines: list[bytes] = []
        self.pos = 0
        self.rest = b""
        self.eof = False
        self.last: bytes | None = None

    def fill(self) -> None:
        """Load the next block of lines (empty only at the end of the input): read, drop the header
        line, check the order."""
        lines = self._read_lines()
        if self.head is not None and self.last is None and lines and lines[0] == self.head:
            lines = self._after_header(lines)
        if lines:
            self._check_order(lines)
            self.last = lines[-1]
        self.lines, self.pos = lines, 0

    def _read_lines(self) -> list[bytes]:
        """The next block's whole lines (without newlines and CRs unless ``keep_newlines``), blank
        lines dropped; a partial last line is kept for the next block. Reads on until a block yields a
        line or the input ends."""
        lines: list[bytes] = []
        while not lines and not self.eof:
            data = self.f.read(READ_BLOCK)
            if not data:
                self.eof = True
                last = self.rest if self.keep_newlines else self.rest.rstrip(b"\r")
                self.rest = b""
                return [last + b"\n" if self.keep_newlines else last] if last else []
            data = self.rest + data
            if self.keep_newlines:
                lines = self._lines_with_newlines(data)
                continue
            lines = data.split(b"\n")
            self.rest = lines.pop()
            if b"\r" in data:
                lines = [x.rstrip(b"\r") for x in lines]
            if b"" in lines:
                lines = [x for x in lines if x]
        return lines

    def _lines_with_newlines(self, data: bytes) -> list[bytes]:
        if any(b in data for b in _BELOW_NEWLINE):
            raise _LinesNeedCutting(self.name)
        lines = io.BytesIO(data).readlines()
        self.rest = b"" if data.endswith(b"\n") else lines.pop()
        if b"\n" in lines:  # blank lines (a list scan: searching the bytes for two newlines is slower)
            lines = [x for x in lines if x != b"\n"]
        return lines

    def _after_header(self, lines: list[bytes]) -> list[bytes]:
        """Drop the inputs' header line (``header`` of :func:`merge_sorted`), which is not merged; when
        it was the block's only line, the next block follows it (and must sort after it)."""
        del lines[0]
        if not lines:
            self.last = self.head
            lines = self._read_lines()
        return lines

    def _check_order(self, lines: list[bytes]) -> None:
        """A block must be sorted and must not sort before the previous block's last line: one linear
        pass in C (timsort over a sorted list), so a wrong input fails naming the file."""
        if (self.last is not None and lines[0] < self.last) or lines != sorted(lines):
            bad = next((b for a, b in zip([self.last or lines[0], *lines], lines, strict=False) if b < a), lines[0])
            near = bad.rstrip(b"\n")[:200]
            raise UnsortedInputError(f"{self.name} is not sorted in LC_ALL=C byte order (near {near!r})")


def _merged_batches(
    files: list[BinaryIO], names: list[str], head: bytes | None, keep_newlines: bool = False
) -> Iterator[list[bytes]]:
    """Sorted, de-duplicated batches of lines (with their newlines if ``keep_newlines``, :class:`_Run`)
    of the merged inputs."""
    runs = [_Run(f, n, head, keep_newlines) for f, n in zip(files, names, strict=True)]
    previous: bytes | None = None
    while True:
        active = []
        for r in runs:
            if r.pos >= len(r.lines) and not r.eof:
                r.fill()
            if r.pos < len(r.lines):
                active.append(r)
        if not active:
            return
        if len(active) == 1:
            r = active[0]
            batch = r.lines[r.pos :]
            r.pos = len(r.lines)
        else:
            limit = min(r.lines[-1] for r in active)
            batch = []
            for r in active:
                j = bisect_right(r.lines, limit, r.pos)
                batch += r.lines[r.pos : j]
                r.pos = j
            batch.sort()
        if any(map(eq, batch, islice(batch, 1, None))):  # rare (a file indexed twice): only then group
            batch = list(map(itemgetter(0), groupby(batch)))
        if previous is not None and batch[0] == previous:
            del batch[0]
        if batch:
            previous = batch[-1]
            yield batch


def merge_sorted(inputs: list[Path], output: Path, header: bytes | None = None) -> int:
    """Merge sorted ``inputs`` into ``output`` (which may be one of the inputs: it is replaced only
    at the end). ``header`` (e.g. ``CDX_HEADER``) is written first and dropped from the inputs.
    Returns the number of lines written, header excluded."""
    output = Path(output)
    head = header.rstrip(b"\r\n") if header else None
    names = [str(p) for p in inputs]
    files: list[BinaryIO] = []
    try:
        for p in inputs:
            files.append(open(p, "rb", buffering=0))
        with atomic_output(output) as out:
            try:
                return _write_merged(files, names, head, out, keep_newlines=True)
            except _LinesNeedCutting:  # a byte sorting below the newline: start again, cutting lines
                for f in files:
                    f.seek(0)
                out.seek(0)
                out.truncate()
                return _write_merged(files, names, head, out, keep_newlines=False)
    finally:
        for f in files:
            f.close()


def _write_merged(
    files: list[BinaryIO], names: list[str], head: bytes | None, out: BinaryIO, keep_newlines: bool
) -> int:
    """Write the header and the merged lines; the number of lines written, header excluded."""
    if head:
        out.write(head + b"\n")
    count = 0
    for batch in _merged_batches(files, names, head, keep_newlines):
        count += len(batch)
        if not keep_newlines:
            batch.append(b"")  # one join gives every line its newline, the last one too
        out.write((b"" if keep_newlines else b"\n").join(batch))
    return count


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
            files.append(open(p, "rb", buffering=0))
        for batch in _merged_batches(files, [str(p) for p in spilled], None):
            for line in batch:
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
