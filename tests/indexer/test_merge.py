"""The k-way merge: LC_ALL=C order (sort -m is the judge), identical lines collapsed, atomic
replacement, unsorted input refused, bounded memory."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from indexer.cdx import CDX_HEADER
from indexer.merge import UnsortedInputError, merge_sorted


def sort_m(paths: list[Path]) -> bytes:
    return subprocess.run(
        ["sort", "-m", "-u", *map(str, paths)],
        capture_output=True,
        check=True,
        env={"LC_ALL": "C", "PATH": os.environ["PATH"]},
    ).stdout


def write_sorted(path: Path, lines: list[bytes], header: bytes = b"") -> Path:
    path.write_bytes(header + b"".join(line + b"\n" for line in sorted(lines)))
    return path


def test_agrees_with_sort_m_including_tabs_and_prefixes(tmp_path):
    rng = random.Random(5)
    alphabet = [b"a", b"b", b"\t", b" ", b".", b"/", b"\xc3\xa9", b"Z", b"0"]
    files = []
    for i in range(7):
        lines = [b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(300)]
        lines += [b"x.warc.gz\t/a", b"x.warc.gz\t/a\t/b", b"x.warc.gz"]  # the PATH-file prefix cases
        files.append(write_sorted(tmp_path / f"in{i}.txt", [ln for ln in lines if ln.strip(b"\t ")]))
    out = tmp_path / "out.txt"
    n = merge_sorted(files, out)
    expected = sort_m(files)
    assert out.read_bytes() == expected
    assert n == expected.count(b"\n")


def test_identical_lines_collapse_and_header_once(tmp_path):
    lines = [b"com,example)/ 20260101000000 http://example.com/ text/html 200 AAA - - 10 0 a.warc.gz"]
    a = write_sorted(tmp_path / "a.cdx", lines, CDX_HEADER)
    b = write_sorted(tmp_path / "b.cdx", lines + [b"org,example)/ x"], CDX_HEADER)
    out = tmp_path / "master.cdx"
    assert merge_sorted([a, b, a], out, header=CDX_HEADER) == 2
    assert out.read_bytes() == CDX_HEADER + lines[0] + b"\n" + b"org,example)/ x\n"


def test_output_may_be_an_input_and_is_replaced_atomically(tmp_path):
    master = write_sorted(tmp_path / "master.cdx", [b"b 1", b"d 1"], CDX_HEADER)
    day = write_sorted(tmp_path / "day.cdx", [b"a 1", b"c 1", b"d 1"], CDX_HEADER)
    reader = open(master, "rb")  # a reader that opened the old master keeps reading it whole
    inode = master.stat().st_ino
    assert merge_sorted([master, day], master, header=CDX_HEADER) == 4
    assert master.read_bytes() == CDX_HEADER + b"a 1\nb 1\nc 1\nd 1\n"
    assert reader.read() == CDX_HEADER + b"b 1\nd 1\n"
    reader.close()
    assert master.stat().st_ino != inode  # a new file renamed over the old name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["day.cdx", "master.cdx"]


def test_unsorted_input_is_refused_and_target_untouched(tmp_path):
    master = write_sorted(tmp_path / "master.cdx", [b"a 1"])
    bad = tmp_path / "bad.cdx"
    bad.write_bytes(b"z 1\nb 1\n")
    with pytest.raises(UnsortedInputError, match="bad.cdx"):
        merge_sorted([master, bad], master)
    assert master.read_bytes() == b"a 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.cdx", "master.cdx"]


def test_missing_input_leaves_nothing(tmp_path):
    a = write_sorted(tmp_path / "a.cdx", [b"a 1"])
    with pytest.raises(FileNotFoundError):
        merge_sorted([a, tmp_path / "nope.cdx"], tmp_path / "out.cdx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.cdx"]


def test_killed_merge_leaves_the_old_target(tmp_path):
    """kill -9 in the middle of a merge: the target is the old file, whole; only a temp is left."""
    big = [b"k%08d" % i for i in range(400_000)]
    inputs = [write_sorted(tmp_path / f"in{i}.cdx", big[i::4]) for i in range(4)]
    master = write_sorted(tmp_path / "master.cdx", [b"a old"])
    code = (
        "import sys, time, indexer.merge as m\n"
        "orig = m.os.replace\n"
        "def slow(*a):\n    print('ready', flush=True); time.sleep(60)\n"
        "m.os.replace = slow\n"
        f"m.merge_sorted({[str(p) for p in inputs]!r}, {str(master)!r})\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE
    )
    assert proc.stdout.readline() == b"ready\n"  # the merged temp is complete, the rename not done
    proc.kill()
    proc.wait()
    assert master.read_bytes() == b"a old\n"
    # a re-run finishes the work; the leftover temp is ignored (and cleaned by the chain's clean step)
    assert merge_sorted(inputs, master) == 400_000


def test_memory_is_bounded(tmp_path):
    """Merging 64 files of 1.5M lines in total grows the process by far less than their size."""
    n_files, per_file = 64, 24_000
    inputs = []
    for i in range(n_files):
        p = tmp_path / f"in{i:02d}.cdx"
        p.write_bytes(
            b"".join(
                b"com,example)/page%07d 20260101000000 %s\n" % (j * n_files + i, b"x" * 60) for j in range(per_file)
            )
        )
        inputs.append(p)
    total = sum(p.stat().st_size for p in inputs)
    code = (
        "import resource, sys, indexer.merge as m\n"
        "from pathlib import Path\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "n = m.merge_sorted([Path(a) for a in sys.argv[2:]], Path(sys.argv[1]))\n"
        "print(n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "out.cdx"), *map(str, inputs)],
        check=True,
        capture_output=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout.split()
    assert int(out[0]) == n_files * per_file
    grown_kib = int(out[1])
    assert grown_kib * 1024 < total / 4, (grown_kib, total)
    assert grown_kib < 40 * 1024


def test_block_boundaries_long_lines_crlf_and_missing_final_newline(tmp_path, monkeypatch):
    """Tiny read blocks: lines straddle blocks, some are longer than a block; CRLF input and a
    last line without newline; an order violation that only shows across two blocks is caught."""
    import indexer.merge

    monkeypatch.setattr(indexer.merge, "READ_BLOCK", 7)
    rng = random.Random(9)
    files = []
    for i in range(5):
        lines = sorted({b"k%05d" % rng.randrange(3000) + b"x" * rng.randrange(0, 30) for _ in range(200)})
        body = b"".join(ln + b"\n" for ln in lines)
        if i == 1:
            body = body.replace(b"\n", b"\r\n")
        if i == 2:
            body = body[:-1]
        files.append(tmp_path / f"in{i}.txt")
        files[-1].write_bytes(body)
    out = tmp_path / "out.txt"
    merge_sorted(files, out)
    expected = sort_m([*files[:1], *files[2:]])
    crlf_lines = files[1].read_bytes().replace(b"\r\n", b"\n").splitlines(keepends=True)
    assert out.read_bytes().splitlines(keepends=True) == sorted(
        set(expected.splitlines(keepends=True)) | set(crlf_lines)
    )
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"aaaaaaaa\nbbbbbbbbbb\naaaaaaaaac\n")
    with pytest.raises(UnsortedInputError, match="bad.txt"):
        merge_sorted([bad], tmp_path / "never.txt")
    assert not (tmp_path / "never.txt").exists()


def test_header_only_and_empty_inputs(tmp_path):
    only_header = tmp_path / "h.cdx"
    only_header.write_bytes(CDX_HEADER)
    empty = tmp_path / "e.cdx"
    empty.write_bytes(b"")
    out = tmp_path / "out.cdx"
    assert merge_sorted([only_header, empty], out, header=CDX_HEADER) == 0
    assert out.read_bytes() == CDX_HEADER


def test_lines_kept_with_newlines_until_a_byte_below_newline_then_merged_again_cutting(tmp_path, monkeypatch):
    """CDX lines are merged with their newlines (found with memchr); a TAB (a PATH index) or a CR
    met after batches were written makes the merge start again cutting lines, with sort's result."""
    import indexer.merge as merge

    monkeypatch.setattr(merge, "READ_BLOCK", 256)
    rng = random.Random(9)
    words = [b"fr,a)/", b"fr,a)/x", b"fr,a)/x 2026", b"com,b)/", b"dk,c)/p?q=1", b"a", b"a b"]
    cdx = [[rng.choice(words) + b" %d" % rng.randrange(50) for _ in range(400)] for _ in range(5)]
    files = [write_sorted(tmp_path / f"c{i}.cdx", lines, CDX_HEADER) for i, lines in enumerate(cdx)]
    files.append(tmp_path / "blank.cdx")  # blank lines, no final newline
    files[-1].write_bytes(CDX_HEADER + b"\n" + b"\n\n".join(sorted(cdx[0][:50])))
    out = tmp_path / "out.cdx"
    passes = []
    real = merge._write_merged

    def spy(*args, keep_newlines, **kw):
        passes.append(keep_newlines)
        return real(*args, keep_newlines=keep_newlines, **kw)

    monkeypatch.setattr(merge, "_write_merged", spy)
    n = merge_sorted(files, out, header=CDX_HEADER)
    assert passes == [True]  # no byte below the newline: one pass, lines kept with their newlines
    expected = sort_m([write_sorted(tmp_path / "all", [ln for ls in cdx for ln in ls])])
    assert out.read_bytes() == CDX_HEADER + expected
    assert n == expected.count(b"\n")

    late_tab = sorted([b"zz %d" % i for i in range(200)] + [b"zz 99\tpath"])  # past the first blocks
    files.append(write_sorted(tmp_path / "tab.txt", late_tab))
    passes.clear()
    n = merge_sorted(files, out, header=CDX_HEADER)
    assert passes == [True, False]
    lines = [ln for ls in cdx for ln in ls] + late_tab
    expected = sort_m([write_sorted(tmp_path / "all", lines)])
    assert out.read_bytes() == CDX_HEADER + expected
    assert n == expected.count(b"\n")
