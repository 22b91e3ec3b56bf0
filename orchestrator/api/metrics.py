"""Prometheus metrics of the whole platform at ``/metrics`` on the web process, computed at scrape time.

Everything the orchestrator knows is in its database and the broker, so the web process can answer for the
platform: jobs by status and channel, queue depths per channel, running jobs' and harvesters' fetch and byte
rates (from each job's latest Progress heartbeat), each harvester's heartbeat age, failed jobs awaiting a
decision by harvester and error category, the indexer chain's
backlog per step (with failures and the oldest file waiting), the dedup index's size and the reaper's last
sweep. One query per family, each on an index (status, index_state), so a scrape costs milliseconds with
thousands of jobs (docs/BENCHMARKS.md, "Metrics scrape"); ``netharvest_scrape_seconds`` says what each
family cost. Nothing is kept between scrapes: any web worker answers the same.

Access (:func:`view`): a request that came straight from an address in ``NETHARVEST_METRICS_ALLOW``
(default: this machine, 127.0.0.1 and ::1) needs nothing; any other, and any request a proxy forwarded (it
carries X-Forwarded-For, Forwarded or X-Real-IP), needs an API token of a user with the viewer role.
"""

import ipaddress
import os
import time
from collections import defaultdict
from collections.abc import Iterator

from django.conf import settings
from django.db.models import Count, Min, Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from kombu.exceptions import ChannelError
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from harvester.contracts import EVENTS_QUEUE, harvest_queue
from orchestrator.api import tokens
from orchestrator.celery import app
from orchestrator.harvest.models import ArchiveFile, HarvestChannel, Job, JobStatus, ReaperSight
from orchestrator.harvest.models.archive import IndexState
from webui.access import READ, refusal

#: Chain states that still have a step to do (CLEANED is done): counted by an IN on the state's index, so the
#: millions of finished files are never scanned.
PENDING_STATES = [s.value for s in IndexState if s != IndexState.CLEANED]
#: Other queues than the channels' whose depth is worth watching.
OTHER_QUEUES = (EVENTS_QUEUE, "indexer")
#: Headers a reverse proxy sets: such a request did not come from this machine, whatever its socket says.
PROXY_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


class PlatformCollector(Collector):
    """The families above, each from one query at collect time."""

    def collect(self) -> Iterator[Metric]:
        timings = GaugeMetricFamily(
            "netharvest_scrape_seconds", "Seconds each metric family took to compute.", labels=["family"]
        )
        channels = list(HarvestChannel.objects.values_list("name", flat=True))
        for family, compute in (
            ("jobs", lambda: self.jobs(channels)),
            ("queues", lambda: self.queues(channels)),
            ("running", self.running),
            ("failures", self.failures),
            ("chain", self.chain),
            ("dedup", self.dedup),
            ("reaper", self.reaper),
        ):
            start = time.perf_counter()
            yield from compute()
            timings.add_metric([family], time.perf_counter() - start)
        yield timings

    def jobs(self, channels: list[str]) -> Iterator[Metric]:
        g = GaugeMetricFamily("netharvest_jobs", "Jobs by status and channel.", labels=["status", "channel"])
        counts = {
            (s, c): n
            for s, c, n in Job.objects.values_list("status", "channel__name").annotate(n=Count("id")).order_by()
        }
        for status in JobStatus.values:  # every series present, 0 included, so a rate() never sees a gap
            for channel in sorted(set(channels) | {c for _, c in counts}):
                g.add_metric([status, channel], counts.get((status, channel), 0))
        yield g

    def queues(self, channels: list[str]) -> Iterator[Metric]:
        up = GaugeMetricFamily("netharvest_broker_up", "1 if the broker answered this scrape.")
        depth = GaugeMetricFamily(
            "netharvest_queue_messages",
            "Messages waiting in a queue (harvest.<channel>: jobs not yet taken by a harvester).",
            labels=["queue", "channel"],
        )
        try:
            with app.connection_for_read() as conn:
                conn.ensure_connection(max_retries=1)
                channel = conn.default_channel
                for name, queue in [(c, harvest_queue(c)) for c in channels] + [("", q) for q in OTHER_QUEUES]:
                    try:
                        count = channel.queue_declare(queue=queue, passive=True).message_count
                    except ChannelError:  # never declared, or emptied and gone (Redis): nothing waiting
                        count = 0
                    depth.add_metric([queue, name], count)
            up.add_metric([], 1)
        except Exception:  # the broker is away: say so; the other families still answer
            up.add_metric([], 0)
        yield up
        yield depth

    def running(self) -> Iterator[Metric]:
        """Running jobs' latest Progress, per job and summed per harvester, from one query."""
        job_labels = ["job", "channel", "harvester"]
        uri_rate = GaugeMetricFamily(
            "netharvest_job_uri_rate", "URIs per second of a running job (latest Progress).", labels=job_labels
        )
        byte_rate = GaugeMetricFamily(
            "netharvest_job_byte_rate", "Bytes per second downloaded by a running job.", labels=job_labels
        )
        downloaded = GaugeMetricFamily(
            "netharvest_job_bytes", "Bytes downloaded so far by a running job.", labels=job_labels
        )
        uris = GaugeMetricFamily(
            "netharvest_job_uris", "URIs of a running job by state.", labels=[*job_labels, "state"]
        )
        h_uri = GaugeMetricFamily(
            "netharvest_harvester_uri_rate",
            "URIs per second, summed over a harvester's running jobs.",
            labels=["harvester"],
        )
        h_byte = GaugeMetricFamily(
            "netharvest_harvester_byte_rate",
            "Bytes per second, summed over a harvester's running jobs.",
            labels=["harvester"],
        )
        h_jobs = GaugeMetricFamily("netharvest_harvester_jobs", "Jobs a harvester is running.", labels=["harvester"])
        h_age = GaugeMetricFamily(
            "netharvest_harvester_heartbeat_age_seconds",
            "Seconds since the latest heartbeat of any of a harvester's running jobs.",
            labels=["harvester"],
        )
        now = timezone.now()
        per_harvester: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0, float("inf")])
        rows = Job.objects.filter(status=JobStatus.STARTED).values_list(
            "id",
            "channel__name",
            "harvester",
            "last_heartbeat",
            "progress__uri_rate",
            "progress__kb_rate",
            "progress__bytes",
            "progress__uris_done",
            "progress__uris_queued",
            "progress__uris_failed",
        )
        for job_id, channel, harvester, beat, rate, kb_rate, nbytes, done, queued, failed in rows:
            labels = [str(job_id), channel, harvester or "unknown"]
            rate, bps = float(rate or 0), float(kb_rate or 0) * 1024
            uri_rate.add_metric(labels, rate)
            byte_rate.add_metric(labels, bps)
            downloaded.add_metric(labels, float(nbytes or 0))
            for state, value in (("done", done), ("queued", queued), ("failed", failed)):
                uris.add_metric([*labels, state], float(value or 0))
            h = per_harvester[labels[2]]
            h[0] += rate
            h[1] += bps
            h[2] += 1
            if beat is not None:
                h[3] = min(h[3], (now - beat).total_seconds())
        for harvester, (rate, bps, n, age) in sorted(per_harvester.items()):
            h_uri.add_metric([harvester], rate)
            h_byte.add_metric([harvester], bps)
            h_jobs.add_metric([harvester], n)
            if age != float("inf"):
                h_age.add_metric([harvester], age)
        yield from (uri_rate, byte_rate, downloaded, uris, h_uri, h_byte, h_jobs, h_age)

    def failures(self) -> Iterator[Metric]:
        """FAILED jobs still waiting for a decision (not resubmitted, not rejected), by channel, the harvester
        that ran them and why (``error_category``: crawl-process-died, jobspec-unreadable, reaped, …): what a
        crawl engineer acts on, and which machine keeps failing."""
        g = GaugeMetricFamily(
            "netharvest_failed_jobs",
            "FAILED jobs not yet resubmitted or rejected, by channel, harvester and error category.",
            labels=["channel", "harvester", "category"],
        )
        for channel, harvester, category, n in (
            Job.objects.filter(status=JobStatus.FAILED, rejected_at__isnull=True)
            .values_list("channel__name", "harvester", "error_category")
            .annotate(n=Count("id"))
            .order_by()
        ):
            g.add_metric([channel, harvester or "unknown", category or "unknown"], n)
        yield g

    def chain(self) -> Iterator[Metric]:
        """The indexer chain's files still to process, by the last step done; failures by failed step."""
        files = GaugeMetricFamily(
            "netharvest_chain_files",
            "Archive files not yet through the indexer chain, by the last step done (FAILED: waiting for a retry).",
            labels=["state"],
        )
        working = GaugeMetricFamily(
            "netharvest_chain_files_claimed", "Files a chain worker holds a lease on now.", labels=["state"]
        )
        oldest = GaugeMetricFamily(
            "netharvest_chain_oldest_seconds", "Age of the least recently updated file in a state.", labels=["state"]
        )
        failed = GaugeMetricFamily(
            "netharvest_chain_failed_files", "Files whose chain step failed, by step.", labels=["step"]
        )
        now = timezone.now()
        counts: dict[str, int] = dict.fromkeys(PENDING_STATES, 0)
        claimed: dict[str, int] = dict.fromkeys(PENDING_STATES, 0)
        ages: dict[str, float] = {}
        for state, step, n, held, since in (
            ArchiveFile.objects.filter(index_state__in=PENDING_STATES)
            .values_list("index_state", "failed_step")
            .annotate(n=Count("id"), held=Count("id", filter=Q(claimed_until__gt=now)), since=Min("updated"))
            .order_by()
        ):
            counts[state] += n
            claimed[state] += held
            ages[state] = max(ages.get(state, 0.0), (now - since).total_seconds())
            if state == IndexState.FAILED:
                failed.add_metric([step or "unknown"], n)
        for state in PENDING_STATES:
            files.add_metric([state], counts[state])
            working.add_metric([state], claimed[state])
            if state in ages:
                oldest.add_metric([state], ages[state])
        yield from (files, working, oldest, failed)

    def dedup(self) -> Iterator[Metric]:
        size = GaugeMetricFamily(
            "netharvest_dedup_index_bytes",
            "Size of the dedup index on disk (with its WAL); "
            "with the dedup service, its store's table files (absent while it does not answer).",
        )
        if settings.NETHARVEST_DEDUP_URL:
            from indexer.dedupclient import DedupClient, DedupServiceError

            client = DedupClient(settings.NETHARVEST_DEDUP_URL, read_timeout_s=1.0)
            try:
                size.add_metric([], int(client.health().get("sst_bytes", 0)))
            except DedupServiceError:
                pass
            finally:
                client.close()
            yield size
            return
        path = settings.NETHARVEST_DEDUP_INDEX
        total = 0
        for candidate in (path, path.with_name(path.name + "-wal")):
            try:
                total += os.stat(candidate).st_size
            except OSError:
                pass
        size.add_metric([], total)
        yield size

    def reaper(self) -> Iterator[Metric]:
        g = GaugeMetricFamily(
            "netharvest_reaper_last_sweep_age_seconds",
            "Seconds since the reaper's last sweep "
            "(beat and the events worker are alive while this stays below a minute).",
        )
        last = ReaperSight.objects.values_list("last_sweep_at", flat=True).first()
        if last is not None:
            g.add_metric([], (timezone.now() - last).total_seconds())
        yield g


registry = CollectorRegistry(auto_describe=False)
registry.register(PlatformCollector())


def _direct_from_allowed(request: HttpRequest) -> bool:
    if any(request.META.get(h) for h in PROXY_HEADERS):
        return False
    try:
        client = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    for entry in settings.NETHARVEST_METRICS_ALLOW.split(","):
        if entry.strip() and client in ipaddress.ip_network(entry.strip(), strict=False):
            return True
    return False


def _refused(request: HttpRequest) -> HttpResponse | None:
    """None if the request may read the metrics; else the 401/403 answer."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header:
        scheme, _, token = header.partition(" ")
        user = tokens.user_of(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            return _plain("401 an unknown or revoked API token\n", 401)
        why = refusal(user, READ)
        return _plain(f"403 {why}\n", 403) if why else None
    if _direct_from_allowed(request):
        return None
    return _plain(
        "401 /metrics needs an API token (Authorization: Bearer nh_…) from outside NETHARVEST_METRICS_ALLOW\n", 401
    )


def _plain(text: str, status: int) -> HttpResponse:
    response = HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="netharvest"'
    return response


@require_GET
def view(request: HttpRequest) -> HttpResponse:
    refused = _refused(request)
    if refused is not None:
        return refused
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
