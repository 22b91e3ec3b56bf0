"""QA statistics (orchestrator.harvest.qa.stats) on a real harvest: the figures match the harvester's own
reports and HarvestInfo, survive the spool being cleaned (read from the metadata WARC), and sum per run
and per year, with comparisons and CSV."""

from __future__ import annotations

import csv
import io
import shutil
from datetime import UTC, datetime

import pytest
from django.core.cache import cache

from orchestrator.harvest.jobs import jobfiles
from orchestrator.harvest.models import HarvestInfo, Job, JobStats
from orchestrator.harvest.qa import stats
from tests.orchestrator import factories
from tests.orchestrator.crawled_job import DOMAINS, Crawl, crawled, make_job, previous_harvester, record

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()  # summed figures are cached by scope (e.g. the year), across test databases


def _report(name: str) -> str:
    return (crawled().job_dir / "reports" / name).read_text()


def test_intake_records_the_figures_the_job_result_sends_as_data(tmp_path) -> None:
    # the text reports are gone (files moved), the figures come with the JobResult and agree with those reports
    result = {
        **crawled().result,
        "files": [{**f, "path": str(tmp_path / "gone" / f["name"])} for f in crawled().result["files"]],
    }
    assert result["figures"]["mime_types"] and result["figures"]["status_codes"]
    job = record(make_job(), Crawl(tmp_path, result, crawled().ports))
    row = JobStats.objects.get(job=job)
    assert row.reports_error == "" and row.reports_source == "JobResult"
    assert row.mime_types == stats.parse_mimetype_report(_report("mimetype-report.txt"))
    assert row.status_codes == stats.parse_responsecode_report(_report("responsecode-report.txt"))
    assert job.figures == result["figures"]


def test_intake_records_job_stats_from_the_reports_and_harvest_info() -> None:
    job = record(make_job(), previous_harvester())
    row = JobStats.objects.get(job=job)
    assert row.reports_error == "" and "spool" in row.reports_source
    assert row.mime_types == stats.parse_mimetype_report(_report("mimetype-report.txt"))
    assert row.status_codes == stats.parse_responsecode_report(_report("responsecode-report.txt"))
    assert "text/html" in row.mime_types and row.status_codes.get("200", 0) > 0
    assert row.status_codes.get("404", 0) >= 1  # /missing.html
    infos = list(HarvestInfo.objects.filter(job=job))
    assert row.domains == len(DOMAINS) == len(infos)
    assert row.objects_count == sum(i.objects_count for i in infos) > 0
    assert row.bytes_count == sum(i.bytes_count for i in infos)
    assert row.tlds.keys() == {"fr", "dk"}
    assert sum(row.size_buckets.values()) == 2
    assert row.stop_reasons.get("OBJECT_LIMIT", 0) + row.stop_reasons.get("CONFIG_OBJECT_LIMIT", 0) >= 1
    assert row.kind == "selective" and row.year == job.ended_at.year
    assert row.seeds == sum(len(d["seeds"]) for d in job.spec["domains"]) > 0


def test_reports_are_read_from_the_metadata_warc_once_the_spool_is_cleaned(tmp_path) -> None:
    job = make_job()
    # a copy of the crawl's spool whose reports/ and logs/ are gone: only the metadata WARC is left
    spool = tmp_path / "spool"
    shutil.copytree(crawled().job_dir, spool)
    shutil.rmtree(spool / "reports")
    shutil.rmtree(spool / "logs")
    result = {
        **previous_harvester().result,
        "files": [{**f, "path": str(spool / "warcs" / f["name"])} for f in crawled().result["files"]],
    }
    job = record(job, Crawl(spool, result, crawled().ports))
    row = JobStats.objects.get(job=job)
    assert row.reports_error == ""
    assert "metadata WARC" in row.reports_source
    assert row.mime_types == stats.parse_mimetype_report(_report("mimetype-report.txt"))
    source, lines = jobfiles.tail(job, 5)
    assert source.kind == "metadata WARC"
    assert lines == (crawled().job_dir / "logs" / "crawl.log").read_text().splitlines()[-5:]


def test_missing_reports_are_recorded_not_fatal(tmp_path) -> None:
    job = make_job()
    result = {
        **previous_harvester().result,
        "files": [{**f, "path": str(tmp_path / "gone" / f["name"])} for f in crawled().result["files"]],
    }
    job = record(job, Crawl(tmp_path, result, crawled().ports))
    assert job.status == "DONE"
    row = JobStats.objects.get(job=job)
    assert row.mime_types == {} and "mimetype-report.txt of job" in row.reports_error
    assert row.domains == 2  # HarvestInfo figures are still there


def test_run_and_year_figures_sum_jobs_and_compare() -> None:
    selective = factories.selective_definition("news")
    broad = factories.snapshot_definition("broad 2026")
    first = record(make_job(selective))
    second = record(make_job(selective))
    Job.objects.filter(pk=second.pk).update(harvest_run=2)
    JobStats.objects.filter(job=second).update(harvest_run=2)
    record(make_job(broad))
    one = JobStats.objects.get(job=first)

    run1 = stats.run_figures(selective, 1)
    assert run1.jobs == 1 and run1.objects == one.objects_count
    assert stats.previous_run(selective, 2) == 1
    year = datetime.now(UTC).year
    fig = stats.year_figures(year)
    assert fig.jobs == 3 and fig.objects == 3 * one.objects_count
    assert fig.mime_types["text/html"][0] == 3 * one.mime_types["text/html"][0]
    assert fig.selective_vs_broad["selective"][1] == 2 * one.objects_count
    assert fig.selective_vs_broad["broad (snapshot)"][1] == one.objects_count
    assert fig.selective_vs_broad["selective"][3] == 2 * one.seeds and fig.seeds == 3 * one.seeds
    # top domains are exact sums over HarvestInfo
    top = dict((d, b) for d, _, b in fig.top_domains)
    for name in DOMAINS:
        assert top[name] == sum(HarvestInfo.objects.filter(domain__name=name).values_list("bytes_count", flat=True))

    rows = {(r.section, r.key, r.measure): r for r in stats.rows(run1, stats.run_figures(selective, 2))}
    assert rows[("totals", "objects", "count")].values == (one.objects_count, one.objects_count)
    assert rows[("totals", "objects", "count")].change == "0%"
    table = list(csv.reader(io.StringIO(stats.to_csv(run1, fig))))
    assert table[0] == ["section", "key", "measure", "news run 1", str(year), "change"]
    by_key = {(r[0], r[1], r[2]): r for r in table[1:]}
    assert by_key[("totals", "jobs", "count")][3:] == ["1", "3", "+200.0%"]


def test_helpers() -> None:
    assert stats.tld_of("www.Example.FR.") == "fr"
    assert stats.tld_of("127.0.0.1") == "(IP address)"
    assert stats.tld_of("localhost") == "(no TLD)"
    assert [stats.size_bucket(n) for n in (0, 1, 9, 10, 9999, 10_000)] == [
        "0",
        "1–9",
        "1–9",
        "10–99",
        "1,000–9,999",
        "10,000+",
    ]
    assert stats.mime_category("image/png") == "image" and stats.mime_category("no-type") == "other"
    with pytest.raises(ValueError, match="line 2"):
        stats.parse_mimetype_report("[#urls] [#bytes] [mime-types]\nthree 4 text/html\n")
    assert stats.parse_responsecode_report("[#urls] [rescode]\n3 200\n1 404\n") == {"200": 3, "404": 1}
    changes = {
        r.key: r.change
        for r in stats.rows(stats.Figures("a", objects=0, bytes=4), stats.Figures("b", objects=5, bytes=0))
        if r.section == "totals"
    }
    assert (changes["objects"], changes["bytes"], changes["jobs"]) == ("new", "gone", "0%")


def test_top_domains_are_kept_per_job_and_summed(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = record(make_job()), record(make_job())
    infos = {
        name: (
            sum(HarvestInfo.objects.filter(domain__name=name).values_list("objects_count", flat=True)),
            sum(HarvestInfo.objects.filter(domain__name=name).values_list("bytes_count", flat=True)),
        )
        for name in DOMAINS
    }
    fig = stats.year_figures(first.ended_at.year)
    assert {d: (o, b) for d, o, b in fig.top_domains} == infos and fig.top_domains_note == ""
    # keep one domain per measure: the largest by bytes and the largest by objects stay, the note says so
    monkeypatch.setattr(stats, "TOP_KEPT", 1)
    monkeypatch.setattr(stats, "FIGURES_STALE_S", 0)
    for job in (first, second):
        stats.record_job_stats(job)
    row = JobStats.objects.get(job=first)
    by_bytes = max(infos, key=lambda d: infos[d][1])
    by_objects = max(infos, key=lambda d: infos[d][0])
    assert {d for d, _, _ in row.top_domains} == {by_bytes, by_objects}
    if by_bytes == by_objects:
        assert "2 of these jobs had more than 1 domains" in stats.year_figures(first.ended_at.year).top_domains_note


def test_cached_sums_say_when_they_miss_newer_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    first = record(make_job())
    year = first.ended_at.year
    before = stats.year_figures(year)
    assert (before.jobs, before.pending_jobs) == (1, 0)
    record(make_job())
    stale = stats.year_figures(year)  # younger than FIGURES_STALE_S: served, and says what it misses
    assert (stale.jobs, stale.pending_jobs) == (1, 1)
    monkeypatch.setattr(stats, "FIGURES_STALE_S", 0)
    fresh = stats.year_figures(year)
    assert (fresh.jobs, fresh.pending_jobs, fresh.objects) == (2, 0, 2 * before.objects)
    assert stats.year_figures(year).computed_at == fresh.computed_at  # unchanged rows: served from the cache
