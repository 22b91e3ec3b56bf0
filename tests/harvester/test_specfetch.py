"""Reading a JobSpec by reference (harvester.specfetch) from a real HTTP server on 127.0.0.1: the token is
sent, a 5xx or a refused connection is retried, a 4xx or another job's spec fails at once, in one line."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from harvester.contracts import ContractError, JobRef, is_job_ref
from harvester.specfetch import SpecUnreadable, fetch_spec, resolve


class Server:
    """Answers each GET with the next of ``answers`` (status, body), recording the Authorization header."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, bytes]] = []
        self.auth: list[str | None] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.auth.append(self.headers.get("Authorization"))
                status, body = outer.answers.pop(0)
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/api/v1/jobs/7/spec"


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.httpd.shutdown()


def test_spec_read_with_the_token_after_a_5xx(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NETHARVEST_API_TOKEN", "nh_secret")
    server.answers = [(503, b"busy"), (200, json.dumps({"job_id": 7, "domains": []}).encode())]
    waits: list[float] = []
    spec = fetch_spec(JobRef(7, server.url), sleep=waits.append)
    assert spec == {"job_id": 7, "domains": []}
    assert server.auth == ["Bearer nh_secret"] * 2 and waits == [1]


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ((404, b"{}"), "HTTP 404 Not Found"),
        ((401, b"{}"), "HTTP 401 Unauthorized (set NETHARVEST_API_TOKEN to a token with the read role)"),
        ((200, b'{"job_id": 8}'), "the spec read is job 8's, not this job's"),
        ((200, b"<html>"), "not JSON: Expecting value: line 1 column 1 (char 0)"),
    ],
)
def test_unreadable_spec_fails_at_once_in_one_line(server: Server, answer: tuple[int, bytes], says: str) -> None:
    server.answers = [answer]
    with pytest.raises(SpecUnreadable) as caught:
        fetch_spec(JobRef(7, server.url), sleep=lambda s: pytest.fail("a 4xx is not retried"))
    assert str(caught.value) == f"job 7: {server.url}: {says}"
    # Only a refused token is this harvester's fault (the message goes back to the queue); the rest the job's.
    assert caught.value.this_harvester == (answer[0] == 401)


def test_an_orchestrator_that_does_not_answer_is_tried_then_named() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connections are refused
    waits: list[float] = []
    with pytest.raises(SpecUnreadable, match=rf"^job 7: http://127.0.0.1:{port}/spec: .*refused.* \(after 3 tries\)$"):
        fetch_spec(JobRef(7, f"http://127.0.0.1:{port}/spec"), tries=3, sleep=waits.append)
    assert waits == [1, 2]
    try:
        fetch_spec(JobRef(7, f"http://127.0.0.1:{port}/spec"), tries=1)
    except SpecUnreadable as exc:
        assert exc.this_harvester  # the API out of reach: not the job's fault


def test_job_ref_contract() -> None:
    ref = JobRef(5, "https://orchestrator.example/api/v1/jobs/5/spec")
    assert JobRef.from_dict(ref.to_dict()) == ref and is_job_ref(ref.to_dict())
    assert resolve({"version": 1, "job_id": 5}) == {"version": 1, "job_id": 5}  # a whole JobSpec passes through
    with pytest.raises(ContractError, match=r"^spec_url: expected an http\(s\) URL, got 'file:///etc/passwd'$"):
        JobRef.from_dict({"version": 1, "job_id": 5, "spec_url": "file:///etc/passwd"})
    with pytest.raises(ContractError, match="^job_id: is missing$"):
        resolve({"version": 1, "spec_url": "http://x/"})
