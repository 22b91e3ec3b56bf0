"""A proxy variable with credentials in the harvester's environment never reaches the sites or the archive.

The raw handler connects to the sites directly; Scrapy's HttpProxyMiddleware, left on, read ``http_proxy`` and
added ``Proxy-Authorization: Basic <user:password>`` to every request, which the handler sent to each origin
server and the WARC kept in each request record (harvester/crawlsettings.py)."""

from __future__ import annotations

from pathlib import Path

from crawlhelp import make_spec, run_crawl
from warcio.archiveiterator import ArchiveIterator


def test_proxy_credentials_in_the_environment_are_not_sent_nor_archived(tmp_path, monkeypatch, sites):
    a, _ = sites
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.setenv(name, "http://crawler:s3cret@127.0.0.1:9/")
    monkeypatch.setenv("no_proxy", "")
    result = run_crawl(tmp_path, make_spec([a.url], job_id=91))
    assert result["status"] == "DONE"
    requests = []
    for warc in Path(tmp_path).rglob("*.warc.gz"):
        with open(warc, "rb") as f:
            for record in ArchiveIterator(f):
                if record.rec_type == "request":
                    requests.append(record.http_headers.to_bytes())
    assert len(requests) > 10 and all(r.startswith(b"GET ") for r in requests)
    assert not [r for r in requests if b"proxy-authorization" in r.lower() or b"s3cret" in r]
    fetched = {line.split()[3]: line.split()[1] for line in (tmp_path / "logs" / "crawl.log").read_text().splitlines()}
    assert fetched[a.url] == "200"  # fetched directly, not through the (unreachable) proxy
