"""The bounded reader of users' line files: numbering, the length limit at its edges, undecodable lines."""

from __future__ import annotations

import io

from harvester.linereader import Line, last_lines, preview, read_lines


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


def test_last_lines_reads_the_end_of_a_file_only(tmp_path) -> None:
    log = tmp_path / "harvester.log"
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(200_000)) + b"no line end at the end")
    assert last_lines(log, 3) == ["line 199998", "line 199999", "no line end at the end"]
    assert len(last_lines(log, 100_000)) == 100_000  # many blocks back
    # at most max_bytes (whole 64 KiB blocks) of a file read: far fewer lines than asked
    capped = last_lines(log, 100_000, max_bytes=1)
    assert capped[-1] == "no line end at the end" and len(capped) < 6_000
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert last_lines(empty, 3) == []
