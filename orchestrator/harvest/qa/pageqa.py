"""Automated page QA (issue 13): a job's seeds and pages loaded through replay in headless Chromium, each page's
gaps recorded, and, when the live site answers, the replay scored against the live page.

The BnF's curators browse every selective harvest in the Wayback Machine before accepting it and note what is
missing "with the aim of improving future crawls, either by including additional URLs…" (shared/seeds/001…,
3.4.4 and 4.2). This pass does the browsing: what it records (per page: the archived resources the page asked
for and replay did not have, replay errors, a thumbnail, the visible text, live-vs-replay similarity) is what a
curator needs to accept the job or to patch it (orchestrator/harvest/jobs/patch.py).

When a pass runs:

* automatically once a selective job is DONE and every WARC of it is stored (the chain calls
  :func:`after_stored` when a file is backed up; replay serves a stored WARC at once, before any merge); on by
  default, ``HarvestDefinition.page_qa`` turns it off per definition;
* automatically again for a job once a patch crawl of it is stored (so the curator sees the gap close);
* on request for any job with stored WARCs (web UI, ``netharvest jobs qa JOB``).

A pass is a :class:`~orchestrator.harvest.models.QARun` row, queued, then run by the Celery task
``orchestrator.qa.run`` on its own queue ``qa`` (a worker of bounded concurrency, niced: a browser never takes a
harvester's CPU). Claiming is one conditional UPDATE (QUEUED → RUNNING), so a run is done by one worker; a run
whose worker died (RUNNING for ``NETHARVEST_QA_STALE_S``) can be claimed again and starts over.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from orchestrator.harvest.archive import replay
from orchestrator.harvest.jobs import specs
from orchestrator.harvest.models import (
    ArchiveFile,
    HarvestDefinition,
    Job,
    JobStatus,
    MissingResource,
    QAPage,
    QARun,
    QARunStatus,
)
from orchestrator.harvest.models.archive import IndexState
from orchestrator.harvest.qa import score as qascore
from orchestrator.harvest.qa.browser import BrowserUnavailable, PageLoad, PageLoader, archived_url

log = logging.getLogger(__name__)

RUN_TASK = "orchestrator.qa.run"
QUEUE = "qa"
#: States in which a file's captures are replayable (chain.STORED_STATES; the chain imports this module).
_STORED = (IndexState.BACKED_UP, IndexState.CLEANED)
_LOCAL = ("data:", "about:", "blob:")
_HTML = ("text/html", "application/xhtml+xml")
#: pywb's replay prefixes a replayed page's title with this; the QA page shows the page's own.
PYWB_TITLE_PREFIX = "Archived Page: "
_PAGE_SUFFIXES = ("/", ".html", ".htm", ".php", ".asp", ".aspx", ".jsp", ".shtml")


class QAError(Exception):
    """A pass that cannot be run; the message says why."""


class Interrupted(Exception):
    """The worker is shutting down: the pass stops between pages and is left QUEUED for the next worker."""


#: Set when the qa worker is asked to stop (orchestrator/harvest/qa/tasks.py): a pass of many slow pages must not
#: hold Ctrl-C or a deployment for minutes; it is queued again and starts over on the next worker.
_stopping = threading.Event()


def request_stop() -> None:
    _stopping.set()


# --- which pages -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    url: str
    timestamp: str
    is_seed: bool


def _cdx_lines(job: Job) -> Iterator[list[str]]:
    for cdx in (
        ArchiveFile.objects.filter(job=job, kind="warc", index_state__in=_STORED)
        .exclude(cdx_path="")
        .order_by("name")
        .values_list("cdx_path", flat=True)
    ):
        try:
            with open(cdx, encoding="utf-8", errors="replace") as lines:
                for line in lines:
                    fields = line.rstrip("\n").split(" ")
                    if len(fields) == 11:
                        yield fields
        except FileNotFoundError:
            log.warning("QA of job %s: CDX %s is gone (reindex the file)", job.pk, cdx)


def _is_page(mime: str, status: str, url: str) -> bool:
    """An HTML page worth loading: a 200 HTML capture, or a 200 revisit (its CDX line says ``warc/revisit``,
    not the type) of a URL shaped like a page."""
    if status != "200":
        return False
    if mime in _HTML:
        return True
    return mime == "warc/revisit" and urlsplit(url).path.lower().endswith(_PAGE_SUFFIXES)


def targets(job: Job, limit: int | None = None) -> list[Target]:
    """The job's seeds (each at its first capture, whatever its status: a seed that redirects is replayed
    through the redirect) and then up to ``limit`` more HTML pages, shallowest first."""
    limit = settings.NETHARVEST_QA_MAX_PAGES if limit is None else limit
    seeds = specs.stored(job).seeds
    first: dict[str, str] = {}
    pages: dict[str, str] = {}
    for fields in _cdx_lines(job):
        timestamp, url, mime, status = fields[1], fields[2], fields[3], fields[4]
        if url not in first or timestamp < first[url]:
            first[url] = timestamp
        if _is_page(mime, status, url) and (url not in pages or timestamp < pages[url]):
            pages[url] = timestamp
    out = [Target(seed, first.get(seed, ""), True) for seed in dict.fromkeys(seeds) if seed in first]
    taken = {t.url for t in out}
    rest = sorted((u for u in pages if u not in taken), key=lambda u: (urlsplit(u).path.count("/"), len(u), u))
    out += [Target(u, pages[u], False) for u in rest[: max(0, limit)]]
    return out


# --- scheduling --------------------------------------------------------------------------------------


def enqueue_on_commit(run_id: int) -> None:
    def send() -> None:
        from orchestrator.celery import app

        try:
            app.send_task(RUN_TASK, args=[run_id], queue=QUEUE)
        except Exception as exc:  # the sweep sends runs left QUEUED
            log.warning("QA run %s not queued (the QA sweep will): %s", run_id, exc)

    transaction.on_commit(send)


def stored_files(job: Job) -> tuple[int, int]:
    """(stored WARCs, WARCs in all) of ``job``."""
    files = ArchiveFile.objects.filter(job=job, kind="warc")
    return files.filter(index_state__in=_STORED).count(), files.count()


def request(job: Job, requested_by: str) -> QARun:
    """A pass over ``job`` on a curator's request: any job whose WARCs are stored."""
    stored, total = stored_files(job)
    if not stored:
        raise QAError(f"job {job.pk} has no stored WARC yet ({total} in the indexer chain): nothing to replay")
    with transaction.atomic():
        run = QARun.objects.create(job=job, trigger=QARun.REQUESTED, requested_by=requested_by[:150])
        enqueue_on_commit(run.pk)
    return run


def _create(job: Job, trigger: str, patch_job: Job | None = None) -> QARun | None:
    try:
        with transaction.atomic():
            run = QARun.objects.create(job=job, trigger=trigger, patch_job=patch_job, requested_by="system")
            enqueue_on_commit(run.pk)
            return run
    except IntegrityError:
        return None  # made already (another worker stored the job's last file at the same moment)


def after_stored(job_id: int | None) -> QARun | None:
    """The chain stored a file of job ``job_id``: once every WARC of a DONE job is stored, start its automatic
    pass (a selective definition with page QA on), or, for a patch crawl, a new pass over the job it patched."""
    if not job_id:
        return None
    job = Job.objects.select_related("harvest", "patches").filter(pk=job_id).first()
    if job is None or job.status != JobStatus.DONE:
        return None
    stored, total = stored_files(job)
    if not total or stored < total:
        return None
    if job.patches is not None:
        return _create(job.patches, QARun.AFTER_PATCH, patch_job=job)
    if job.harvest.kind == HarvestDefinition.SELECTIVE and job.harvest.page_qa:
        return _create(job, QARun.AUTO)
    return None


def after_stored_quietly(job_id: int | None) -> None:
    """:func:`after_stored` for the chain: QA never fails a chain step (the QA sweep catches up)."""
    try:
        after_stored(job_id)
    except Exception as exc:
        log.warning("QA not scheduled for job %s (the QA sweep will): %s", job_id, exc)


def sweep(days: int = 3) -> int:
    """Beat's safety net: automatic passes for jobs of the last ``days`` that :func:`after_stored` missed (a
    crash between the chain's step and the scheduling), and runs left QUEUED (a lost message). Returns the
    number of runs queued."""
    since = timezone.now() - timedelta(days=days)
    queued = 0
    recent = Job.objects.filter(status=JobStatus.DONE, ended_at__gte=since)
    patched = set(
        QARun.objects.filter(trigger=QARun.AFTER_PATCH, patch_job__ended_at__gte=since).values_list(
            "patch_job_id", flat=True
        )
    )
    candidates = list(recent.filter(patches__isnull=False).exclude(pk__in=patched).values_list("id", flat=True))
    candidates += (
        recent.filter(patches__isnull=True, harvest__kind=HarvestDefinition.SELECTIVE, harvest__page_qa=True)
        .exclude(qa_runs__trigger=QARun.AUTO)
        .values_list("id", flat=True)
    )
    for job_id in candidates:
        queued += after_stored(job_id) is not None
    for run_id in QARun.objects.filter(
        status=QARunStatus.QUEUED, created__lt=timezone.now() - timedelta(minutes=10)
    ).values_list("id", flat=True):
        enqueue_on_commit(run_id)
        queued += 1
    return queued


# --- the pass ----------------------------------------------------------------------------------------


def claim(run_id: int) -> bool:
    now = timezone.now()
    stale = now - timedelta(seconds=settings.NETHARVEST_QA_STALE_S)
    return (
        QARun.objects.filter(pk=run_id)
        .filter(Q(status=QARunStatus.QUEUED) | Q(status=QARunStatus.RUNNING, started_at__lt=stale))
        .update(status=QARunStatus.RUNNING, started_at=now, pages_done=0, error="")
        == 1
    )


def qa_dir() -> Path:
    return Path(settings.NETHARVEST_QA_DIR)


def _save_thumb(run: QARun, page_id: int, which: str, screenshot: bytes | None) -> str:
    """The thumbnail's path under the QA directory, written under a temporary name and renamed."""
    if not screenshot:
        return ""
    relative = Path(str(run.job_id)) / str(run.pk) / f"{page_id}-{which}.png"
    target = qa_dir() / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(qascore.thumbnail(screenshot))
    os.replace(tmp, target)
    return str(relative)


def replay_base() -> str:
    """Where the QA worker reaches pywb (the same service the web UI proxies to; the pass talks to it
    directly, as a trusted internal client)."""
    return settings.NETHARVEST_REPLAY_URL.rstrip("/")


def missing_of(load: PageLoad, page_url: str) -> list[qascore.Missing]:
    """The archived resources a replayed page asked for and pywb did not have: answered with a 4xx that is not
    an archived answer (no Memento-Datetime; pywb says 404, not in the archive). The page itself is not one of
    its resources."""
    out: dict[tuple[str, str], qascore.Missing] = {}
    for failed in load.failed:
        if failed.archived or failed.status is None or failed.status >= 500:
            continue  # an archived error is faithful; a 5xx is replay failing (listed with the errors), not a gap
        url = archived_url(failed.url)
        if url is None or url == page_url:
            continue
        host = urlsplit(url).netloc.lower() or "(none)"
        out.setdefault((url, failed.resource_type), qascore.Missing(url, host, failed.resource_type, page_url))
    return list(out.values())


def _replay_errors(load: PageLoad, page_url: str) -> list[str]:
    errors = list(load.errors)
    if load.status is not None and load.status >= 400:
        errors.insert(0, f"replay answered {load.status}: the page itself is not (fully) in the archive")
    errors += [f"live-web request blocked (escaped replay): {u}" for u in dict.fromkeys(load.blocked)][:20]
    errors += [f"no answer for {f.url}" for f in load.failed if f.status is None][:20]
    errors += [
        f"replay failed ({f.status}) for {f.url}"
        for f in load.failed
        if f.status is not None and f.status >= 500 and not f.archived
    ][:20]
    return errors


def run_pass(run_id: int) -> QARun | None:
    """Claim and run QA run ``run_id``; None if another worker has it, it is finished, or this worker stops."""
    if _stopping.is_set() or not claim(run_id):
        return None
    run = QARun.objects.select_related("job").get(pk=run_id)
    QAPage.objects.filter(run=run).delete()  # a run taken over from a dead worker starts over
    try:
        _run(run)
    except Interrupted:
        log.info("QA run %s of job %s interrupted by the worker's shutdown: queued again", run.pk, run.job_id)
        QAPage.objects.filter(run=run).delete()
        # Not sent again from here: this worker may still take messages while it stops. The QA sweep re-sends
        # runs left QUEUED.
        QARun.objects.filter(pk=run.pk).update(status=QARunStatus.QUEUED, started_at=None, pages_done=0)
    except BrowserUnavailable as exc:  # one clear line, not a traceback: the fix is on the machine, not the run
        log.error("QA run %s of job %s: %s", run.pk, run.job_id, exc)
        QARun.objects.filter(pk=run.pk).update(
            status=QARunStatus.FAILED, ended_at=timezone.now(), error=str(exc)[:5000]
        )
    except Exception as exc:  # recorded on the run; the curator may run it again
        log.exception("QA run %s of job %s failed", run.pk, run.job_id)
        QARun.objects.filter(pk=run.pk).update(
            status=QARunStatus.FAILED, ended_at=timezone.now(), error=f"{type(exc).__name__}: {exc}"[:5000]
        )
    run.refresh_from_db()
    return run


def _run(run: QARun) -> None:
    job = run.job
    todo = targets(job)
    live = settings.NETHARVEST_QA_LIVE
    QARun.objects.filter(pk=run.pk).update(pages_planned=len(todo), live_compared=live)
    base = replay_base()
    collection = replay.collection_of(job.harvest_id)
    in_replay = base + "/"
    with PageLoader(settings.NETHARVEST_QA_PAGE_TIMEOUT_S, settings.NETHARVEST_QA_CHROMIUM) as browser:
        for done, target in enumerate(todo, 1):
            if _stopping.is_set():
                raise Interrupted
            # pywb's framed view, as a curator sees it (an ``mp_`` page loaded on its own is sent there by pywb's
            # client side); the archived page is judged in its frame.
            address = base + replay.replay_url(target.url, target.timestamp, collection)
            replayed = browser.load(
                address, allowed=lambda u: u.startswith(in_replay) or u.startswith(_LOCAL), inner=lambda u: "mp_/" in u
            )
            seen = browser.load(target.url) if live else None
            _record(run, target, replayed, seen)
            QARun.objects.filter(pk=run.pk).update(pages_done=done)
    missing = MissingResource.objects.filter(run=run).values("url").distinct().count()
    QARun.objects.filter(pk=run.pk).update(status=QARunStatus.DONE, ended_at=timezone.now(), missing_urls=missing)
    log.info("QA run %s of job %s: %d pages, %d missing URLs", run.pk, job.pk, len(todo), missing)


def _record(run: QARun, target: Target, replayed: PageLoad, seen: PageLoad | None) -> QAPage:
    missing = missing_of(replayed, target.url)
    title = replayed.title.removeprefix(PYWB_TITLE_PREFIX)
    page = QAPage.objects.create(
        run=run,
        url=target.url,
        timestamp=target.timestamp,
        is_seed=target.is_seed,
        title=title,
        replay_status=replayed.status,
        replay_error="\n".join(_replay_errors(replayed, target.url)),
        timed_out=replayed.timed_out,
        load_ms=replayed.load_ms,
        requests=replayed.requests,
        missing_count=len({m.url for m in missing}),
        text=replayed.text,
    )
    MissingResource.objects.bulk_create(
        MissingResource(page=page, run=run, url=m.url, host=m.host[:300], resource_type=m.resource_type[:30])
        for m in missing
    )
    fields: dict[str, object] = {"replay_thumb": _save_thumb(run, page.pk, "replay", replayed.screenshot)}
    if seen is not None:
        fields.update(
            live_status=seen.status,
            live_error="\n".join(seen.errors)[:5000],
            live_thumb=_save_thumb(run, page.pk, "live", seen.screenshot),
        )
        if seen.loaded and seen.screenshot and replayed.screenshot:
            fields["screenshot_similarity"] = qascore.screenshot_similarity(seen.screenshot, replayed.screenshot)
        if seen.loaded and replayed.status is not None and not replayed.timed_out:
            fields["text_similarity"] = qascore.text_similarity(seen.text, replayed.text)
    QAPage.objects.filter(pk=page.pk).update(**fields)
    return page
