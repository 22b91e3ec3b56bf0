"""Every CSV the product writes is safe to open in a spreadsheet: a cell that would be a formula
(from a crawled server's Content-Type, a curator's definition name or notes) starts with a quote."""

from __future__ import annotations

import csv
import io
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from orchestrator.harvest import csvsafe
from orchestrator.harvest.qa import stats
from tests.harvester.crawlhelp import make_spec, run_crawl

HOSTILE_MIME = "=cmd|' /C calc'!A0"


class _Hostile(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html>pwned?</html>"
        self.send_response(200)
        self.send_header("Content-Type", HOSTILE_MIME)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_crawled_content_type_and_a_definition_name_are_no_formulas_in_the_qa_export(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run_crawl(
            tmp_path / "job", make_spec([f"http://127.0.0.1:{server.server_address[1]}/"], max_objects=1)
        )
    finally:
        server.shutdown()
    assert result["status"] == "DONE"
    report = (tmp_path / "job" / "reports" / "mimetype-report.txt").read_text()
    mimes = stats.parse_mimetype_report(report)
    (hostile,) = [m for m in mimes if m.startswith("=cmd|")]  # the server's header, as the report keeps it
    old = stats.Figures(label='=HYPERLINK("http://evil.example/","news") run 1', objects=2, mime_types=mimes)
    new = stats.Figures(label="@SUM(1+1) run 2", objects=1, mime_types=mimes)
    table = list(csv.reader(io.StringIO(stats.to_csv(old, new))))
    assert table[0][3:] == ['\'=HYPERLINK("http://evil.example/","news") run 1', "'@SUM(1+1) run 2", "change"]
    cells = [cell for row in table for cell in row]
    assert f"'{hostile}" in cells
    assert not [c for c in cells if c.startswith(csvsafe.FORMULA_START) and not csvsafe._PLAIN_NUMBER.fullmatch(c)]
    assert ["totals", "objects", "count", "2", "1", "-50.0%"] in table  # numbers stay numbers


@pytest.mark.parametrize(
    "value, safe",
    [
        ("=1+1", "'=1+1"),
        ("+1+1", "'+1+1"),
        ("-1+1", "'-1+1"),
        ("@A1", "'@A1"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-5", "-5"),
        ("+12.5%", "+12.5%"),
        ("-1,234.5", "-1,234.5"),
        ("text", "text"),
        ("", ""),
        (-5, -5),
        (None, None),
    ],
)
def test_safe_cell(value: object, safe: object) -> None:
    assert csvsafe.safe_cell(value) == safe
