"""Reading files of lines that users give us (domains, seeds, traps, preload sources), in bounded memory.

Why: ``for line in stream`` holds a whole line, so one 300 MB line (a file that is not a list at all,
or a list missing its line ends) took 2.1 GB of memory in ``import-domains`` and was then echoed back
in full. Here each line is read with ``readline(limit)``: a line longer than the limit is reported
as a problem with its number, its length and a short prefix, and the rest of it is skipped in
64 KiB chunks, never held. A domain name is at most 253 characters, a URL or crawler-trap regex a
few thousand, so :data:`MAX_LINE_BYTES` refuses nothing real.

No Django here, so the trial crawl (``netharvest crawl --seeds``) reads its seeds with the same code
as the orchestrator (which re-exports it from :mod:`orchestrator.harvest.curation.validators`).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

#: The longest line read from a user's file, in bytes (its line end not counted).
MAX_LINE_BYTES = 16 * 1024
#: Characters of a refused value shown in an error message.
PREVIEW_CHARS = 60
_SKIP_CHUNK = 1 << 16


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """``repr`` of ``text``, cut to ``limit`` characters with the full length said: error messages
    name a bad value without echoing megabytes of it."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a file: ``text`` stripped of surrounding white space, or ``problem`` saying why
    the line could not be read (too long, not UTF-8); then ``text`` is empty."""

    number: int
    text: str
    problem: str = ""


def read_lines(stream: BinaryIO, max_bytes: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """Every line of a binary ``stream``, numbered from 1 as editors count them, each at most
    ``max_bytes`` long; memory stays below ``max_bytes`` + 64 KiB whatever the file holds."""
    number = 0
    while True:
        raw = stream.readline(max_bytes + 1)
        if not raw:
            return
        number += 1
        content = raw[:-1] if raw.endswith(b"\n") else raw
        if len(content) > max_bytes:
            length = len(content)
            while not raw.endswith(b"\n"):
                raw = stream.readline(_SKIP_CHUNK)
                if not raw:
                    break
                length += len(raw) - raw.endswith(b"\n")
            start = content[:PREVIEW_CHARS].decode("utf-8", "replace")
            yield Line(
                number,
                "",
                f"line longer than {max_bytes:,} bytes ({length:,} bytes, "
                f"starting {start!r}…): not a line of this list",
            )
            continue
        try:
            text = content.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            yield Line(number, "", f"not UTF-8 (byte {exc.start + 1} of the line)")
            continue
        yield Line(number, text)


def last_lines(path: Path, lines: int, max_bytes: int | None = None) -> list[str]:
    """The last ``lines`` lines of a file, read backwards from its end in 64 KiB blocks (at most ``max_bytes``
    of it when given): the tail of a log of gigabytes costs what the tail costs (a crawl.log on the job page,
    a failed job's engine log)."""
    block = 64 * 1024
    with open(path, "rb") as f:
        f.seek(0, io.SEEK_END)
        end = size = f.tell()
        data = b""
        while end > 0 and data.count(b"\n") <= lines and (max_bytes is None or size - end < max_bytes):
            start = max(0, end - block)
            f.seek(start)
            data = f.read(end - start) + data
            end = start
    return data.decode("utf-8", "replace").splitlines()[-lines:]
