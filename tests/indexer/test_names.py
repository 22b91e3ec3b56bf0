"""Archive file names → job and harvest definition (for per-harvest sub-indexes)."""

import pytest

from indexer.names import ArchiveName, parse_archive_name


def test_content_and_metadata_names():
    assert parse_archive_name("12-7-20261123122947-00003-vm.example.org.warc.gz") == ArchiveName(
        12, 7, False, "20261123122947", 3, "vm.example.org"
    )
    assert parse_archive_name("12-metadata-1.warc.gz") == ArchiveName(12, None, True, serial=1)


@pytest.mark.parametrize("bad", ["x.warc.gz", "12-7-2026-00003-vm.warc.gz", "12-7-20261123122947-00003-vm.cdx"])
def test_other_names_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="not a netharvest archive file name"):
        parse_archive_name(bad)
