"""PATH lines in pywb's path-index format, sorted and merged like CDX."""

from __future__ import annotations

import pytest

from indexer.merge import merge_sorted
from indexer.pathindex import lookup, path_line, write_path_file


def test_path_line_is_filename_tab_full_path():
    assert path_line("1-2-x.warc.gz", "/archive/loc1") == b"1-2-x.warc.gz\t/archive/loc1/1-2-x.warc.gz\n"
    assert path_line("a.warc.gz", "/p", "/backup") == b"a.warc.gz\t/p/a.warc.gz\t/backup/a.warc.gz\n"
    assert path_line("a.warc.gz", "http://store/warcs/") == b"a.warc.gz\thttp://store/warcs/a.warc.gz\n"
    for bad in ("", "a\tb", "a/b", "a\nb"):
        with pytest.raises(ValueError, match="invalid file name"):
            path_line(bad, "/p")


def test_write_and_merge_path_files(tmp_path):
    day1 = tmp_path / "day1.path"
    assert (
        write_path_file(
            [path_line("b.warc.gz", "/s1"), path_line("a.warc.gz", "/s2"), path_line("a.warc.gz", "/s2")], day1
        )
        == 2
    )
    assert day1.read_bytes() == b"a.warc.gz\t/s2/a.warc.gz\nb.warc.gz\t/s1/b.warc.gz\n"
    day2 = tmp_path / "day2.path"
    write_path_file([path_line("a.warc.gz.1", "/s1"), path_line("a.warc.gz", "/s2", "/r")], day2)
    master = tmp_path / "master.path"
    assert merge_sorted([day1, day2], master) == 4
    names = [ln.split(b"\t")[0] for ln in master.read_bytes().splitlines()]
    # 'a.warc.gz<TAB>' sorts before 'a.warc.gz.1' (tab < '.'), as LC_ALL=C sort has it
    assert names == [b"a.warc.gz", b"a.warc.gz", b"a.warc.gz.1", b"b.warc.gz"]
    assert lookup(master, "a.warc.gz") == ["/s2/a.warc.gz"]
    assert lookup(master, "b.warc.gz") == ["/s1/b.warc.gz"]
    assert lookup(master, "c.warc.gz") == []
