"""A whole crawl of what link extraction must find (issue 14): a gzipped sitemap named by a sitemap
index named by robots.txt, a page whose ``<title>`` is never closed, a ``url()`` in a CSS comment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crawlhelp import crawl_log, make_spec, run_crawl


def test_gzipped_sitemap_broken_title_and_css_comment(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    job_dir = tmp_path / "job"
    result = run_crawl(job_dir, make_spec([f"{a.url}fidelity/"], job_id=321, settings={"scope": "path"}))
    assert result["status"] == "DONE"
    assert result["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"
    lines = {f[3]: (f[1], f[4]) for f in crawl_log(job_dir)}
    fid = f"{a.url}fidelity/"
    assert lines[f"{a.url}robots.txt"] == ("200", "P")
    assert lines[f"{fid}sitemap-index.xml"] == ("200", "PM")  # robots.txt's Sitemap:
    assert lines[f"{fid}pages.xml.gz"] == ("200", "PMM")  # listed in the index, served as application/x-gzip
    assert lines[f"{fid}only-in-gz-sitemap.html"] == ("200", "PMMM")  # only inside the gzip
    assert lines[f"{fid}broken-title.html"] == ("200", "PMMM")
    # Below the unclosed <title>: the link, the stylesheet and the image, with their letters.
    assert lines[f"{fid}after-title.html"] == ("200", "PMMML")
    assert lines[f"{fid}commented.css"] == ("200", "PMMME")
    assert lines[f"{a.url}img/logo.png"] == ("200", "PMMME")
    assert lines[f"{a.url}img/bg.png"] == ("200", "PMMMEE")  # the stylesheet's live url()
    assert not any("old-background" in url for url in lines)  # the one in a CSS comment
