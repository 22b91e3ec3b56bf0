"""End-to-end: a raw socket server sends exactly the bytes we choose; a real Scrapy crawl (in a
subprocess, since a Twisted reactor runs once per process) fetches them through
RawHTTPDownloadHandler + ArchiveMiddleware; warcio, an independent reader, reads the WARCs back.

Run this file as a script (``python test_fetch.py config.json``) to perform one crawl; that is
how the tests start their crawls.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from crawlhelp import LoopbackTCPServer

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]

# --------------------------------------------------------------------------------------------
# The raw server
# --------------------------------------------------------------------------------------------
HTML = b"<html><head><title>t</title></head><body><a href='/x'>x</a></body></html>\n"
DUP_BODY = b"identical payload " * 50
GZ = gzip.compress(b"<html>" + b"compressible text " * 400 + b"</html>", mtime=0)
assert len(GZ) > 60
BOMB = gzip.compress(b"\0" * (40 * 1024 * 1024), mtime=0)


def ok_response(content_type: bytes, body: bytes, *headers: bytes) -> bytes:
    """A 200 response with its Content-Length, exactly as sent (the tests compare WARC records with it)."""
    head = [b"HTTP/1.1 200 OK", b"Content-Type: " + content_type, *headers, b"Content-Length: %d" % len(body)]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


OK = (
    b"HTTP/1.1 200 Fine\r\n"
    b"Content-Type: text/html; charset=utf-8\r\n"
    b"Set-Cookie: a=1; Path=/\r\n"
    b"Link: <http://127.0.0.1/a.css>; rel=preload\r\n"
    b"Set-Cookie: b=2; Path=/\r\n"
    b"X-Odd:no-space-after-colon\r\n"
    b"Link: <http://127.0.0.1/b.js>; rel=preload\r\n"
    b"Content-Length: " + str(len(HTML)).encode() + b"\r\n\r\n" + HTML
)
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5;ext=1\r\nhello\r\n7\r\n, world\r\n1\r\n!\r\n0\r\nX-Trailer: t\r\n\r\n"
)
GZIP = ok_response(b"text/html", GZ, b"Content-Encoding: gzip")
GZIP_CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
    + f"{len(GZ[:40]):x}".encode()
    + b"\r\n"
    + GZ[:40]
    + b"\r\n"
    + f"{len(GZ[40:]):x}".encode()
    + b"\r\n"
    + GZ[40:]
    + b"\r\n0\r\n\r\n"
)
DUP = ok_response(b"text/plain", DUP_BODY)
NOLENGTH = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nread until the server closes"
REDIRECT = b"HTTP/1.1 301 Moved Permanently\r\nLocation: /ok\r\nContent-Length: 0\r\n\r\n"
MIDBODY = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n" + b"a" * 300
BROKEN_CHUNK = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nhello\r\nZZ\r\nthis is not chunked\r\n"
)
HUGE_LEN = 3 * 1024 * 1024
HUGE_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: "
    + str(HUGE_LEN).encode()
    + b"\r\n\r\n"
)
BOMB_RESP = ok_response(b"text/html", BOMB, b"Content-Encoding: gzip")
SLOW_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n"
NOT_MODIFIED = b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n'
CACHED = b'HTTP/1.1 200 OK\r\nETag: "v1"\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\ncached'

ODD = {
    "/noreason": b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok",
    "/lf": b"HTTP/1.1 200 OK\nContent-Type: text/plain\nX-Folded: a\n b\nContent-Length: 2\n\nok",
    "/extra": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA BYTES NOT PART OF THE MESSAGE",
    "/garbage": b"SSH-2.0-OpenSSH_9.0\r\n\r\n",
    "/empty": b"",
    "/hints": (
        b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    ),
    "/nocontent": b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
}

STATIC = {
    **ODD,
    "/ok": OK,
    "/chunked": CHUNKED,
    "/gzip": GZIP,
    "/gzip-chunked": GZIP_CHUNKED,
    "/dup1": DUP,
    "/dup2": DUP,
    "/nolength": NOLENGTH,
    "/redirect": REDIRECT,
    "/midbody": MIDBODY,
    "/brokenchunk": BROKEN_CHUNK,
    "/bomb": BOMB_RESP,
}


class RawHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                data += chunk
        except OSError:
            return
        path = data.split(b" ", 2)[1].decode()
        self.server.received[path] = data  # type: ignore[attr-defined]
        try:
            self.respond(sock, path, data)
        except OSError:
            pass

    def respond(self, sock: socket.socket, path: str, request: bytes) -> None:
        if path in STATIC:
            sock.sendall(STATIC[path])
        elif path == "/huge":
            sock.sendall(HUGE_HEAD)
            block = b"x" * 65536
            for _ in range(HUGE_LEN // len(block)):
                sock.sendall(block)
        elif path == "/slow":
            sock.sendall(SLOW_HEAD)
            for _ in range(100):
                sock.sendall(b"s")
                time.sleep(0.1)
        elif path == "/silent":
            time.sleep(4)
        elif path == "/cached":
            if b'If-None-Match: "v1"' in request:
                sock.sendall(NOT_MODIFIED)
            else:
                sock.sendall(CACHED)
        else:
            sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class RawServer(LoopbackTCPServer):
    def __init__(self, tls: Any = None) -> None:
        super().__init__(RawHandler)
        self.received: dict[str, bytes] = {}
        self.tls = tls

    def get_request(self):
        sock, addr = super().get_request()
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_side=True)
        return sock, addr


def self_signed_context(tmp: Path):
    """A server TLS context with a throwaway self-signed certificate (crawlers do not verify)."""
    import datetime as dt
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    (tmp / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    return ctx


@pytest.fixture(scope="module")
def server():
    srv = RawServer()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


# --------------------------------------------------------------------------------------------
# The crawl, in a child process
# --------------------------------------------------------------------------------------------
JOB = {  # the JobSpec of the crawl, less its domain (the child adds it: the server's address and first URL)
    "version": 1,
    "job_id": 7,
    "harvest_id": 3,
    "harvest_name": "test harvest",
    "harvest_run": 2,
    "template": "default",
    "settings": {"operator_contact": "ops@example.org", "robots": "ignore", "user_agent": "netharvest-test"},
    "kind": "selective",
    "channel": "focused",
}


def crawl(tmp_path: Path, urls: list[dict[str, Any]], **settings: Any) -> dict[str, Any]:
    """Run one crawl of ``urls`` (dicts: url, meta, reject) in a subprocess; return its result."""
    config = {"urls": urls, "out": str(tmp_path / "job"), "settings": settings, "result": str(tmp_path / "result.json")}
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config))
    proc = subprocess.run([sys.executable, str(HERE), str(cfg)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads((tmp_path / "result.json").read_text())


def _run_crawl(config_path: str) -> None:  # pragma: no cover - runs in the child process
    import scrapy
    from scrapy.crawler import CrawlerProcess

    from harvester.archive import ArchiveMiddleware
    from harvester.contracts import JobSpec
    from harvester.crawlsignals import uri_rejected
    from harvester.urimeta import UriMeta

    config = json.loads(Path(config_path).read_text())
    result: dict[str, Any] = {}

    class TestSpider(scrapy.Spider):
        name = "t"

        async def start(self):
            for item in config["urls"]:
                nh = UriMeta(
                    path=item.get("path", ""),
                    via=item.get("via"),
                    hops=0,
                    domain=item.get("domain", "127.0.0.1"),
                    seed=item.get("seed", True),
                )
                meta = {"nh": nh, **item.get("meta", {})}
                request = scrapy.Request(
                    item["url"],
                    meta=meta,
                    dont_filter=True,
                    method=item.get("method", "GET"),
                    body=item.get("body"),
                    callback=self.parse,
                    errback=self.failed,
                )
                if item.get("reject"):
                    self.crawler.signals.send_catch_log(
                        uri_rejected, request=request, status=item["reject"], annotation=item.get("annotation", "")
                    )
                    continue
                yield request

        def parse(self, response):
            result.setdefault("bodies", {})[response.url] = hashlib.sha1(response.body).hexdigest()
            result.setdefault("statuses", {})[response.url] = response.status

        def failed(self, failure):
            result.setdefault("failures", {})[failure.request.url] = type(failure.value).__name__

    settings = {
        "DOWNLOAD_HANDLERS": {
            "http": "harvester.fetch.RawHTTPDownloadHandler",
            "https": "harvester.fetch.RawHTTPDownloadHandler",
        },
        "DOWNLOADER_MIDDLEWARES": {"harvester.archive.ArchiveMiddleware": 950},
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "ERROR",
        "COOKIES_ENABLED": False,
        "RETRY_TIMES": 1,
        "REDIRECT_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 10,
        "DOWNLOAD_MAXSIZE": 10 * 1024 * 1024,
        "DOWNLOAD_WARNSIZE": 0,
        "CONCURRENT_REQUESTS": 4,
        "USER_AGENT": "netharvest-test",
        "NH_JOBSPEC": JobSpec.from_dict(
            {**JOB, "domains": [{"name": "127.0.0.1", "configuration": "default", "seeds": [config["urls"][0]["url"]]}]}
        ),
        "NH_OUT_DIR": config["out"],
        "NH_WARC_MAX_BYTES": 10 * 1024 * 1024,
        "NH_DEDUP": True,
        "NH_MAX_DOCUMENT_BYTES": 1024 * 1024,
        **config["settings"],
    }
    process = CrawlerProcess(settings=settings)
    crawler = process.create_crawler(TestSpider)

    def closed(spider, reason):
        mw = ArchiveMiddleware.of(crawler)
        files = mw.finish(stop_reasons={"127.0.0.1": "DOWNLOAD_COMPLETE"}, frontier_summary={"queued": 0})
        result["files"] = [f.__dict__ for f in files]
        result["again"] = [f.__dict__ for f in mw.finish()]
        result["domain_stats"] = mw.stats_for("127.0.0.1")

    from scrapy import signals

    crawler.signals.connect(closed, signal=signals.spider_closed)
    process.crawl(crawler)
    process.start()
    Path(config["result"]).write_text(json.dumps(result))


# --------------------------------------------------------------------------------------------
# Reading it back
# --------------------------------------------------------------------------------------------
def records(path: Path) -> list[dict[str, Any]]:
    """Every record of a WARC via warcio: headers, raw block (unparsed), digest check result."""
    from warcio.archiveiterator import ArchiveIterator

    out = []
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f, no_record_parse=True):
            out.append({"type": rec.rec_type, "headers": dict(rec.rec_headers.headers), "block": rec.raw_stream.read()})
    with open(path, "rb") as f:  # a second, parsing pass verifies block and payload digests
        for i, rec in enumerate(ArchiveIterator(f, check_digests=True)):
            while rec.raw_stream.read(1 << 16):
                pass
            out[i]["passed"] = rec.digest_checker.passed
            out[i]["problems"] = list(rec.digest_checker.problems)
    return out


def warcs(result: dict[str, Any], kind: str = "warc") -> list[Path]:
    return [Path(f["path"]) for f in result["files"] if f["kind"] == kind]


def all_records(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for p in warcs(result) for r in records(p)]


def by_uri(recs: list[dict[str, Any]], uri: str, rtype: str) -> dict[str, Any]:
    found = [r for r in recs if r["type"] == rtype and r["headers"].get("WARC-Target-URI") == uri]
    assert len(found) == 1, (uri, rtype, [r["type"] for r in recs])
    return found[0]


def crawl_log(tmp_path: Path) -> dict[str, re.Match]:
    from harvester.crawllog import LINE_RE

    lines = (tmp_path / "job" / "logs" / "crawl.log").read_text().splitlines()
    out = {}
    for line in lines:
        m = LINE_RE.match(line)
        assert m, line
        out[m["uri"]] = m
    return out


# --------------------------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def main_crawl(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("main")
    base = f"http://127.0.0.1:{server.server_address[1]}"
    from tests.conftest import free_port  # here: this file is also the crawl child's script

    refused = f"http://127.0.0.1:{free_port()}/refused"
    urls = [
        {"url": base + p}
        for p in (
            "/ok",
            "/chunked",
            "/gzip",
            "/gzip-chunked",
            "/nolength",
            "/redirect",
            "/midbody",
            "/brokenchunk",
            "/huge",
            "/bomb",
        )
    ]
    urls.append({"url": base + "/dup1", "path": "L", "via": base + "/ok", "seed": False})
    urls.append({"url": base + "/slow", "meta": {"download_timeout": 2}})
    urls.append({"url": base + "/silent", "meta": {"download_timeout": 1, "dont_retry": True}})
    urls.append({"url": refused})
    urls.append({"url": base + "/robots-blocked", "reject": -9998, "path": "L", "via": base + "/ok", "seed": False})
    urls.append(
        {
            "url": base + "/overquota",
            "reject": -5003,
            "annotation": "Q:groupMaxFetchSuccesses",
            "seed": False,
            "path": "LL",
        }
    )
    result = crawl(tmp, urls)
    # /dup2 in a second crawl round would need a second process; fetch it after dup1 here instead:
    return {"tmp": tmp, "base": base, "refused": refused, "result": result, "server": server}


def test_status_line_header_order_and_body_are_verbatim(main_crawl):
    base, server = main_crawl["base"], main_crawl["server"]
    recs = all_records(main_crawl["result"])
    resp = by_uri(recs, base + "/ok", "response")
    assert resp["block"] == OK  # status line "200 Fine", header order, repeats, odd spacing, body
    req = by_uri(recs, base + "/ok", "request")
    assert req["block"] == server.received["/ok"]
    assert req["block"].startswith(b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1:")
    assert req["headers"]["WARC-Concurrent-To"] == resp["headers"]["WARC-Record-ID"]
    assert resp["headers"]["WARC-IP-Address"] == "127.0.0.1"
    assert resp["headers"]["WARC-Payload-Digest"].startswith("sha1:")


def test_chunked_and_gzip_kept_as_transferred(main_crawl):
    base = main_crawl["base"]
    recs = all_records(main_crawl["result"])
    for path, raw in (
        ("/chunked", CHUNKED),
        ("/gzip", GZIP),
        ("/gzip-chunked", GZIP_CHUNKED),
        ("/nolength", NOLENGTH),
        ("/redirect", REDIRECT),
        ("/bomb", BOMB_RESP),
    ):
        assert by_uri(recs, base + path, "response")["block"] == raw, path
    bodies = main_crawl["result"]["bodies"]
    # Scrapy saw the body de-chunked (and HttpCompression decoded gzip as usual).
    assert bodies[base + "/chunked"] == hashlib.sha1(b"hello, world!").hexdigest()
    assert bodies[base + "/gzip-chunked"] == hashlib.sha1(gzip.decompress(GZ)).hexdigest()


def test_every_digest_verifies_with_warcio(main_crawl):
    for path in warcs(main_crawl["result"]) + warcs(main_crawl["result"], "metadata"):
        for rec in records(path):
            assert rec["passed"] is not False, (rec["headers"], rec["problems"])
        exe = Path(sys.executable).with_name("warcio")
        proc = subprocess.run([str(exe), "check", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_truncations_are_marked(main_crawl):
    base = main_crawl["base"]
    recs = all_records(main_crawl["result"])
    mid = by_uri(recs, base + "/midbody", "response")
    assert mid["headers"]["WARC-Truncated"] == "disconnect"
    assert mid["block"] == MIDBODY
    huge = by_uri(recs, base + "/huge", "response")
    assert huge["headers"]["WARC-Truncated"] == "length"
    assert len(huge["block"]) == len(HUGE_HEAD) + 1024 * 1024
    slow = by_uri(recs, base + "/slow", "response")
    assert slow["headers"]["WARC-Truncated"] == "time"
    broken = by_uri(recs, base + "/brokenchunk", "response")
    assert broken["block"] == BROKEN_CHUNK  # kept as received, whatever it is
    log = crawl_log(main_crawl["tmp"])
    assert "lenTrunc" in log[base + "/huge"]["annotations"]
    assert "timeTrunc" in log[base + "/slow"]["annotations"]
    assert "midFetchTrunc" in log[base + "/midbody"]["annotations"]


def test_failures_are_logged_with_heritrix_codes(main_crawl):
    base = main_crawl["base"]
    log = crawl_log(main_crawl["tmp"])
    silent = log[base + "/silent"]
    assert silent["status"] == "   -4" and silent["size"] == "         -" and silent["mime"] == "unknown"
    refused = log[main_crawl["refused"]]
    assert refused["status"] == "   -2"
    assert refused["annotations"] == "2t"  # RETRY_TIMES=1: logged once, after the second attempt
    robots = log[base + "/robots-blocked"]
    assert robots["status"] == "-9998" and robots["path"] == "L" and robots["via"] == base + "/ok"
    quota = log[base + "/overquota"]
    assert quota["status"] == "-5003" and quota["annotations"] == "Q:groupMaxFetchSuccesses"
    lines = (main_crawl["tmp"] / "job" / "logs" / "crawl.log").read_text().splitlines()
    assert sum(main_crawl["refused"] in line for line in lines) == 1


def test_crawl_log_line_for_a_known_fetch_is_exact(main_crawl):
    from harvester.warcwriter import sha1_b32

    base = main_crawl["base"]
    log = crawl_log(main_crawl["tmp"])
    line = log[base + "/dup1"].group(0)
    digest = sha1_b32(hashlib.sha1(DUP_BODY).digest())
    content_size = len(DUP)
    expected = (
        re.escape(f"  200 {len(DUP_BODY):>10} {base}/dup1 L {base}/ok text/plain #")
        + r"\d{3} \d{17}\+\d+ "
        + re.escape(f"{digest} - content-size:{content_size}")
    )
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z " + expected, line), line
    ok = log[base + "/ok"].group(0)
    assert " text/html " in ok and f" {base}/ok - - " in ok


def test_files_named_closed_and_warcinfo_first(main_crawl):
    result = main_crawl["result"]
    assert result["files"] == result["again"]  # finish() is idempotent
    names = [Path(f["path"]).name for f in result["files"]]
    host = re.escape(re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname()))
    for name in names[:-1]:
        assert re.fullmatch(rf"7-3-\d{{14}}-\d{{5}}-{host}\.warc\.gz", name), name
    assert names[-1] == "7-metadata-1.warc.gz"
    job = main_crawl["tmp"] / "job"
    assert not list(job.rglob("*.open"))
    for f in result["files"]:
        data = Path(f["path"]).read_bytes()
        assert f["size"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()
        first = records(Path(f["path"]))[0]
        assert first["type"] == "warcinfo"
        assert b"software: netharvest/" in first["block"] and b"operator: ops@example.org" in first["block"]


def test_metadata_warc_holds_log_reports_jobspec_seeds(main_crawl):
    meta = records(warcs(main_crawl["result"], "metadata")[0])
    uris = [r["headers"].get("WARC-Target-URI", "") for r in meta[1:]]
    assert all(r["type"] == "metadata" for r in meta[1:])
    names = [u.split("?")[0].rsplit("/", 1)[1] for u in uris]
    assert names[0] == "crawl.log"
    for n in (
        "crawl-report.txt",
        "seeds-report.txt",
        "hosts-report.txt",
        "mimetype-report.txt",
        "responsecode-report.txt",
        "frontier-summary-report.txt",
        "domain-report.json",
        "jobspec.json",
        "seeds.txt",
    ):
        assert n in names
    assert uris[0].startswith("metadata://netharvest/crawl/logs/crawl.log?netharvestVersion=")
    assert uris[0].endswith("&harvestid=3&harvestnum=2&jobid=7")
    log = (main_crawl["tmp"] / "job" / "logs" / "crawl.log").read_bytes()
    assert meta[1]["block"] == log


def test_reports_and_stats(main_crawl):
    base = main_crawl["base"]
    reports = main_crawl["tmp"] / "job" / "reports"
    hosts = (reports / "hosts-report.txt").read_text().splitlines()
    assert hosts[0].startswith("[#urls] [#bytes] [host] [#robots]")
    fields = hosts[1].split(" ")
    assert fields[2] == "127.0.0.1" and fields[3] == "1"  # one robots.txt exclusion
    seeds = (reports / "seeds-report.txt").read_text()
    assert f"301 CRAWLED {base}/redirect {base}/ok" in seeds
    codes = (reports / "responsecode-report.txt").read_text()
    assert codes.startswith("[#urls] [rescode]\n")
    domain = json.loads((reports / "domain-report.json").read_text())["domains"]["127.0.0.1"]
    assert domain["stop_reason"] == "DOWNLOAD_COMPLETE"
    stats = main_crawl["result"]["domain_stats"]
    assert stats["objects"] == domain["objects"] and stats["objects"] >= 12
    assert stats["status_codes"]["301"] == 1


def test_dedup_within_job_and_server_not_modified(server, tmp_path):
    from indexer.dedup import Capture, DedupIndex

    base = f"http://127.0.0.1:{server.server_address[1]}"
    index = tmp_path / "dedup.sqlite"
    with DedupIndex(index) as idx:
        idx.add(
            [
                Capture(
                    "sha1:" + "A" * 32, base + "/cached", "20250101120000", "old.warc.gz", 0, "text/plain", '"v1"', ""
                )
            ]
        )
    result = crawl(
        tmp_path, [{"url": base + "/dup1"}, {"url": base + "/cached"}], NH_DEDUP_INDEX=str(index), CONCURRENT_REQUESTS=1
    )
    assert server.received["/cached"].count(b'If-None-Match: "v1"') == 1
    recs = all_records(result)
    revisit = by_uri(recs, base + "/cached", "revisit")
    h = revisit["headers"]
    assert h["WARC-Profile"].endswith("/revisit/server-not-modified")
    assert h["WARC-Refers-To-Target-URI"] == base + "/cached"
    assert h["WARC-Refers-To-Date"] == "2025-01-01T12:00:00Z"
    assert h["WARC-Payload-Digest"] == "sha1:" + "A" * 32
    assert revisit["block"] == NOT_MODIFIED
    log = crawl_log(tmp_path)
    assert "duplicate:server-not-modified" in log[base + "/cached"]["annotations"]

    # Second crawl in the same job dir: dup2 has dup1's payload (stored above, same job would
    # need the in-memory map; a fresh job finds it through the index instead).
    tmp2 = tmp_path / "second"
    tmp2.mkdir()
    digest = by_uri(recs, base + "/dup1", "response")["headers"]["WARC-Payload-Digest"]
    with DedupIndex(index) as idx:
        idx.add([Capture(digest, base + "/dup1", "20250102000000", "x.warc.gz", 0, "text/plain")])
    result2 = crawl(tmp2, [{"url": base + "/dup2"}], NH_DEDUP_INDEX=str(index))
    rv = by_uri(all_records(result2), base + "/dup2", "revisit")["headers"]
    assert rv["WARC-Profile"].endswith("/revisit/identical-payload-digest")
    assert rv["WARC-Refers-To-Target-URI"] == base + "/dup1"
    assert rv["WARC-Payload-Digest"] == digest
    assert "duplicate:digest" in crawl_log(tmp2)[base + "/dup2"]["annotations"]


def test_in_job_duplicate_refers_to_first_capture(server, tmp_path):
    base = f"http://127.0.0.1:{server.server_address[1]}"
    result = crawl(tmp_path, [{"url": base + "/dup1"}, {"url": base + "/dup2"}], CONCURRENT_REQUESTS=1)
    recs = all_records(result)
    first = by_uri(recs, base + "/dup1", "response")
    rv = by_uri(recs, base + "/dup2", "revisit")
    assert rv["headers"]["WARC-Refers-To"] == first["headers"]["WARC-Record-ID"]
    assert rv["headers"]["WARC-Refers-To-Target-URI"] == base + "/dup1"
    stats = result["domain_stats"]
    assert stats["revisits"] == 1 and stats["bytes_saved"] == len(DUP)


def test_odd_responses(server, tmp_path):
    base = f"http://127.0.0.1:{server.server_address[1]}"
    urls = [{"url": base + p, "meta": {"dont_retry": True}} for p in ODD]
    urls.append({"url": base + "/ok", "meta": {"dont_retry": True}, "method": "POST", "body": "a=1&b=2"})
    result = crawl(tmp_path, urls, NH_DEDUP=False)
    recs = all_records(result)
    assert by_uri(recs, base + "/noreason", "response")["block"] == ODD["/noreason"]
    assert by_uri(recs, base + "/lf", "response")["block"] == ODD["/lf"]
    extra = by_uri(recs, base + "/extra", "response")["block"]
    assert extra == b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"  # bytes past the message: not it
    # An interim 1xx head is not archived: the record is the final response, as replay tools need.
    assert by_uri(recs, base + "/hints", "response")["block"].startswith(b"HTTP/1.1 200 OK")
    assert by_uri(recs, base + "/nocontent", "response")["block"] == ODD["/nocontent"]
    post = by_uri(recs, base + "/ok", "request")["block"]
    assert post.startswith(b"POST /ok HTTP/1.1\r\n") and post.endswith(b"\r\n\r\na=1&b=2")
    assert b"Content-Length: 7\r\n" in post
    log = crawl_log(tmp_path)
    assert log[base + "/garbage"]["status"] == "   -3"
    assert log[base + "/empty"]["status"] == " -404"  # glossary: "Empty HTTP response interpreted as a 404"
    assert log[base + "/noreason"]["mime"] == "no-type"
    assert result["bodies"][base + "/lf"] == hashlib.sha1(b"ok").hexdigest()


def test_https_is_fetched_and_archived_verbatim(tmp_path):
    srv = RawServer(tls=self_signed_context(tmp_path))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = f"https://127.0.0.1:{srv.server_address[1]}"
        result = crawl(tmp_path, [{"url": base + "/ok"}, {"url": base + "/chunked"}])
        recs = all_records(result)
        assert by_uri(recs, base + "/ok", "response")["block"] == OK
        assert by_uri(recs, base + "/chunked", "response")["block"] == CHUNKED
        assert by_uri(recs, base + "/ok", "request")["block"] == srv.received["/ok"]
        assert crawl_log(tmp_path)[base + "/ok"]["status"] == "  200"
    finally:
        srv.shutdown()
        srv.server_close()


if __name__ == "__main__":  # pragma: no cover
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    _run_crawl(sys.argv[1])


def test_response_headers_are_scrapys_headers_of_the_fields() -> None:
    """fetch.response_headers fills Scrapy's Headers at the dict level (issue 14): the same keys, values,
    order and lookups as Headers(fields), repeats and case variants included."""
    import random

    from scrapy.http import Headers

    from harvester.fetch import response_headers

    rng = random.Random(14)
    names = [b"Content-Type", b"content-type", b"SET-COOKIE", b"Set-Cookie", b"x-a", b"X-A-b", b"Location", b"etag"]
    for _ in range(500):
        fields = [(rng.choice(names), rng.randbytes(rng.randrange(0, 6))) for _ in range(rng.randrange(0, 9))]
        ours, scrapys = response_headers(fields), Headers(fields)
        assert type(ours) is type(scrapys) and ours.encoding == scrapys.encoding
        assert list(dict.items(ours)) == list(dict.items(scrapys))
        for name in names:
            assert ours.getlist(name) == scrapys.getlist(name) and ours.get(name) == scrapys.get(name)
