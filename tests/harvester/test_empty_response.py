"""crawl.log status -404 (glossary 004: "Empty HTTP response interpreted as a 404"): a server that
closes the connection cleanly without sending a byte. For robots.txt that means the host has no
robots.txt (Heritrix reads it so), where a connection broken otherwise (-3) leaves the host -61."""

from __future__ import annotations

import socket
import socketserver
import threading
from pathlib import Path

from crawlhelp import crawl_log, make_spec, run_crawl

PAGE = b'<html><body><a href="/gone">gone</a> <a href="/b">b</a></body></html>'


class Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return
            data += chunk
        path = data.split(b" ", 2)[1]
        if path in (b"/robots.txt", b"/gone"):
            sock.shutdown(socket.SHUT_RDWR)  # a clean close, not one byte
            return
        body = PAGE if path == b"/" else b"<p>b</p>"
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)
        )


def test_an_empty_response_is_minus_404_and_an_empty_robots_txt_allows_the_host(tmp_path: Path) -> None:
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        spec = make_spec([base + "/"], job_id=1440, settings={"scope": "host", "robots": "obey", "max_retries": 1})
        assert run_crawl(tmp_path / "job", spec)["status"] == "DONE"
    finally:
        srv.shutdown()
        srv.server_close()
    log = {f[3]: f for f in crawl_log(tmp_path / "job")}
    assert log[base + "/robots.txt"][1] == "-404"
    assert log[base + "/gone"][1] == "-404"
    assert "2t" in log[base + "/gone"][-1].split(",")  # retried (max_retries 1: two attempts), as -3 is
    assert log[base + "/"][1] == "200" and log[base + "/b"][1] == "200"  # robots.txt absent: host crawled
