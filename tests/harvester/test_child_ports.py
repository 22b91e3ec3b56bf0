"""A crawl child opens no listening socket and leaves no control files: Scrapy's telnet console and its
RemoteControl extension (a loopback endpoint that runs Python code, started in every crawl by Scrapy
2.19, with token files that outlive a killed crawl) are off, as is every extension the harvester does
not use."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from crawlhelp import REPO, make_spec, write_spec

from harvester.contracts import JobSpec
from harvester.crawlsettings import build_settings


def listening_ports(pid: int) -> set[int]:
    """TCP ports in LISTEN state on sockets the process ``pid`` holds (its fds' socket inodes matched
    against /proc/net/tcp and tcp6)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for row in path.read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_a_crawl_child_listens_on_no_port(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    job_dir = tmp_path / "job"
    # Slow enough to be looked at while it runs: one URI every 0.3 s.
    write_spec(job_dir, make_spec([a.url], settings={"min_delay_ms": 300, "max_delay_ms": 300}))
    state = tmp_path / "state"  # where Scrapy's RemoteControl writes its token files (XDG state dir)
    env = {**os.environ, "XDG_STATE_HOME": str(state), "HOME": str(tmp_path)}
    child = subprocess.Popen(
        [sys.executable, "-m", "harvester.process", str(job_dir)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        log = job_dir / "logs" / "crawl.log"
        deadline = time.monotonic() + 60
        while not (log.exists() and len(log.read_text().splitlines()) >= 3):
            assert child.poll() is None and time.monotonic() < deadline, "the crawl did not get going"
            time.sleep(0.1)
        # The engine is running and fetching: every extension has started by now.
        assert listening_ports(child.pid) == set()
        assert child.poll() is None  # it was still crawling when looked at
    finally:
        child.send_signal(signal.SIGKILL)  # as a killed crawl: nothing may be left behind either
        child.wait(30)
    assert not state.exists() or not any(p.is_file() for p in state.rglob("*"))


def test_only_the_extensions_the_harvester_uses_are_on() -> None:
    from harvester.crawlsettings import EXTENSIONS_USED

    spec = JobSpec.from_dict(make_spec(["http://127.0.0.1:1/"]))
    settings = build_settings(spec, "/nonexistent")
    assert (
        set(settings["EXTENSIONS_BASE"])
        == set(EXTENSIONS_USED)
        == {
            "scrapy.extensions.corestats.CoreStats",
            "scrapy.extensions.logstats.LogStats",
            "scrapy.extensions.logcount.LogCount",
        }
    )
    assert settings["TELNETCONSOLE_ENABLED"] is False and settings["REMOTE_CONTROL_ENABLED"] is False


def test_inert_scrapy_middlewares_are_off_and_header_ones_stay() -> None:
    """Per-request Scrapy components that do nothing for us are off (issue 14's CPU goal); those that
    shape the request bytes archived in the WARC (tests/harvester pin them) are left as they were."""
    spec = JobSpec.from_dict(make_spec(["http://127.0.0.1:1/"]))
    settings = build_settings(spec, "/nonexistent")
    downloader, spider = settings["DOWNLOADER_MIDDLEWARES"], settings["SPIDER_MIDDLEWARES"]
    mw = "scrapy.downloadermiddlewares."
    assert downloader[mw + "stats.DownloaderStats"] is None
    assert downloader[mw + "httpauth.HttpAuthMiddleware"] is None
    assert downloader[mw + "httpproxy.HttpProxyMiddleware"] is None  # tests/harvester/test_proxy_env.py
    for kept in (
        "defaultheaders.DefaultHeadersMiddleware",
        "useragent.UserAgentMiddleware",
        "httpcompression.HttpCompressionMiddleware",
        "downloadtimeout.DownloadTimeoutMiddleware",
    ):
        assert mw + kept not in downloader
    # Cookies: Scrapy's middleware, as a subclass that skips only the cases with nothing to do, at Scrapy's
    # own order (tests/harvester/test_leanscrapy.py holds the two equal; issue 14).
    from scrapy.downloadermiddlewares.cookies import CookiesMiddleware
    from scrapy.settings.default_settings import DOWNLOADER_MIDDLEWARES_BASE
    from scrapy.utils.misc import load_object

    ours = [name for name, order in downloader.items() if order is not None and "Cookies" in name]
    assert len(ours) == 1 and issubclass(load_object(ours[0]), CookiesMiddleware)
    assert downloader[ours[0]] == DOWNLOADER_MIDDLEWARES_BASE[mw + "cookies.CookiesMiddleware"]
    assert all(v is None for v in spider.values())
    assert "scrapy.spidermiddlewares.start.StartSpiderMiddleware" not in spider
