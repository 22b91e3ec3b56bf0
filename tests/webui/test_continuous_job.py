"""A continuous job's page, live (issue 12): figures from the heartbeats as intake records them, the fetch
rate chart that grows with the progress series, the WARCs closed and indexed while the job runs, and a
URI's history read from the job's crawl.log annotations. Real PostgreSQL rows, real files in the spool."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db.models import F
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from harvester.crawllog import format_line
from harvester.revisit.policy import RevisitPolicy, RevisitSettings, Visit
from orchestrator.harvest.chain import steps as chain
from orchestrator.harvest.jobs import intake, progresslog
from orchestrator.harvest.models import (
    ArchiveFile,
    HarvestChannel,
    HarvestDefinition,
    Job,
    JobStatus,
    ProgressSample,
)
from orchestrator.harvest.models.archive import IndexState
from tests.indexer.conftest import TwoJobs
from tests.indexer.warcs import crawl_two_jobs
from tests.orchestrator import factories
from tests.orchestrator.chainhelp import harvest
from tests.orchestrator.conftest import storage_env  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

NEWS = "http://news.example.fr/"


def continuous_job() -> Job:
    definition = HarvestDefinition.objects.create(
        name="news, continuously", kind="continuous", channel=HarvestChannel.objects.get(name="continuous")
    )
    job = factories.job(definition, status=JobStatus.SUBMITTED)  # its JobSpec is not what these pages read
    assert intake.record_started(job.pk, "continuous@crawler1")
    return job


def heartbeat(job: Job, **continuous: object) -> dict:
    """A Progress dict as the harvester sends it, with the continuous section of the contract."""
    section = {
        "budget_per_s": 5.0,
        "fetch_rate": 4.2,
        "visits": 200,
        "changed": 50,
        "unchanged": 150,  # every visit finding no change, of which 30 + 10 learnt it from the headers
        "not_modified": 30,
        "header_skipped": 10,
        "errors": 10,
        "validator_misses": 2,
        "warcs_closed": 2,
        "queues": {"ready": 1, "snoozed": 3, "busy": 1, "empty": 0},
        "hosts": [{"host": "news.example.fr", "state": "snoozed", "uris": 40, "next_at": "2026-11-24T10:05:00Z"}],
        "due_next": [{"uri": NEWS, "at": "2026-11-24T10:01:30Z", "wait_s": 5400, "visits": 7, "versions": 3}],
        "freshness": 0.875,
    }
    section.update(continuous)
    return {
        "job_id": job.pk,
        "at": timezone.now().isoformat(),
        "uris_done": section["visits"],
        "uri_rate": 4.0,
        "continuous": section,
    }


def test_job_page_shows_the_continuous_figures_live(viewer: Client):
    job = continuous_job()
    now = timezone.now()
    for minutes, rate in ((30, 1.0), (20, 2.5), (10, 3.5)):  # earlier heartbeats: the series the chart draws
        progresslog.record(job.pk, heartbeat(job, fetch_rate=rate), now - timedelta(minutes=minutes))
    assert intake.record_progress(heartbeat(job))
    for name, state in (("news-1.warc.gz", IndexState.CLEANED), ("news-2.warc.gz", IndexState.HARVESTED)):
        ArchiveFile.objects.create(name=name, job=job, harvest=job.harvest, size=1000, index_state=state)

    page = viewer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    section = page[page.index('<div id="continuous"') :]
    assert "4.20 fetches/s over the last minute, budget 5.00/s (84.0% used)" in section
    assert "2 of 40 visits judged unchanged by their headers" in section
    assert "87.5%" in section  # freshness
    assert "ready 1 · snoozed 3 · busy 1 · empty 0" in section
    assert "2 closed by the crawl; 2 handed to the archive, 1 indexed" in section
    assert "news-1.warc.gz" in section and "news-2.warc.gz" in section
    assert re.search(r"changed \(new version\)</td><td class=\"num\">50</td><td class=\"num\">25.0%", section)
    # The outcomes are parts of the visits: they add up to 100 %, the failed fetches are told apart.
    shares = [float(x) for x in re.findall(r'<td class="num">[\d,]+</td><td class="num">([\d.]+)%</td>', section)]
    assert shares == [25.0, 55.0, 15.0, 5.0] and sum(shares) == 100.0
    assert "And 10 failed fetches" in section
    assert "news.example.fr</td><td>snoozed</td>" in section
    assert f'href="/jobs/{job.pk}/uri/?uri={quote(NEWS, safe="/")}"' in section  # the URI's history
    assert "1 h 30 min" in section  # the due URI's wait
    chart = section[section.index("<svg") : section.index("</svg>")]
    assert chart.count("<polyline") == 2  # fetches/s and URIs/s, four samples each
    assert len(re.findall(r"<circle[^>]*><title>fetches/s ", chart)) == 4
    assert "budget (fetches/s): 5" in chart and "stroke-dasharray" in chart

    # The refresh: the section alone, with the next heartbeat's figures and one more point on the chart.
    # Intake keeps a sample every SAMPLE_EVERY_S: let that time pass (the samples so far move back).
    ProgressSample.objects.filter(job=job).update(at=F("at") - timedelta(seconds=progresslog.SAMPLE_EVERY_S))
    assert intake.record_progress(heartbeat(job, fetch_rate=4.9, visits=260, changed=70, freshness=0.9))
    live = viewer.get(reverse("jobs:continuous", args=[job.pk]) + "?window=1h").content.decode()
    assert live.lstrip().startswith('<div id="continuous"')
    assert "4.90 fetches/s" in live and "90.0%" in live and ">260<" in live
    assert len(re.findall(r"<circle[^>]*><title>fetches/s ", live)) == 5
    assert "<html" not in live  # a fragment for the page to swap in, not a page
    # A heartbeat too soon to be kept as a sample still ends the chart: it draws what the figures above say.
    assert intake.record_progress(heartbeat(job, fetch_rate=2.2))
    assert ProgressSample.objects.filter(job=job).count() == 5
    live = viewer.get(reverse("jobs:continuous", args=[job.pk])).content.decode()
    points = re.findall(r"<circle[^>]*><title>fetches/s [^<]*: ([\d.]+)</title>", live)
    assert len(points) == 6 and points[-1] == "2.2" and "2.20 fetches/s" in live


def test_a_job_without_figures_yet_says_so_and_other_jobs_have_no_section(viewer: Client):
    job = continuous_job()
    page = viewer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    assert "No adaptive-revisit figures received yet" in page
    other = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    assert 'id="continuous"' not in viewer.get(reverse("jobs:job", args=[other.pk])).content.decode()
    assert viewer.get(reverse("jobs:continuous", args=[other.pk])).status_code == 404


def annotated_visits(uri: str, start) -> list[str]:
    """crawl.log lines of three visits of ``uri`` as the crawl writes them: annotated by the real revisit policy
    (Heritrix AR: 12 h for a new text page, × 1.5 when unchanged, ÷ 1.5 when changed), ``unchanged`` added by
    the change evaluator; one visit of another URI in between."""
    policy = RevisitPolicy(RevisitSettings.heritrix(), None)
    policy.add(uri, 0.0)
    lines = []
    for hours, digest in ((0, "sha1:AAAA"), (12, "sha1:AAAA"), (30, "sha1:BBBB")):
        at = start + timedelta(hours=hours)
        before = policy.state_of(uri).get("versions", 0) if hours else 0
        policy.visited(
            uri,
            Visit(
                status=200,
                content_type="text/html",
                size=1234,
                duration_s=0.04,
                etag=None,
                last_modified=None,
                digest=digest,
            ),
            hours * 3600.0,
        )
        unchanged = policy.state_of(uri)["versions"] == before
        lines.append(
            format_line(
                status=200,
                uri=uri,
                size=1234,
                mime="text/html",
                fetch_began=at,
                duration_ms=40,
                digest=digest,
                logged_at=at,
                annotations=[policy.annotation(uri)] + (["unchanged"] if unchanged else []),
            )
        )
        lines.append(
            format_line(
                status=200,
                uri=uri + "other",
                size=10,
                mime="text/html",
                logged_at=at,
                annotations=["wt:1h0m0s0ms,9vis,9ver"],
            )
        )
    return lines


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoJobs]:
    root = tmp_path_factory.mktemp("continuous-crawls")
    with crawl_two_jobs(root) as (job1, job2, index, urls):
        yield TwoJobs(job1, job2, index, urls)


def test_uri_history_from_the_crawl_log_and_the_index(crawls, storage_env, viewer: Client):  # noqa: F811
    """Two real crawls of the test site, stored and indexed by the real chain as jobs of one continuous
    definition (the second holds revisits); the second job's crawl.log carries the policy's annotations."""
    definition = HarvestDefinition.objects.create(
        name="site, continuously", kind="continuous", channel=HarvestChannel.objects.get(name="continuous")
    )
    job1 = harvest(crawls.job1, storage_env / "spool", definition)
    job2 = harvest(crawls.job2, storage_env / "spool", definition)
    assert not chain.run_pending().failed
    home = crawls.site_urls[0]
    logs = Path(ArchiveFile.objects.filter(job=job2).first().spool_path).parent.parent / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "crawl.log").write_text("".join(annotated_visits(home, timezone.now() - timedelta(hours=40))))

    page = viewer.get(reverse("jobs:uri", args=[job2.pk]), {"uri": home}).content.decode()
    assert "3 line(s) name this URI" in page
    assert re.search(r'id="u-visits">3<', page) and re.search(r'id="u-versions">2<', page)
    assert re.search(r'id="u-wait">12 h<', page)  # 18 h ÷ 1.5 after the change
    table = page[page.index('id="u-table"') : page.index("</table>", page.index('id="u-table"'))]
    assert table.count("<tr>") == 4 and table.count("new version") == 2 and table.count(">unchanged<") == 1
    assert "18 h" in table and "9vis" not in table  # the other URI's lines are not this one's
    chart = page[page.index("<svg") : page.index("</svg>")]
    assert "wait after the visit (hours): 12" in chart and chart.count("<circle") == 3

    captures = page[page.index('id="u-captures"') : page.index("</table>", page.index('id="u-captures"'))]
    rows = re.findall(r'<tr><td><a href="(/replay/harvest-\d+/\d{14}/[^"]+)">', captures)
    assert len(rows) == 2 and all(home in r for r in rows)  # one capture per job, each opening in replay
    assert f'href="/jobs/{job1.pk}/">{job1.pk}<' in captures and f'href="/jobs/{job2.pk}/">{job2.pk}<' in captures
    assert ">revisit<" in captures  # job 2's unchanged home page is a revisit of job 1's payload
    assert "1 distinct payload(s) stored" in page and "1 revisit record(s)" in page

    assert (
        "is not in this job"
        in viewer.get(reverse("jobs:uri", args=[job2.pk]), {"uri": "http://elsewhere.fr/"}).content.decode()
    )
    empty = factories.job(domains=["b.dk"], status=JobStatus.STARTED)
    assert "No crawl.log to read" in viewer.get(reverse("jobs:uri", args=[empty.pk]), {"uri": home}).content.decode()


def test_stopping_a_continuous_job_of_an_active_definition_says_it_comes_back(engineer: Client):
    """Stop asks first; for a continuous job whose definition is active it says the scheduler starts the job again
    from where it is, and that deactivating the definition stops it for good."""
    job = continuous_job()
    HarvestDefinition.objects.filter(pk=job.harvest_id).update(active=True)
    page = engineer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    assert f"return confirm('Stop job {job.pk}? Its definition being active, the scheduler starts it again" in page
