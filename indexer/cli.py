"""``netharvest index cdx WARC…``: the CDX of any WARC files on standard output (a crawl engineer's tool).

No database, no broker, no Django: it works on a laptop with a copy of a WARC. The output is one
CDX file: the header line, then the lines of every file merged and sorted in ``LC_ALL=C`` order
(what ``cat *.cdx | LC_ALL=C sort`` would give), sorted in bounded memory. Every file is indexed
before anything is printed, so a bad file gives an error naming it and no partial output.

Exit status: 0 on success, 1 if a file cannot be indexed (missing, not a WARC, torn), 2 for bad
arguments.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from indexer.cdx import CDX_HEADER, iter_cdx_lines, iter_cdxj_lines
from indexer.merge import sorted_lines
from indexer.warcscan import WarcFormatError

EXIT_FAILED = 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="netharvest index cdx",
        description="Print the sorted CDX (11 fields, ' CDX N b a m s k r M S V g') of WARC files.",
    )
    p.add_argument("warcs", nargs="+", metavar="WARC", help=".warc.gz (one gzip member per record) or .warc files")
    p.add_argument("--cdxj", action="store_true", help="print pywb's CDXJ instead (no header line)")
    p.add_argument("--unsorted", action="store_true", help="print lines in file order, as records are read")
    return p


def cdx_main(argv: list[str]) -> int:
    """Entry point: ``argv`` without the program and command names. Returns the exit status."""
    args = _parser().parse_args(argv)
    paths = [Path(w) for w in args.warcs]
    for p in paths:
        if not p.exists():
            print(f"netharvest index cdx: {p}: no such file", file=sys.stderr)
            return EXIT_FAILED
        if p.is_dir():
            print(f"netharvest index cdx: {p}: is a directory, not a WARC file", file=sys.stderr)
            return EXIT_FAILED
    make = iter_cdxj_lines if args.cdxj else iter_cdx_lines
    lines: Iterator[bytes] = itertools.chain.from_iterable(make(p) for p in paths)
    out = sys.stdout.buffer
    try:
        if args.unsorted:
            if not args.cdxj:
                out.write(CDX_HEADER)
            out.writelines(lines)
        else:
            with tempfile.TemporaryDirectory(prefix="nh-cdx-") as work:
                ordered = sorted_lines(lines, work)
                # Pull the first line before printing anything: sorting consumes every file first,
                # so an error in any of them surfaces here, with nothing written yet.
                first = next(ordered, None)
                if not args.cdxj:
                    out.write(CDX_HEADER)
                if first is not None:
                    out.write(first)
                    out.writelines(ordered)
        out.flush()
    except BrokenPipeError:  # `… | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (WarcFormatError, OSError) as exc:
        print(f"netharvest index cdx: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(cdx_main(sys.argv[1:]))
