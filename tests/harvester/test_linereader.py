"""The bounded reader of users' line files: numbering, the length limit at its edges, undecodable lines."""

from __future__ import annotations

import io

from harvester.linereader import Line, preview, read_lines


def test_lines_are_numbered_stripped_and_bounded_at_the_limit() -> None:
    data = b" a.dk \r\n\n" + b"b" * 8 + b"\n" + b"c" * 9 + b"\n" + b"d" * 9 + b"\xff\ncaf\xe9\nlast"
    assert list(read_lines(io.BytesIO(data), max_bytes=8)) == [
        Line(1, "a.dk"),
        Line(2, ""),
        Line(3, "b" * 8),  # exactly the limit: kept
        Line(4, "", "line longer than 8 bytes (9 bytes, starting 'ccccccccc'…): not a line of this list"),
        Line(5, "", "line longer than 8 bytes (10 bytes, starting 'ddddddddd'…): not a line of this list"),
        Line(6, "", "not UTF-8 (byte 4 of the line)"),
        Line(7, "last"),
    ]


def test_a_long_line_is_skipped_in_chunks_never_read_whole() -> None:
    class Recording(io.BytesIO):
        largest = 0

        def readline(self, size: int | None = -1) -> bytes:  # type: ignore[override]
            line = super().readline(size)
            Recording.largest = max(Recording.largest, len(line))
            return line

    stream = Recording(b"x" * (5 << 20) + b"\nnext\n")
    lines = list(read_lines(stream))
    assert [line.number for line in lines] == [1, 2] and lines[1].text == "next"
    assert "5,242,880 bytes" in lines[0].problem and Recording.largest <= 1 << 16


def test_preview_cuts_long_values() -> None:
    assert preview("short") == "'short'"
    assert preview("z" * 1000) == f"{'z' * 60!r}… (1,000 characters)"
