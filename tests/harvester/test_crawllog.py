"""crawl.log lines against Heritrix 3's format (UriProcessingFormatter), byte for byte."""

from __future__ import annotations

from datetime import UTC, datetime

from harvester.crawllog import LINE_RE, CrawlLog, format_line, log_timestamp, truncate_mime

# Lines as Heritrix 3 (NetarchiveSuite's build) wrote them: our regex must read them and our
# formatter must reproduce them from their fields.
HERITRIX_LINES = [
    "2016-12-05T10:11:09.265Z   200       1403 http://www.kaarefc.dk/ - - text/html #028 "
    "20161205101109092+65 sha1:SRUXQCLFCC4GVEDXGETBPUTUHRENTCRT - content-size:1731,3t",
    "2016-12-05T10:11:34.636Z  -404          0 http://jigsaw.w3.org/robots.txt EP "
    "http://jigsaw.w3.org/css-validator/images/vcss-blue unknown #027 - - - -",
    "2017-11-14T13:58:08.640Z -9998          - https://www.facebook.com/sharer.php LELL "
    "http://www.hu17.net/2017/05/14/x/ unknown #021 - - - -",
]


def _t(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def test_regex_reads_heritrix_lines():
    for line in HERITRIX_LINES:
        assert LINE_RE.match(line), line


def test_format_reproduces_a_heritrix_line():
    line = format_line(
        logged_at=_t("2016-12-05T10:11:09.265Z"),
        status=200,
        size=1403,
        uri="http://www.kaarefc.dk/",
        path="",
        via=None,
        mime="text/html; charset=iso-8859-1",
        thread=28,
        fetch_began=_t("2016-12-05T10:11:09.092Z"),
        duration_ms=65,
        digest="sha1:SRUXQCLFCC4GVEDXGETBPUTUHRENTCRT",
        annotations=["content-size:1731", "3t"],
    )
    assert line == HERITRIX_LINES[0] + "\n"


def test_negative_codes_widen_the_status_field():
    line = format_line(
        logged_at=_t("2017-11-14T13:58:08.640Z"),
        status=-9998,
        uri="https://www.facebook.com/sharer.php",
        path="LELL",
        via="http://www.hu17.net/2017/05/14/x/",
        thread=21,
    )
    assert line == HERITRIX_LINES[2] + "\n"
    assert format_line(status=-4, uri="http://a/", logged_at=_t("2020-01-01T00:00:00.000Z")) == (
        "2020-01-01T00:00:00.000Z    -4          - http://a/ - - unknown #000 - - - -\n"
    )


def test_field_rules():
    assert log_timestamp(datetime(2026, 11, 22, 18, 30, 12, 345999, tzinfo=UTC)) == "2026-11-22T18:30:12.345Z"
    assert len(log_timestamp(datetime.now(UTC))) == 24
    assert truncate_mime(None) == "unknown"
    assert truncate_mime("") == "no-type"
    assert truncate_mime("text/html;charset=utf-8") == "text/html"
    assert truncate_mime("text/html, text/plain") == "text/html"
    line = format_line(
        status=200, size=12345678901, uri="http://a/", thread=1234, logged_at=_t("2020-01-01T00:00:00.000Z")
    )
    assert " 12345678901 " in line and " #1234 " in line


def test_log_is_line_buffered_and_repairs_a_torn_tail(tmp_path):
    path = tmp_path / "crawl.log"
    log = CrawlLog(path)
    log.log(status=200, uri="http://a/", size=1)
    assert path.read_text().count("\n") == 1  # on disk before close: a kill -9 keeps it
    log.close()
    with open(path, "a") as f:
        f.write("2020-01-01T00:00:00.000Z   200   partial line without newl")
    CrawlLog(path).close()
    lines = path.read_text().splitlines()
    assert len(lines) == 1 and LINE_RE.match(lines[0])
