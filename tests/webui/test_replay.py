"""Replay through the web UI: real pywb (deploy/replay_server.py) over what the real indexer chain stored and
indexed from two real crawls of the bundled test site (the second deduplicated against the first, so it holds
revisits), reached only through the web UI's ``/replay/…`` proxy after its login and role check."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from indexer.cdx import iter_cdx_lines
from indexer.replaylayout import ReplayLayout
from orchestrator.harvest.archive import replay
from orchestrator.harvest.chain import merging
from orchestrator.harvest.chain import steps as chain
from tests.indexer.conftest import TwoJobs
from tests.orchestrator import factories
from tests.orchestrator.chainhelp import harvest
from tests.orchestrator.conftest import storage_env  # noqa: F401 - a fixture
from tests.replayhelp import REPO

pytestmark = pytest.mark.django_db


@pytest.fixture
def crawls(replay_crawls: TwoJobs) -> TwoJobs:
    return replay_crawls


def live(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def captures(warcs: list[Path], job_id: int) -> list[list[str]]:
    """The CDX fields of ``warcs`` as stored for job ``job_id`` (chainhelp names files ``<job>-…``)."""
    return [
        line.decode().split(" ") for w in warcs for line in iter_cdx_lines(w, f"{job_id}-{w.name.split('-', 1)[1]}")
    ]


def test_replay_through_the_web_ui_follows_the_chain(crawls, storage_env, replay_service, viewer):  # noqa: F811
    spool = storage_env / "spool"
    news = factories.selective_definition("news")
    job1 = harvest(crawls.job1, spool, news)
    assert not chain.run_pending().failed
    home = crawls.site_urls[0]
    ts1 = next(f[1] for f in captures(crawls.job1, job1.pk) if f[2] == home)

    # The page as archived, through the proxy: the bytes the site served.
    response = viewer.get(replay.replay_url(home, ts1, mode="id_"))
    assert response.status_code == 200
    assert body(response) == live(home)
    # Replayed (rewritten) with pywb's links pointing back through the web UI's /replay/.
    page = body(viewer.get(replay.replay_url(home, ts1, mode="mp_"))).decode()
    assert "/replay/all/" in page
    # pywb's framed view is allowed in the web UI's own frames.
    framed = viewer.get(replay.replay_url(home, ts1))
    assert framed.status_code == 200 and framed["X-Frame-Options"] == "SAMEORIGIN"
    # Archived scripts run on the web UI's origin: replayed documents may reach /replay/ only (the browser test,
    # test_replay_browser.py, shows what that stops), and windows they open on web UI pages are cut off.
    for response in (framed, viewer.get(replay.replay_url(home, ts1, mode="id_"))):
        assert response["Content-Security-Policy"].startswith("default-src http://testserver/replay/ ")
        assert "form-action http://testserver/replay/;" in response["Content-Security-Policy"]
        assert response["Cross-Origin-Opener-Policy"] == "unsafe-none"
    assert viewer.get("/jobs/")["Cross-Origin-Opener-Policy"] == "same-origin"
    assert viewer.get("/jobs/")["X-Frame-Options"] == "DENY"
    # The latest capture, without a timestamp (the links from seeds): pywb redirects to it or serves it.
    assert viewer.get(replay.replay_url(home)).status_code in (200, 302)

    # A second job is indexed by the chain while pywb runs: its revisit replays job 1's payload at once.
    job2 = harvest(crawls.job2, spool, news)
    assert not chain.run_pending().failed
    revisit = next(
        f for f in captures(crawls.job2, job2.pk) if f[3] == "warc/revisit" and f[4] == "200" and f[2].endswith(".html")
    )
    response = viewer.get(replay.replay_url(revisit[2], revisit[1], mode="id_"))
    assert response.status_code == 200 and body(response) == live(revisit[2])
    # pywb's own capture list knows both jobs' captures of the page, before any merge.
    timestamps = body(viewer.get(f"/replay/all/cdx?url={home}&output=json")).decode()
    assert ts1 in timestamps and next(f[1] for f in captures(crawls.job2, job2.pk) if f[2] == home) in timestamps

    # After the merges the master index serves them and the per-WARC links are gone.
    merging.merge()
    merging.bigmerge()
    lay = ReplayLayout(storage_env / "index")
    assert sorted(p.name for p in lay.indexes("all").iterdir()) == ["master.cdx"]
    assert list(lay.warcs.iterdir()) == []
    response = viewer.get(replay.replay_url(revisit[2], revisit[1], mode="id_"))
    assert response.status_code == 200 and body(response) == live(revisit[2])
    assert body(viewer.get(replay.replay_url(home, ts1, mode="id_"))) == live(home)

    # Range requests (media seeking) pass through: pywb answers 206 with the part asked for.
    response = viewer.get(replay.replay_url(home, ts1, mode="id_"), HTTP_RANGE="bytes=0-9")
    assert response.status_code == 206 and body(response) == live(home)[:10]

    # Never archived: pywb's "not found", passed on.
    assert viewer.get(replay.replay_url("http://never-crawled.example/", ts1, mode="id_")).status_code == 404


def _warc(path: Path, records) -> Path:  # type: ignore[no-untyped-def]
    from warcio.warcwriter import WARCWriter

    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for record in records(writer):
            writer.write_record(record)
    return path


def test_a_server_not_modified_revisit_replays_as_its_original(tmp_path, storage_env, replay_service, viewer):  # noqa: F811
    """A re-harvest's conditional GET answered 304 is stored as a server-not-modified revisit (its 304 headers, as
    exchanged). pywb answered it with those headers, an empty 304: every such image of the re-harvest's pages was
    broken in replay. It replays as the capture it stands for."""
    import base64
    import hashlib
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders

    url, png = "http://example.fr/img/logo.png", b"\x89PNG\r\n\x1a\n" + b"logo" * 20
    digest = "sha1:" + base64.b32encode(hashlib.sha1(png).digest()).decode()

    def first(writer):  # type: ignore[no-untyped-def]
        headers = StatusAndHeaders(
            "200 OK", [("Content-Type", "image/png"), ("Content-Length", str(len(png)))], protocol="HTTP/1.1"
        )
        yield writer.create_warc_record(
            url, "response", payload=BytesIO(png), http_headers=headers,
            warc_headers_dict={"WARC-Date": "2026-11-28T01:52:56Z"},
        )  # fmt: skip

    def second(writer):  # type: ignore[no-untyped-def]
        headers = StatusAndHeaders("304 Not Modified", [("Server", "SimpleHTTP/0.6")], protocol="HTTP/1.0")
        record = writer.create_revisit_record(url, digest, url, "2026-11-28T01:52:56Z", http_headers=headers)
        record.rec_headers.replace_header("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/server-not-modified")
        record.rec_headers.replace_header("WARC-Date", "2026-11-28T01:56:34Z")
        yield record

    spool = storage_env / "spool"
    news = factories.selective_definition("news")
    harvest([_warc(tmp_path / "x-1-first.warc.gz", first)], spool, news)
    job2 = harvest([_warc(tmp_path / "x-2-second.warc.gz", second)], spool, news)
    assert not chain.run_pending().failed
    (revisit,) = captures([tmp_path / "x-2-second.warc.gz"], job2.pk)
    assert revisit[3:5] == ["warc/revisit", "304"]
    response = viewer.get(replay.replay_url(url, revisit[1], mode="id_"))
    assert response.status_code == 200 and body(response) == png
    assert response["Content-Type"] == "image/png"


def test_a_definition_s_collection_shows_only_its_captures(crawls, storage_env, replay_service, viewer):  # noqa: F811
    spool = storage_env / "spool"
    news, blogs = factories.selective_definition("news"), factories.selective_definition("blogs")
    job_news = harvest(crawls.job1, spool, news)
    job_blogs = harvest(crawls.job1, spool, blogs)
    assert not chain.run_pending().failed
    home = crawls.site_urls[0]

    def files(collection: str) -> set[str]:
        response = viewer.get(f"/replay/{collection}/cdx?url={home}&output=json&fl=filename")
        return {line.split('"')[3] for line in body(response).decode().splitlines() if line}

    assert files("all") and {f.split("-")[0] for f in files("all")} == {str(job_news.pk), str(job_blogs.pk)}
    assert {f.split("-")[0] for f in files(replay.collection_of(news.pk))} == {str(job_news.pk)}
    assert {f.split("-")[0] for f in files(replay.collection_of(blogs.pk))} == {str(job_blogs.pk)}
    # The definition's page leads to its collection (pywb's page to find an address in it).
    page = viewer.get(f"/definitions/{news.pk}/").content.decode()
    link = re.search(r'<a href="([^"]+)" id="replay-collection">', page).group(1)
    assert link == f"/replay/harvest-{news.pk}/" and viewer.get(link).status_code == 200
    # A third definition's job deduplicated against the first crawl: its revisits replay with the payload
    # another definition stored, in its own collection too.
    shop = factories.selective_definition("shop")
    job_shop = harvest(crawls.job2, spool, shop)
    assert not chain.run_pending().failed
    revisit = next(
        f
        for f in captures(crawls.job2, job_shop.pk)
        if f[3] == "warc/revisit" and f[4] == "200" and f[2].endswith(".html")
    )
    response = viewer.get(replay.replay_url(revisit[2], revisit[1], replay.collection_of(shop.pk), "id_"))
    assert response.status_code == 200 and body(response) == live(revisit[2])
    assert {f.split("-")[0] for f in files(replay.collection_of(shop.pk))} == {str(job_shop.pk)}
    merging.merge()
    merging.bigmerge()  # now from the definitions' sub-indexes
    assert {f.split("-")[0] for f in files(replay.collection_of(news.pk))} == {str(job_news.pk)}
    assert {f.split("-")[0] for f in files(replay.collection_of(blogs.pk))} == {str(job_blogs.pk)}


def test_no_archived_byte_without_login_and_role(crawls, storage_env, replay_service, viewer):  # noqa: F811
    job = harvest(crawls.job1, storage_env / "spool", factories.selective_definition("news"))
    assert not chain.run_pending().failed
    home = crawls.site_urls[0]
    ts = next(f[1] for f in captures(crawls.job1, job.pk) if f[2] == home)
    url = replay.replay_url(home, ts, mode="id_")
    archived = live(home)
    assert body(viewer.get(url)) == archived  # the capture is there

    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")
    roleless = Client()
    roleless.force_login(User.objects.create_user("nobody"))
    refused = roleless.get(url)
    assert refused.status_code == 403
    for response in (anonymous, refused):
        assert archived[:200] not in body(response)
    # Nor by another door: pywb answers only under /replay/ and only on loopback (its address in the settings).
    assert replay_service.url.startswith("http://127.0.0.1:")


def test_docker_compose_keeps_pywb_internal():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    assert "replay" in services
    assert "ports" not in services["replay"], "the replay service must not be published: the web UI guards it"
    command = " ".join(services["replay"]["command"])
    assert "--bind 0.0.0.0:8090" in command  # on the compose network only
    assert services["web"]["environment"]["NETHARVEST_REPLAY_URL"] == "http://replay:8090"
    # the only published port is the web UI's
    assert [name for name, s in services.items() if s.get("ports")] == ["web"]
    # An empty volume: replay waits for migrate (whose image makes /data the netharvest user's), and its own image
    # gives /data the same owner, so pywb never starts on a root-owned /data it cannot write (a crash loop).
    assert services["replay"]["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}
    replay_image = (REPO / "deploy" / "Dockerfile.replay").read_text()
    assert "mkdir -p /data && chown netharvest /data" in replay_image and "USER netharvest" in replay_image


def test_replay_down_is_a_clear_page(settings, viewer):
    from tests.conftest import free_port

    settings.NETHARVEST_REPLAY_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    response = viewer.get("/replay/all/http://example.com/")
    assert response.status_code == 502
    assert "The replay service does not answer" in response.content.decode()


def test_a_new_definition_s_collection_opens_at_once(
    storage_env,  # noqa: F811
    replay_service,
    clients,
    django_capture_on_commit_callbacks,
):
    """The "this harvest's collection" link of a definition made a moment ago, before any refresh or WARC, opens
    pywb's page of that (empty) collection, not a 404; and an address in it is "not found", not "no such
    collection"."""
    from django.urls import reverse

    from orchestrator.harvest.models import HarvestChannel, HarvestDefinition

    replay.refresh()  # the layout as the stack starts it, before the definition exists
    curator, viewer = clients["curator"], clients["viewer"]
    with django_capture_on_commit_callbacks(execute=True):
        created = curator.post(
            reverse("webui:definition-create", args=["selective"]),
            {"name": "elections", "channel": HarvestChannel.objects.get(name="focused").pk},
        )
    assert created.status_code == 302
    hd = HarvestDefinition.objects.get(name="elections")
    page = viewer.get(f"/definitions/{hd.pk}/").content.decode()
    link = re.search(r'<a href="([^"]+)" id="replay-collection">', page).group(1)
    assert link == f"/replay/harvest-{hd.pk}/"
    response = viewer.get(link)
    assert response.status_code == 200, body(response)[:300]
    assert (
        viewer.get(
            replay.replay_url("http://never-crawled.example/", collection=link.split("/")[2]),
        ).status_code
        == 404
    )
