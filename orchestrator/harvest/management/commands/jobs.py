"""``netharvest jobs list|show|resubmit|reject|stop|pause|resume|add-trap|qa|patch``: the crawl engineer's view
of jobs and control over them, and the curator's page QA (a pass through replay) and patch crawl of what it found
missing."""

from __future__ import annotations

import json
from datetime import datetime

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Sum
from django.utils.dateparse import parse_datetime

from harvester.contracts import Progress
from orchestrator.harvest.jobs import dispatch, patch, specs
from orchestrator.harvest.models import Job, JobStatus
from orchestrator.harvest.qa import pageqa
from orchestrator.harvest.tables import filesize, render


class Command(BaseCommand):
    help = "List, show, resubmit and stop harvest jobs. Times are UTC."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        lister = sub.add_parser("list", help="jobs, newest first")
        lister.add_argument("--status", choices=[s.value for s in JobStatus], help="only jobs in this state")
        lister.add_argument("--harvest", help="only jobs of this harvest definition (name)")
        lister.add_argument("--since", help="only jobs created at or after this UTC time (YYYY-MM-DD[THH:MM])")
        lister.add_argument("--limit", type=int, default=50)
        show = sub.add_parser("show", help="one job: status, times, progress, domains, files, controls")
        show.add_argument("job", type=int)
        show.add_argument("--spec", action="store_true", help="also print the frozen JobSpec (JSON)")
        resubmit = sub.add_parser("resubmit", help="continue a FAILED job as a new job")
        resubmit.add_argument("job", type=int)
        reject = sub.add_parser("reject", help="mark a FAILED job as not to be resubmitted (its failure is final)")
        reject.add_argument("job", type=int)
        stop = sub.add_parser("stop", help="ask a running job to stop (it writes its files and reports)")
        stop.add_argument("job", type=int)
        for name, text in (("pause", "pause a running job"), ("resume", "resume a paused job")):
            sub.add_parser(name, help=text).add_argument("job", type=int)
        trap = sub.add_parser("add-trap", help="add a crawler-trap regex to a running job")
        trap.add_argument("job", type=int)
        trap.add_argument("regex")
        qa = sub.add_parser(
            "qa",
            help="page QA: load the job's seeds and pages through replay in headless Chromium "
            "and record what is missing (queued for the qa worker)",
        )
        qa.add_argument("job", type=int)
        qa.add_argument(
            "--here",
            action="store_true",
            help="run the pass in this process and print its findings, instead of queueing it",
        )
        patcher = sub.add_parser(
            "patch",
            help="a follow-up job fetching exactly the URLs the latest QA pass of the "
            "job found missing (0 hops), submitted at once",
        )
        patcher.add_argument("job", type=int)

    def handle(self, *args: object, action: str, **options: object) -> None:
        handler = getattr(self, f"do_{action.replace('-', '_')}")
        try:
            handler(**options)
        except (dispatch.DispatchError, pageqa.QAError, patch.PatchError) as exc:
            raise CommandError(str(exc)) from None

    def _job(self, job_id: int) -> Job:
        job = Job.objects.select_related("harvest", "channel").filter(pk=job_id).first()
        if job is None:
            raise CommandError(f"no job {job_id} (netharvest jobs list shows the jobs there are)")
        return job

    def do_list(self, status: str | None, harvest: str | None, since: str | None, limit: int, **_: object) -> None:
        jobs = Job.objects.select_related("harvest", "channel").order_by("-id")
        if status:
            jobs = jobs.filter(status=status)
        if harvest:
            jobs = jobs.filter(harvest__name=harvest)
        if since:
            jobs = jobs.filter(created__gte=_parse_time(since))
        rows = [
            (j.pk, j.harvest.name, j.harvest_run, j.channel.name, _status(j), j.domain_count, j.created, j.ended_at)
            for j in jobs[:limit]
        ]
        self.stdout.write(
            render(["id", "harvest", "run", "channel", "status", "domains", "created (UTC)", "ended (UTC)"], rows)
        )

    def do_show(self, job: int, spec: bool, **_: object) -> None:
        j = self._job(job)
        p = j.latest_progress()
        lines = [
            f"job {j.pk}: {j.harvest.name} run {j.harvest_run}, channel {j.channel.name}, {_status(j, p)}",
            f"  created {j.created:%Y-%m-%d %H:%M:%S}  submitted {_t(j.submitted_at)}  started {_t(j.started_at)}  "
            f"ended {_t(j.ended_at)}  (UTC)",
            f"  harvester {j.harvester or '-'}  last heartbeat {_t(j.last_heartbeat)}",
            f"  domains {j.domain_count}  expected {j.expected_objects} objects, {filesize(j.expected_bytes)}",
        ]
        if j.continues_id:
            lines.append(f"  continues job {j.continues_id}")
        if j.patches_id:
            lines.append(f"  patch crawl of job {j.patches_id} (its missing resources)")
        if j.ended_at is not None:  # the final reports: the last heartbeat came before the end
            totals = j.harvest_infos.aggregate(objects=Sum("objects_count"), bytes=Sum("bytes_count"))
            if totals["objects"] is not None:
                lines.append(f"  harvested: {totals['objects']} objects, {filesize(totals['bytes'])} (final reports)")
        if p:
            label = "progress" if j.ended_at is None else "last heartbeat before the end"
            lines.append(
                f"  {label}: {p.uris_done} URIs done, {p.uris_queued} queued, "
                f"{p.uris_failed} failed, {filesize(p.bytes)}, "
                f"{p.uri_rate:.1f} URI/s, {p.kb_rate:.1f} KB/s"
            )
        c = p.continuous if p else None
        if c:  # a continuous job's live figures (Progress.continuous)
            budget = f"{c['budget_per_s']:g}/s" if c.get("budget_per_s") else "none"
            fresh = f"{c['freshness']:.0%}" if isinstance(c.get("freshness"), int | float) else "-"
            lines.append(
                f"  continuous: {c.get('fetch_rate', 0):.2f} fetches/s (budget {budget}), "
                f"{c.get('visits', 0)} visits: {c.get('changed', 0)} changed, {c.get('unchanged', 0)} "
                f"unchanged ({c.get('header_skipped', 0)} by headers, {c.get('not_modified', 0)} 304), "
                f"{c.get('errors', 0)} errors, {c.get('validator_misses', 0)} validator misses; "
                f"{c.get('warcs_closed', 0)} WARCs closed; freshness {fresh}"
            )
            q = c.get("queues") or {}
            lines.append("  queues: " + ", ".join(f"{q.get(k, 0)} {k}" for k in ("ready", "snoozed", "busy", "empty")))
            for d in (c.get("due_next") or [])[:5]:
                lines.append(
                    f"  due {d.get('at')}: {d.get('uri')} (wait {d.get('wait_s')} s, {d.get('visits')} "
                    f"visits, {d.get('versions')} versions)"
                )
        if j.error_category:
            lines.append(f"  error: {j.error_category}: {j.error_detail}")
        self.stdout.write("\n".join(lines))
        infos = j.harvest_infos.select_related("domain", "configuration").order_by("domain__name")[:200]
        if infos:
            self.stdout.write(
                "\n"
                + render(
                    ["domain", "configuration", "objects", "bytes", "stop reason"],
                    [
                        (i.domain.name, i.configuration.name, i.objects_count, filesize(i.bytes_count), i.stop_reason)
                        for i in infos
                    ],
                )
            )
        files = j.files.order_by("name")
        if files:
            self.stdout.write(
                "\n"
                + render(["file", "size", "index state"], [(f.name, filesize(f.size), f.index_state) for f in files])
            )
        controls = j.controls.all()
        if controls:
            self.stdout.write(
                "\n"
                + render(
                    ["requested (UTC)", "by", "action", "argument", "acknowledged"],
                    [(c.requested_at, c.requested_by, c.action, c.argument, c.acknowledged_at) for c in controls],
                )
            )
        if spec:
            self.stdout.write("\n" + json.dumps(j.spec, indent=2))

    def do_resubmit(self, job: int, **_: object) -> None:
        new = dispatch.resubmit(self._job(job), requested_by=_who())
        self.stdout.write(f"job {job} resubmitted as job {new.pk} ({new.status})")

    def do_reject(self, job: int, **_: object) -> None:
        dispatch.reject(self._job(job), requested_by=_who())
        self.stdout.write(f"job {job} rejected: it will not be resubmitted")

    def _control(self, job: int, action: str, argument: str = "") -> None:
        dispatch.send_control(self._job(job), action, argument, requested_by=_who())
        self.stdout.write(f"sent {action} {argument} to job {job}".replace("  ", " "))

    def do_stop(self, job: int, **_: object) -> None:
        self._control(job, "stop")

    def do_pause(self, job: int, **_: object) -> None:
        self._control(job, "pause")

    def do_resume(self, job: int, **_: object) -> None:
        self._control(job, "resume")

    def do_add_trap(self, job: int, regex: str, **_: object) -> None:
        from harvester.patterns import PatternError, trap

        try:
            regex = trap(regex, "add-trap").pattern
        except PatternError as exc:
            raise CommandError(str(exc)) from None
        self._control(job, "add_trap", regex)

    def do_qa(self, job: int, here: bool, **_: object) -> None:
        run = pageqa.request(self._job(job), requested_by=_who())
        if not here:
            self.stdout.write(f"QA run {run.pk} of job {job} queued for the qa worker (see /jobs/{job}/qa/)")
            return
        done = pageqa.run_pass(run.pk)
        if done is None:
            raise CommandError(f"QA run {run.pk} was taken by a qa worker meanwhile: see /jobs/{job}/qa/")
        if done.status != "DONE":
            raise CommandError(f"QA run {done.pk} failed: {done.error}")
        pages = done.pages.order_by("-missing_count", "url")
        self.stdout.write(
            f"QA run {done.pk} of job {job}: {done.pages_done} page(s), {done.missing_urls} missing "
            "URL(s)\n"
            + render(
                ["page", "missing", "replay", "screenshot sim.", "text sim."],
                [
                    (
                        p.url,
                        p.missing_count,
                        "timed out" if p.timed_out else p.replay_status,
                        _score(p.screenshot_similarity),
                        _score(p.text_similarity),
                    )
                    for p in pages
                ],
            )
        )
        missing = done.missing.order_by("host", "resource_type", "url").values_list("host", "resource_type", "url")
        if missing:
            self.stdout.write("\n" + render(["host", "type", "missing URL"], list(dict.fromkeys(missing))))

    def do_patch(self, job: int, **_: object) -> None:
        new = patch.create_patch_job(self._job(job), requested_by=_who())
        seeds = len(specs.stored(new).seeds)
        self.stdout.write(f"patch job {new.pk} of job {job}: {seeds} URL(s), 0 hops ({new.status})")


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _status(job: Job, progress: Progress | None = None) -> str:
    """The job's status, and "paused" while its crawl is paused (as the web UI's job pages say): a paused job
    is STARTED with 0 URI/s, which read as a stuck one. A job that ended while paused is not "paused"."""
    if job.status != JobStatus.STARTED:
        return job.status
    p = progress or job.latest_progress()
    return f"{job.status} (paused)" if p is not None and p.paused else job.status


def _t(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def _parse_time(text: str) -> datetime:
    from datetime import UTC

    value = parse_datetime(text) or parse_datetime(f"{text}T00:00")
    if value is None:
        raise CommandError(f"{text!r} is not a time; write YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC)")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _who() -> str:
    import getpass

    return f"cli:{getpass.getuser()}"
